//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
)

// mounted is a relay served under /ai/ by http.StripPrefix in a mux of the
// test's own, and a page that embeds the widget from there.
type mounted struct {
	page  string // the page's URL
	relay string // the relay's base URL, /ai included
	stray *strays
	seen  *strays // what reached the relay under /ai/ (its path after the prefix)
}

// strays counts the requests for /v1/... that reached a root handler
// instead of the relay under /ai/: a widget that dropped the prefix.
type strays struct {
	mu    sync.Mutex
	paths []string
}

func (s *strays) handler(page string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && page != "" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, page)
			return
		}
		if strings.Contains(r.URL.Path, "/v1/") { // not the browser's /favicon.ico
			s.mu.Lock()
			s.paths = append(s.paths, r.Method+" "+r.URL.Path)
			s.mu.Unlock()
		}
		http.NotFound(w, r)
	}
}

// record keeps every request for /v1/... that reaches h: its method, its
// path, and "upgrade" when it asks for a WebSocket. It leaves the writer
// as it is (the WebSocket hijacks it).
func (s *strays) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			what := r.Method + " " + r.URL.Path
			if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				what += " upgrade"
			}
			s.mu.Lock()
			s.paths = append(s.paths, what)
			s.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

// has reports whether a recorded request is exactly what.
func (s *strays) has(what string) bool {
	return slices.Contains(s.list(), what)
}

func (s *strays) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// mountedPage is the suite's test page with the widget loaded from base
// (the relay's URL, /ai included) and the element's endpoint set.
func mountedPage(base, endpoint string) string {
	html := strings.Replace(pageHTML(), `src="/trickle/trickle.js"`, `src="`+base+`/trickle/trickle.js"`, 1)
	return strings.Replace(html, `<trickle-answer id="a"`, `<trickle-answer id="a" endpoint="`+endpoint+`"`, 1)
}

// mount serves the relay under /ai/ of a new mux. With crossOrigin the page
// lives on another origin (which the relay allows) and names the relay by
// its absolute URL; otherwise the same mux serves the page at /.
func mount(t *testing.T, crossOrigin bool) mounted {
	t.Helper()
	var opts []relay.Option
	var pg *httptest.Server
	if crossOrigin {
		pg = httptest.NewServer(nil)
		t.Cleanup(pg.Close)
		opts = append(opts, relay.WithAllowedOrigins(pg.URL))
	}
	srv, err := relay.New(append([]relay.Option{
		relay.WithWidget(assets.Widget()),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 2 * time.Millisecond, TokenChars: 4}),
	}, opts...)...)
	require.NoError(t, err)
	st, seen := &strays{}, &strays{}
	mux := http.NewServeMux()
	mux.Handle("/ai/", http.StripPrefix("/ai", seen.record(srv.Handler())))
	ts := httptest.NewUnstartedServer(mux)
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	base := ts.URL + "/ai"
	m := mounted{relay: base, stray: st, seen: seen}
	if crossOrigin {
		mux.HandleFunc("/", st.handler(""))
		pg.Config.Handler = st.handler(mountedPage(base, base+"/v1/chat/completions"))
		m.page = pg.URL + "/"
	} else {
		mux.HandleFunc("/", st.handler(mountedPage("/ai", "/ai/v1/chat/completions")))
		m.page = ts.URL + "/"
	}
	return m
}

// open navigates a new tab to the mounted page and waits for the widget.
func (m mounted) open(t *testing.T) context.Context {
	t.Helper()
	ctx := browserTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(m.page)))
	widgetReady(t, ctx, browsertest.JSString(m.relay+"/trickle/trickle.js"))
	return ctx
}

func (m mounted) info(t *testing.T, id string) relay.Info {
	t.Helper()
	resp, err := http.Get(m.relay + "/v1/streams/" + url.PathEscape(id) + "/info")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the stream's info under /ai/")
	var in relay.Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
	return in
}

// The widget follows a relay mounted under /ai/ (http.StripPrefix), on the
// page's own origin and on another: Stop reaches the relay and cancels the
// generation, a dropped connection resumes to the full answer, over SSE
// and over the WebSocket, and nothing ever asks the root for /v1/.
func TestTheWidgetFollowsARelayMountedUnderAPrefix(t *testing.T) {
	for _, origin := range []struct {
		name  string
		cross bool
	}{{"same origin", false}, {"another origin", true}} {
		t.Run(origin.name, func(t *testing.T) {
			m := mount(t, origin.cross)
			endpoint := "/ai/v1/chat/completions"
			if origin.cross {
				endpoint = m.relay + "/v1/chat/completions"
			}
			for _, tr := range transports {
				t.Run(tr+"/stop", func(t *testing.T) {
					ctx := m.open(t)
					start(t, ctx, map[string]string{
						"endpoint":  endpoint + "?answer=sample-20k&gap_ms=5",
						"transport": tr,
					}, 200)
					id := stopAnswer(t, ctx)
					require.Eventually(t, func() bool {
						in := m.info(t, id)
						return in.UpstreamCancelled && in.State == relay.StateStopped && in.Readers == 0
					}, 5*time.Second, 50*time.Millisecond, "the relay under /ai/ stopped the generation: %+v", m.info(t, id))
					if tr == "sse" {
						require.True(t, m.seen.has("DELETE /v1/streams/"+id), "the DELETE came to /ai/v1/streams/{id}: %q", m.seen.list())
					} else {
						require.True(t, m.seen.has("GET /v1/ws upgrade"), "the WebSocket came to /ai/v1/ws: %q", m.seen.list())
					}
					require.Empty(t, m.stray.list(), "no request left the prefix")
				})
				t.Run(tr+"/resume", func(t *testing.T) {
					ctx := m.open(t)
					r := ask(t, ctx, map[string]string{
						"endpoint":  endpoint + "?answer=short&drop_after=25",
						"transport": tr,
					}, "drop me")
					require.Equal(t, "complete", r.Status, "notice: %s", r.Notice)
					require.Equal(t, canned(t, "short").Text, r.Text, "nothing lost, nothing twice")
					var mt Metrics
					raw, _ := json.Marshal(r.Metrics)
					require.NoError(t, json.Unmarshal(raw, &mt))
					require.GreaterOrEqual(t, mt.Reconnects, 1, "the connection was resumed")
					require.Equal(t, r.StreamID, m.info(t, r.StreamID).ID, "the stream lives under /ai/")
					// The resume's path, not its Last-Event-ID: the id is the
					// last event the widget read, and a page's thread that is
					// busy when the connection breaks may have read none.
					// Chromium then drops the body's unread bytes with the
					// error (erroring a ReadableStream empties its queue), so
					// the resume rightly asks for the stream from its start
					// (the relay logs after=0). It happens with worker="off"
					// on a loaded machine, when Go on the page's thread holds
					// it past the relay's dropLinger.
					if tr == "sse" {
						require.True(t, m.seen.has("GET /v1/streams/"+r.StreamID), "the resume came to /ai/v1/streams/{id}: %q", m.seen.list())
					} else {
						require.True(t, m.seen.has("GET /v1/ws upgrade"), "the WebSocket came to /ai/v1/ws: %q", m.seen.list())
					}
					require.Empty(t, m.stray.list(), "no request left the prefix")
				})
				// A Stop after a resume: the resume's response names the
				// stream relative to its own path ("ID" on GET
				// /v1/streams/ID), and the DELETE must still come to
				// /ai/v1/streams/{id} (it went to /ai/v1/chat/{id}, 404,
				// and the model ran on).
				t.Run(tr+"/resume-then-stop", func(t *testing.T) {
					ctx := m.open(t)
					start(t, ctx, map[string]string{
						"endpoint":  endpoint + "?answer=sample-20k&gap_ms=5&drop_after=25",
						"transport": tr,
					}, 0)
					browsertest.WaitFor(t, ctx, 20*time.Second, `(() => { const a = document.getElementById("a"); return (a.metrics?.reconnects ?? 0) >= 1 && a.text.length > 200; })()`)
					id := stopAnswer(t, ctx)
					require.Eventually(t, func() bool {
						in := m.info(t, id)
						return in.UpstreamCancelled && in.State == relay.StateStopped
					}, 5*time.Second, 50*time.Millisecond, "the relay under /ai/ stopped the resumed generation: %+v", m.info(t, id))
					if tr == "sse" {
						require.True(t, m.seen.has("GET /v1/streams/"+id), "the resume came to /ai/v1/streams/{id}: %q", m.seen.list())
						require.True(t, m.seen.has("DELETE /v1/streams/"+id), "the DELETE came to /ai/v1/streams/{id}: %q", m.seen.list())
					}
					require.Empty(t, m.stray.list(), "no request left the prefix")
				})
			}
		})
	}
}
