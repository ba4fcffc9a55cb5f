package nginx_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
	"github.com/trickle-dev/trickle/relay/sim"
)

// underAI is trickle.conf with the relay moved under /ai/ (nginx strips
// the prefix: proxy_pass to the relay's /) and everything else sent to
// page, the site's own server. The proxy settings (WebSocket upgrade,
// gzip, timeouts) stay trickle.conf's own.
func underAI(t *testing.T, page string) string {
	t.Helper()
	example, err := os.ReadFile("trickle.conf")
	require.NoError(t, err)
	site := string(example)
	for old, new := range map[string]string{
		"location = /v1/ws {\n        proxy_pass http://trickle_relay;": "location = /ai/v1/ws {\n        proxy_pass http://trickle_relay/v1/ws;",
		"location / {\n        proxy_pass http://trickle_relay;":        "location /ai/ {\n        proxy_pass http://trickle_relay/;",
	} {
		require.Equalf(t, 1, strings.Count(site, old), "trickle.conf should contain %q exactly once", old)
		site = strings.Replace(site, old, new, 1)
	}
	// The site's own pages: the last } closes the server block.
	end := strings.LastIndex(site, "}")
	return site[:end] + "    location / {\n        proxy_pass " + page + ";\n        proxy_set_header Host $http_host;\n    }\n}\n"
}

// The widget on a page whose relay nginx serves under /ai/: Stop reaches
// the relay and cancels the generation, a dropped connection resumes to the
// whole answer, over SSE and the WebSocket (through /ai/v1/ws), and no
// request for /v1/ reaches the site's root.
func TestTheWidgetFollowsARelayNginxServesUnderAPrefix(t *testing.T) {
	if _, err := os.Stat("../../assets/widget/trickle.js"); err != nil {
		t.Fatal("assets/widget has no trickle.js: run make widget, then rerun the tests")
	}
	_, rl := relaytest.Start(t, relay.WithWidget(assets.Widget()),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 2 * time.Millisecond, TokenChars: 4}))

	html := `<!doctype html><meta charset=utf-8><title>under /ai/</title>
<script type="module" src="/ai/trickle/trickle.js"></script>
<trickle-answer id="a" endpoint="/ai/v1/chat/completions"></trickle-answer>`
	var mu sync.Mutex
	var strays []string
	pg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, html)
			return
		}
		if strings.Contains(r.URL.Path, "/v1/") { // not the browser's /favicon.ico
			mu.Lock()
			strays = append(strays, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(pg.Close)
	base := startNginxSite(t, strings.TrimPrefix(rl.URL, "http://"), underAI(t, pg.URL))
	noStrays := func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, strays, "no request left the prefix")
	}
	info := func(t *testing.T, id string) relay.Info {
		t.Helper()
		resp, err := http.Get(base + "/ai/v1/streams/" + url.PathEscape(id) + "/info")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var in relay.Info
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
		return in
	}

	browser := browsertest.New(t)
	open := func(t *testing.T) context.Context {
		t.Helper()
		ctx := browsertest.Timeout(t, browsertest.Tab(t, browser), 60*time.Second)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/")))
		require.True(t, browsertest.Eval[bool](t, ctx, `(async () => {
			await customElements.whenDefined("trickle-answer");
			const { ready } = await import("/ai/trickle/trickle.js");
			await ready();
			return true;
		})()`))
		return ctx
	}

	for _, tr := range []string{"sse", "websocket"} {
		t.Run(tr+"/stop", func(t *testing.T) {
			ctx := open(t)
			browsertest.Eval[bool](t, ctx, `(() => {
				const a = document.getElementById("a");
				a.setAttribute("endpoint", "/ai/v1/chat/completions?answer=sample-20k&gap_ms=5");
				a.setAttribute("transport", `+browsertest.JSString(tr)+`);
				window.__p = a.ask("go");
				return true;
			})()`)
			browsertest.WaitFor(t, ctx, 20*time.Second, `document.getElementById("a").text.length >= 200`)
			status := browsertest.Eval[string](t, ctx, `(async () => { document.getElementById("a").stop(); return await window.__p; })()`)
			require.Equal(t, "stopped", status)
			id := browsertest.Eval[string](t, ctx, `document.getElementById("a").streamId`)
			require.NotEmpty(t, id)
			require.Eventually(t, func() bool {
				in := info(t, id)
				return in.UpstreamCancelled && in.State == relay.StateStopped && in.Readers == 0
			}, 5*time.Second, 50*time.Millisecond, "the relay behind /ai/ stopped the generation: %+v", info(t, id))
			noStrays(t)
		})
		t.Run(tr+"/resume", func(t *testing.T) {
			ctx := open(t)
			got := browsertest.Eval[[]any](t, ctx, `(async () => {
				const a = document.getElementById("a");
				a.setAttribute("endpoint", "/ai/v1/chat/completions?answer=short&drop_after=25");
				a.setAttribute("transport", `+browsertest.JSString(tr)+`);
				const status = await a.ask("drop me");
				return [status, a.text, a.metrics.reconnects, a.streamId];
			})()`)
			want, ok := sim.Lookup("short")
			require.True(t, ok)
			require.Equal(t, "complete", got[0])
			require.Equal(t, want.Text, got[1], "nothing lost, nothing twice")
			require.GreaterOrEqual(t, got[2], float64(1), "the connection was resumed")
			require.Equal(t, got[3], info(t, got[3].(string)).ID)
			noStrays(t)
		})
	}
}
