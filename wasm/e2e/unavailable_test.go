//go:build !(js && wasm)

package e2e_test

import (
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
)

// noWasm is the widget without its .wasm files: what a deploy that
// forgot them serves (404).
type noWasm struct{ fs.FS }

func (f noWasm) Open(name string) (fs.File, error) {
	if strings.HasSuffix(name, ".wasm") {
		return nil, fs.ErrNotExist
	}
	return f.FS.Open(name)
}

// unavailablePage is a page with one answer and one chat, whose events
// are recorded; its scripts carry the nonce its CSP allows.
const unavailablePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>trickle cannot start</title>
<script nonce="e2e">
window.__events = [];
for (const name of ["trickle-error", "trickle-chat-change"]) {
  document.addEventListener(name, (ev) => window.__events.push({ type: ev.type, detail: ev.detail }));
}
</script>
<script nonce="e2e" type="module" src="__RELAY__/trickle/trickle.js"></script>
</head><body>
<trickle-answer id="a" endpoint="__RELAY__/v1/chat/completions?answer=short"></trickle-answer>
<trickle-chat id="chat" endpoint="__RELAY__/v1/chat/completions?answer=short"></trickle-chat>
</body></html>`

// serveUnavailable serves the relay (its widget from widget) and, on
// another origin, the page at /page under the Content-Security-Policy csp
// ("" for none; __RELAY__ in it is the relay's origin). It returns the
// page's URL.
func serveUnavailable(t *testing.T, widget fs.FS, csp string) string {
	pages := httptest.NewServer(nil)
	t.Cleanup(pages.Close)
	srv, err := relay.New(relay.WithWidget(widget), relay.WithAllowedOrigins(pages.URL), relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	rs := httptest.NewServer(srv.Handler())
	t.Cleanup(rs.Close)
	pages.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if csp != "" {
			w.Header().Set("Content-Security-Policy", strings.ReplaceAll(csp, "__RELAY__", rs.URL))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, strings.ReplaceAll(unavailablePage, "__RELAY__", rs.URL))
	})
	return pages.URL + "/page"
}

// A widget that cannot start says so: ask() resolves failed, trickle-error
// fires with a detail that names what the page must change (the CSP
// directive, the file that is missing), the reader sees and hears one
// sentence, and in a chat the turn shows it and trickle-chat-change fires.
func TestAWidgetThatCannotStartSaysSo(t *testing.T) {
	for _, c := range []struct {
		name   string
		widget fs.FS
		csp    string
		detail []string // in trickle-error's detail
	}{
		{"a CSP without wasm-unsafe-eval", assets.Widget(), "default-src 'self'; script-src 'self' 'nonce-e2e' __RELAY__; worker-src blob:; connect-src __RELAY__", []string{"'wasm-unsafe-eval'", "script-src refused wasm-eval"}},
		{"a CSP that refuses the worker and WebAssembly", assets.Widget(), "default-src 'self'; script-src 'self' 'nonce-e2e' __RELAY__; worker-src 'none'; connect-src __RELAY__", []string{"'wasm-unsafe-eval'", "Web Worker", "worker-src refused"}},
		{"the wasm not found", noWasm{assets.Widget()}, "", []string{"/trickle/trickle.", ".wasm", "404"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			page := serveUnavailable(t, c.widget, c.csp)
			ctx := browserTab(t)
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page)))
			browsertest.WaitFor(t, ctx, 20*time.Second, `!!customElements.get("trickle-answer") && !!customElements.get("trickle-chat")`)
			status := browsertest.Eval[string](t, ctx, `document.getElementById("a").ask("hello")`)
			require.Equal(t, "failed", status)
			type errDetail struct{ Status, Message, Reason, Detail string }
			errs := browsertest.Eval[[]errDetail](t, ctx, `window.__events.filter((e) => e.type === "trickle-error" && e.detail).map((e) => e.detail)`)
			require.Len(t, errs, 1)
			t.Logf("detail: %s", errs[0].Detail)
			require.Equal(t, "failed", errs[0].Status)
			require.Equal(t, "unavailable", errs[0].Reason)
			require.Equal(t, "The answer cannot be shown on this page.", errs[0].Message)
			for _, d := range c.detail {
				require.Contains(t, errs[0].Detail, d)
			}
			seen := browsertest.Eval[map[string]any](t, ctx, `(() => {
				const a = document.getElementById("a");
				const part = (p) => a.querySelector('[data-trickle="' + p + '"]');
				return { notice: part("notice-text").textContent, shown: !part("notice").hidden, heard: part("sr-status").textContent, status: a.status };
			})()`)
			require.Equal(t, map[string]any{"notice": errs[0].Message, "shown": true, "heard": "Answer failed. " + errs[0].Message, "status": "failed"}, seen)

			browsertest.Eval[bool](t, ctx, `(document.getElementById("chat").send("hello"), true)`)
			browsertest.WaitFor(t, ctx, 20*time.Second, `window.__events.some((e) => e.type === "trickle-chat-change")`)
			turn := browsertest.Eval[string](t, ctx, `document.querySelector('#chat [data-trickle-chat="turn"][data-role="assistant"] [data-trickle="notice-text"]').textContent`)
			require.Equal(t, errs[0].Message, turn, "the chat's turn shows why")
		})
	}
}
