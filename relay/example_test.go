package relay_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/sse"
)

// A relay with the simulated model, answering one streamed request in the
// plain dialect.
func ExampleNew() {
	srv, err := relay.New(
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: time.Millisecond, Gap: time.Millisecond, TokenChars: 16}),
	)
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	resp, err := http.Post(ts.URL+"/v1/chat/completions?dialect=plain&answer=code", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"reverse a string in Go"}]}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	dec, err := sse.NewDecoder(resp.Body)
	if err != nil {
		panic(err)
	}
	for range 3 {
		ev, _ := dec.Next()
		fmt.Println(strings.TrimPrefix(ev.LastEventID, resp.Header.Get("X-Trickle-Stream")), ev.Data)
	}
	io.Copy(io.Discard, resp.Body)
	// Output:
	// :1 {"delta":"Sure! Here is a "}
	// :2 {"delta":"**quick** way to"}
	// :3 {"delta":" reverse a strin"}
}
