//go:build !(js && wasm)

package engines_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

// engineTimeout bounds one engine's whole run: start, page, both answers,
// shutdown. The answers themselves take about 3 s; the rest is room for
// a slow start on a loaded machine.
const engineTimeout = 3 * time.Minute

// answer is the canned answer the smoke asks for: 20 KB of headings,
// lists, tables, code and quotes, so that every kind of frame patch is
// applied by the engine under test.
const answer = "sample-20k"

// driver is one engine under automation: it opens a URL in its only tab
// and evaluates JavaScript expressions there, returning their string value.
type driver interface {
	navigate(ctx context.Context, url string) error
	eval(ctx context.Context, expr string) (string, error)
}

// engines are the engines the smoke runs in, each with what it needs
// installed (Debian's packages name, for the message when it is missing).
var engines = []struct {
	name    string
	debian  string
	start   func(t *testing.T, ctx context.Context) driver
	missing func() error // nil when the engine can run here
}{
	{name: "firefox", debian: "firefox-esr", start: startFirefox, missing: firefoxMissing},
	{name: "webkitgtk", debian: "webkit2gtk-driver xvfb dbus-daemon", start: startWebKit, missing: webkitMissing},
}

// smoke is what the page leaves in window.smoke (as JSON) once both
// answers have ended, or when something threw.
type smoke struct {
	Error   string `json:"error"`
	Results []struct {
		Transport string `json:"transport"`
		Status    string `json:"status"`
		Text      string `json:"text"`
		HTML      string `json:"html"`
		Want      string `json:"want"`
		Thread    string `json:"thread"`
		Frames    int    `json:"frames"`
	} `json:"results"`
	UserAgent string `json:"userAgent"`
	Status    string `json:"status"` // each element's status and length at the end
}

// modes are the two ways the widget runs: by default its Go side is in a
// Web Worker; worker="off" keeps it on the page's thread. metrics.thread
// says which.
var modes = []struct {
	attr   string // the elements' worker attribute
	thread string // what metrics.thread must say
}{
	{attr: "", thread: "worker"},
	{attr: "off", thread: "main"},
}

// In each engine, from a page on another origin than the relay, as the
// README's snippet does, in worker mode and with worker="off": an answer
// over SSE, then one over WebSocket; each completes on the expected
// thread, its text is the canned answer's and its HTML the one-shot render
// of that text.
func TestTheWidgetAnswersOverSSEAndWebSocketInEveryEngine(t *testing.T) {
	if _, err := fs.Stat(assets.Widget(), "trickle.js"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the widget is not built into assets/widget (make build runs before the tests)")
		}
		t.Skip("the widget is not built: run make build first")
	}
	want, ok := sim.Lookup(answer)
	require.True(t, ok)
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			if err := e.missing(); err != nil {
				if strings.EqualFold(os.Getenv("CI"), "true") {
					t.Fatalf("%v (Debian: %s); CI=true, so the cross-engine smoke must run", err, e.debian)
				}
				t.Skipf("skipping %s: %v (Debian: %s)", e.name, err, e.debian)
			}
			pageURL := serve(t)
			ctx, cancel := context.WithTimeout(context.Background(), engineTimeout)
			defer cancel()
			d := e.start(t, ctx)
			for _, m := range modes {
				require.NoError(t, d.navigate(ctx, pageURL+"?worker="+m.attr))
				raw := poll(t, ctx, d, `window.smoke || ""`)
				var got smoke
				require.NoError(t, json.Unmarshal([]byte(raw), &got), raw)
				t.Logf("%s, worker=%q: %s", e.name, m.attr, got.UserAgent)
				require.Empty(t, got.Error, "the page threw; the elements: %s", got.Status)
				require.Len(t, got.Results, 2)
				for i, transport := range []string{"sse", "websocket"} {
					r := got.Results[i]
					what := fmt.Sprintf("%s, worker=%q, over %s", e.name, m.attr, transport)
					require.Equal(t, transport, r.Transport)
					require.Equal(t, "complete", r.Status, what)
					require.Equal(t, m.thread, r.Thread, "%s: metrics.thread", what)
					same(t, want.Text, r.Text, "%s: the streamed text is the canned answer", what)
					same(t, r.Want, r.HTML, "%s: the streamed DOM equals the one-shot render, parsed by the same engine", what)
					require.Greater(t, r.Frames, 1, "%s: the answer was painted in frames", what)
				}
			}
			if e.name == "firefox" {
				selectionSurvives(t, ctx, d, pageURL)
			}
		})
	}
}

// same fails t where got differs from want, showing where (the texts are
// 20 KB: the whole of both says less than the first difference).
func same(t *testing.T, want, got string, msg string, args ...any) {
	t.Helper()
	if want == got {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-80)
	t.Fatalf("%s: differs at byte %d of %d (got %d bytes)\nwant …%q…\ngot  …%q…", fmt.Sprintf(msg, args...), i, len(want), len(got),
		want[from:min(len(want), i+80)], got[from:min(len(got), i+80)])
}

// poll evaluates expr every 200 ms until it is a non-empty string.
func poll(t *testing.T, ctx context.Context, d driver, expr string) string {
	t.Helper()
	for {
		v, err := d.eval(ctx, expr)
		require.NoError(t, err, "evaluating %s", expr)
		if v != "" {
			return v
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the page did not finish within %v", engineTimeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// serve starts a relay (the built widget, the simulated model, the page's
// origin allowed) and a page on another origin that loads the widget from
// the relay, asks over SSE and then over WebSocket, and leaves what it saw
// in window.smoke. It returns the page's URL; both stop when the test ends.
func serve(t *testing.T) string {
	t.Helper()
	page := httptest.NewServer(nil) // its handler is set once the relay's address is known
	t.Cleanup(page.Close)
	_, rl := relaytest.Start(t, relay.WithWidget(assets.Widget()), relay.WithAllowedOrigins(page.URL),
		// 5 ms a token: the 20 KB answer streams for about 6 s, so even a
		// starved engine (software rendering on a loaded machine) paints it
		// in several frames; at 2 ms two of three loaded runs painted once.
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 5 * time.Millisecond, TokenChars: 16}))
	require.NotEqual(t, page.URL, rl.URL)
	a, _ := sim.Lookup(answer)
	// The widget's link and image policy takes the page's origin as its own.
	want, err := render.Convert(a.Text, element.RenderOptions(render.Policy{SameOrigin: page.URL})...)
	require.NoError(t, err)
	page.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/selection" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, strings.ReplaceAll(selectionPage, "RELAY", rl.URL))
			return
		}
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		attr := ""
		if v := r.URL.Query().Get("worker"); v != "" {
			attr = ` worker="` + v + `"`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, strings.NewReplacer("RELAY", rl.URL, "ANSWER", answer, "WANT", browsertest.JSString(want), "WORKER", attr).Replace(smokePage))
	})
	return page.URL + "/"
}

// smokePage is the page of another origin. RELAY, ANSWER, WANT (the
// one-shot render, a JS string) and WORKER (the worker attribute) are
// replaced by serve. The expected HTML is
// parsed and serialized by the engine itself, so that its serializer's
// choices (quotes, entities, <br>) are the same on both sides.
const smokePage = `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>cross-engine smoke</title>
<script type="module" src="RELAY/trickle/trickle.js"></script>
<trickle-answer id="sse"WORKER endpoint="RELAY/v1/chat/completions?answer=ANSWER"></trickle-answer>
<trickle-answer id="websocket"WORKER transport="websocket" endpoint="RELAY/v1/chat/completions?answer=ANSWER"></trickle-answer>
<script type="module">
const out = { results: [], userAgent: navigator.userAgent };
const errors = [];
addEventListener("error", (e) => errors.push(String(e.message)));
addEventListener("unhandledrejection", (e) => errors.push(String(e.reason?.stack ?? e.reason)));
// The answer's blocks without the toolbars added beside code blocks and tables.
const withoutToolbars = (content) => {
  const c = content.cloneNode(true);
  for (const b of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) b.remove();
  for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
  return c.innerHTML;
};
const within = (p, ms, what) => Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error(what + " did not end within " + ms + " ms")), ms))]);
try {
  await within(customElements.whenDefined("trickle-answer"), 60000, "defining <trickle-answer>");
  for (const transport of ["sse", "websocket"]) {
    const el = document.getElementById(transport);
    const status = await within(el.ask("smoke"), 60000, "the answer over " + transport);
    const t = document.createElement("template");
    t.innerHTML = WANT;
    const m = el.metrics ?? {};
    out.results.push({
      transport, status, text: el.text, thread: m.thread ?? "", frames: m.frames ?? 0,
      html: withoutToolbars(el.querySelector('[data-trickle="content"]')), want: t.innerHTML,
    });
  }
} catch (err) {
  // WebKit's stack has no message line: give both.
  errors.push(String(err) + "\n" + (err?.stack ?? ""));
}
out.status = [...document.querySelectorAll("trickle-answer")].map((el) => el.id + ": " + el.status + ", " + el.text.length + " chars").join("; ");
out.error = errors.join("\n");
window.smoke = JSON.stringify(out);
</script>
</html>
`

// selectionPage is a page of another origin with one element and
// browsertest.SelectionScript; RELAY is replaced by serve.
const selectionPage = `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>selection</title>
<script type="module" src="RELAY/trickle/trickle.js"></script>
<script>` + browsertest.SelectionScript + `</script>
<trickle-answer id="a"></trickle-answer>
</html>
`

// selectionSurvives runs browsertest.SelectionScript in the engine: a
// selection made while the answer streams, in a settled block, in the
// growing paragraph and across the two, holds its text 2 s later, after
// its paragraph settles and after the end (wasm/e2e runs it in Chromium).
func selectionSurvives(t *testing.T, ctx context.Context, d driver, pageURL string) {
	t.Helper()
	require.NoError(t, d.navigate(ctx, pageURL+"selection"))
	poll(t, ctx, d, `customElements.get("trickle-answer") ? "defined" : ""`)
	for _, where := range browsertest.SelectionCases {
		raw, err := d.eval(ctx, `(async () => { const { ready } = await import(document.querySelector("script[type=module]").src); await ready();
			return trickleSelection(document.getElementById("a"), "`+where+`", new URL(`+browsertest.JSString(browsertest.SelectionEndpoint)+`, document.querySelector("script[type=module]").src).href); })()`)
		require.NoError(t, err, where)
		var r browsertest.SelectionResult
		require.NoError(t, json.Unmarshal([]byte(raw), &r), raw)
		require.NoError(t, r.Err())
	}
}

// process is a child process started in its own process group, so that
// stopping it also stops what it spawned (content processes, the browser
// a WebDriver server launched).
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	tail []string // the last lines of its output, for failure messages
}

// start starts name with args in a new process group; output lines go to
// onLine (may be nil) and to the kept tail. The group is stopped when the
// test ends: SIGTERM, then SIGKILL after 5 s.
func start(t *testing.T, onLine func(string), name string, args []string, env []string, extra ...*os.File) *process {
	t.Helper()
	p := &process{cmd: exec.Command(name, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.ExtraFiles = extra
	r, w, err := os.Pipe()
	require.NoError(t, err)
	p.cmd.Stdout, p.cmd.Stderr = w, w
	require.NoError(t, p.cmd.Start(), "starting %s", name)
	w.Close()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.tail = append(p.tail, line)
			if len(p.tail) > 30 {
				p.tail = p.tail[1:]
			}
			p.mu.Unlock()
			if onLine != nil {
				onLine(line)
			}
		}
		r.Close()
	}()
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	pgid := p.cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
		// Whatever of the group is still there (a child that outlived its
		// parent, or the parent itself) goes now.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("%s's last output:\n%s", name, p.output())
		}
	})
	return p
}

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.tail, "\n")
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lookPath finds the first of names on PATH.
func lookPath(names ...string) (string, error) {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %s on PATH", strings.Join(names, ", "))
}
