//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
)

// When the connection breaks while the page's thread is busy, Chromium
// drops the bytes of the body nobody read yet together with the error
// (erroring a ReadableStream empties its queue): with worker="off", where
// Go reads the body on the page's thread, the widget may not have read one
// event the relay sent. It then resumes asking for the stream from its
// start (no Last-Event-ID; the relay logs after=0), and the answer is
// still whole, nothing twice. The page's own fetch, which the widget calls
// on the page's thread, holds the thread for a second once the response
// has come, so that the relay's drop (drop_after) lands while it is busy.
func TestAResumeAfterTheBrowserDroppedTheUnreadBodyReplaysTheWholeAnswer(t *testing.T) {
	srv, err := relay.New(
		relay.WithWidget(assets.Widget()),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 2 * time.Millisecond, TokenChars: 4}),
	)
	require.NoError(t, err)
	var mu sync.Mutex
	var resumes []string // the Last-Event-ID of each GET /v1/streams/{id}
	mux := http.NewServeMux()
	html := pageHTML()
	if thread != "main" {
		html = strings.Replace(html, `<trickle-answer id="a"`, `<trickle-answer id="a" worker="off"`, 1)
	}
	mux.HandleFunc("/e2e", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, html)
	})
	api := srv.Handler()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/streams/") {
			mu.Lock()
			resumes = append(resumes, r.Header.Get("Last-Event-ID"))
			mu.Unlock()
		}
		api.ServeHTTP(w, r)
	}))
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})

	ctx := tabAt(t, ts.URL)
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => {
		const fetch = window.fetch;
		let held = false;
		window.fetch = async (...args) => {
			const res = await fetch(...args);
			if (!held) { held = true; const until = performance.now() + 1000; while (performance.now() < until) {} }
			return res;
		};
		return true;
	})()`))
	status := browsertest.Eval[string](t, ctx, `document.getElementById("a").setAttribute("endpoint", "/v1/chat/completions?answer=short&drop_after=25"),
		document.getElementById("a").ask("drop me")`)
	r := waitAnnouncer(t, ctx)
	require.Equal(t, status, r.Status)
	require.Equal(t, "main", r.Metrics["thread"], "Go reads the body on the page's thread")
	require.Equal(t, "complete", r.Status, "notice: %s", r.Notice)
	require.Equal(t, canned(t, "short").Text, r.Text, "nothing lost, nothing twice")
	var mt Metrics
	raw, _ := json.Marshal(r.Metrics)
	require.NoError(t, json.Unmarshal(raw, &mt))
	require.Equal(t, 1, mt.Reconnects, "one resume")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{""}, resumes, "the widget read none of the first connection's events (the browser dropped them): it resumed from the start")
}
