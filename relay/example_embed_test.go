package relay_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/relay"
)

// The relay's API mounted under /ai/ in a site's own mux, beside the
// site's home page: http.StripPrefix hands the relay its own paths, and the
// stream's address (X-Trickle-Stream-URL, relative to the request) lands
// under /ai/ too, which is where the widget sends Stop and resume.
func ExampleServer_Handler_mountedUnderAPrefix() {
	srv, err := relay.New(
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: time.Millisecond, Gap: time.Millisecond, TokenChars: 16}),
	)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ai/", http.StripPrefix("/ai", srv.Handler()))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "the site's home page") })
	site := httptest.NewServer(mux)
	defer site.Close()

	endpoint := site.URL + "/ai/v1/chat/completions?answer=short"
	resp, err := http.Post(endpoint, "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		panic(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	ref, _ := url.Parse(resp.Header.Get("X-Trickle-Stream-URL"))
	stream := resp.Request.URL.ResolveReference(ref)
	fmt.Println(strings.TrimSuffix(stream.Path, resp.Header.Get("X-Trickle-Stream")))

	info, err := http.Get(stream.String() + "/info")
	if err != nil {
		panic(err)
	}
	fmt.Println(info.Status)
	info.Body.Close()

	home, err := http.Get(site.URL + "/")
	if err != nil {
		panic(err)
	}
	b, _ := io.ReadAll(home.Body)
	home.Body.Close()
	fmt.Print(string(b))
	// Output:
	// /ai/v1/streams/
	// 200 OK
	// the site's home page
}
