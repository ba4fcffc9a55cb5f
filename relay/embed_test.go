package relay_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// Without the widget or the pages the relay is its API: / and the static
// paths are JSON 404s, not a redirect that takes over a site's home page.
func TestARelayWithoutWidgetOrPagesServesOnlyTheAPI(t *testing.T) {
	srv, base := start(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/", "/examples/", "/examples", "/examples/compare", "/trickle/trickle.js"} {
		resp, err := noRedirect.Get(base + p)
		require.NoError(t, err)
		var e struct {
			Error struct{ Message, Type string }
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e), p)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, p)
		require.Empty(t, resp.Header.Get("Location"), p)
		require.Equal(t, "relay: no route for GET "+p, e.Error.Message)
	}
	for _, r := range srv.Routes() {
		require.NotEqual(t, "/", r.Path)
		require.NotContains(t, r.Path, "/examples")
		require.NotContains(t, r.Path, "/trickle")
	}
	resp := post(t, base+"/v1/chat/completions?answer=short", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the API is there")
	io.Copy(io.Discard, resp.Body)
}

// The widget alone serves /trickle/ and still leaves / alone; the pages
// bring /examples/ and the redirect of / to them.
func TestTheWidgetAndThePagesEachBringTheirOwnPaths(t *testing.T) {
	widget := fstest.MapFS{"trickle.js": {Data: []byte("console.log(1)")}}
	pages := fstest.MapFS{"index.html": {Data: []byte("<h1>examples</h1>")}}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	status := func(base, p string) (int, string) {
		resp, err := noRedirect.Get(base + p)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}

	_, base := start(t, relay.WithWidget(widget))
	code, _ := status(base, "/trickle/trickle.js")
	require.Equal(t, http.StatusOK, code)
	code, loc := status(base, "/")
	require.Equal(t, http.StatusNotFound, code, "the widget alone does not take /")
	require.Empty(t, loc)

	_, base = start(t, relay.WithMissingWidget("run make build"))
	code, _ = status(base, "/trickle/trickle.js")
	require.Equal(t, http.StatusServiceUnavailable, code, "a relay meant to serve the widget says it has none")

	_, base = start(t, relay.WithPages(pages))
	code, loc = status(base, "/")
	require.Equal(t, http.StatusFound, code)
	require.Equal(t, "/examples/", loc)
	code, _ = status(base, "/examples/")
	require.Equal(t, http.StatusOK, code)
}

// The stream's address the relay gives, resolved against the URL the
// client asked, reaches the stream under http.StripPrefix: resume, info
// and Stop there work, and Stop cancels the generation.
func TestTheStreamURLHeaderNamesTheStreamUnderAPrefix(t *testing.T) {
	srv, err := relay.New(relay.WithSimDefaults(fast), relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/ai/", http.StripPrefix("/ai", srv.Handler()))
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	resp, cancel := openSSE(t, http.MethodPost, site.URL+"/ai/v1/chat/completions?answer=sample-100k&gap_ms=20", hello, "")
	defer cancel()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id := resp.Header.Get("X-Trickle-Stream")
	require.Equal(t, "../streams/"+id, resp.Header.Get("X-Trickle-Stream-URL"))
	ref, err := url.Parse(resp.Header.Get("X-Trickle-Stream-URL"))
	require.NoError(t, err)
	stream := resp.Request.URL.ResolveReference(ref).String()
	require.Equal(t, site.URL+"/ai/v1/streams/"+id, stream)

	require.Equal(t, http.StatusOK, get(t, stream+"/info").StatusCode)
	require.Equal(t, http.StatusOK, del(t, stream).StatusCode)
	in := info(t, site.URL+"/ai", id)
	require.Equal(t, relay.StateStopped, in.State)
	require.True(t, in.UpstreamCancelled, "Stop reached the generation")
}
