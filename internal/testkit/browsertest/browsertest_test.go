package browsertest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

func TestFindHonoursTheEnvironmentVariable(t *testing.T) {
	t.Setenv("TRICKLE_CHROMIUM", "/nonexistent/chromium-for-test")
	_, err := browsertest.Find()
	require.Error(t, err)
	require.Contains(t, err.Error(), "TRICKLE_CHROMIUM")
}

func TestABrowserLoadsAPageAndRunsScript(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>hello</title><p id=p>0</p><script>document.getElementById('p').textContent = String(6*7)</script>`)
	}))
	defer srv.Close()

	ctx := browsertest.New(t)
	tctx := browsertest.Timeout(t, ctx, 30*time.Second)
	require.NoError(t, chromedp.Do(tctx, chromedp.Navigate(srv.URL)))
	text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById('p').textContent`))
	require.NoError(t, err)
	require.Equal(t, "42", text)
	ua, err := chromedp.Run(tctx, chromedp.Evaluate[string](`navigator.userAgent`))
	require.NoError(t, err)
	require.Contains(t, ua, "Headless")
}

func TestTabsShareOneBrowserButNotTheirPages(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>%s</title>`, r.URL.Query().Get("t"))
	}))
	defer srv.Close()

	browser := browsertest.New(t)
	a := browsertest.Timeout(t, browsertest.Tab(t, browser), 30*time.Second)
	b := browsertest.Timeout(t, browsertest.Tab(t, browser), 30*time.Second)
	require.NoError(t, chromedp.Do(a, chromedp.Navigate(srv.URL+"/?t=one")))
	require.NoError(t, chromedp.Do(b, chromedp.Navigate(srv.URL+"/?t=two")))
	ta, err := chromedp.Run(a, chromedp.Title())
	require.NoError(t, err)
	tb, err := chromedp.Run(b, chromedp.Title())
	require.NoError(t, err)
	require.Equal(t, []string{"one", "two"}, []string{ta, tb})
}

// recorder stands in for *testing.T to see what Available does without
// ending the real test; only the methods Available calls are implemented.
type recorder struct {
	testing.TB
	calls []string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(f string, a ...any) {
	r.calls = append(r.calls, "fatal: "+fmt.Sprintf(f, a...))
}
func (r *recorder) Skipf(f string, a ...any) {
	r.calls = append(r.calls, "skip: "+fmt.Sprintf(f, a...))
}

func TestWithoutChromiumATestIsSkippedButFailsInCI(t *testing.T) {
	t.Setenv("TRICKLE_CHROMIUM", "/nonexistent/chromium-for-test")

	t.Setenv("CI", "")
	r := &recorder{}
	browsertest.Available(r)
	require.Len(t, r.calls, 1)
	require.Contains(t, r.calls[0], "skip: ")

	t.Setenv("CI", "true")
	r = &recorder{}
	browsertest.Available(r)
	require.Len(t, r.calls, 1)
	require.Contains(t, r.calls[0], "fatal: ")
	require.Contains(t, r.calls[0], "CI=true")
}

func TestEvalAwaitsPromisesAndJSStringQuotesAnyText(t *testing.T) {
	ctx := browsertest.Timeout(t, browsertest.New(t), 30*time.Second)
	require.Equal(t, 42, browsertest.Eval[int](t, ctx, `new Promise((done) => setTimeout(() => done(6 * 7), 10))`))
	for _, s := range []string{"", `a "quoted" \ back`, "line\nbreak\u2028sep\u2029</script>", "ünïcødé 🙂"} {
		require.Equal(t, s, browsertest.Eval[string](t, ctx, browsertest.JSString(s)), "the literal reads back as the string")
	}
}

func TestWaitForReturnsOnceTheExpressionHolds(t *testing.T) {
	ctx := browsertest.Timeout(t, browsertest.New(t), 30*time.Second)
	browsertest.Eval[bool](t, ctx, `(() => { window.__n = 0; window.__timer = setInterval(() => window.__n++, 5); return true; })()`)
	browsertest.WaitFor(t, ctx, 10*time.Second, `window.__n >= 3`)
	require.GreaterOrEqual(t, browsertest.Eval[int](t, ctx, `window.__n`), 3)
}
