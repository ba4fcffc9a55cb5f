package relay_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

func fuzzRelay(t testing.TB) *relay.Server {
	srv, err := relay.New(
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TokenChars: 64}),
		relay.WithMaxEvents(40),
		relay.WithMaxBodyBytes(4096),
		relay.WithRetention(time.Minute),
		relay.WithGrace(10*time.Millisecond),
	)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := contextWithTimeout(time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv
}

// Whatever the body and the query, the relay answers with a clear status
// and never fails on its own (5xx) or panics; refusals are JSON errors.
func FuzzChatRequestNeverBreaksTheRelay(f *testing.F) {
	f.Add(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "dialect=anthropic&answer=short")
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"/answer xss"}]}]}`, "")
	f.Add(`{"stream":true,"seed":-5,"max_tokens":3,"messages":[{"role":"user","content":"x"}]}`, "error_after=2&stall_after=1&stall_ms=0.5&no_end=1")
	f.Add(`{"stream":true,"messages":[{"role":"user","content":"compare"}]}`, "drop_after=3&ttft_ms=1e9")
	f.Add(`{"stream":true}`, "drop_after=3")
	f.Add(`{"stream":true,"messages":[{"role":"system","content":"be brief"}]}`, "")
	f.Add(`[]`, "gap_ms=NaN")
	f.Add(`{"stream":"yes"}`, "token_chars=-1&dialect=")
	srv := fuzzRelay(f)
	h := srv.Handler()
	f.Fuzz(func(t *testing.T, body, query string) {
		// A stream may be asked to stall for an hour: the client gives up
		// after a moment (that is a disconnect, which the relay handles).
		ctx, cancel := contextWithTimeout(200 * time.Millisecond)
		defer cancel()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)).WithContext(ctx)
		req.URL.RawQuery = query
		rec := httptest.NewRecorder()
		func() {
			// drop_after aborts the response the way net/http means it
			// (the server recovers it and cuts the connection).
			defer func() {
				if v := recover(); v != nil && v != http.ErrAbortHandler {
					panic(v)
				}
			}()
			h.ServeHTTP(rec, req)
		}()
		require.Less(t, rec.Code, 500, "%s", rec.Body)
		if rec.Code >= 400 {
			var e struct{ Error struct{ Message string } }
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
			require.NotEmpty(t, e.Error.Message)
		}
	})
}

// Any Last-Event-ID is either understood or refused with 400.
func FuzzResumeLastEventID(f *testing.F) {
	srv := fuzzRelay(f)
	h := srv.Handler()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions?answer=short&dialect=plain", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	id := rec.Header().Get("X-Trickle-Stream")
	require.NotEmpty(f, id)
	for _, s := range []string{"", id + ":0", id + ":7", id + ":40", id + ":41", id + ":-1", "x:1", id + "::1", id + ":1e3", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, last string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/streams/"+id, nil)
		req.Header.Set("Last-Event-ID", last)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Contains(t, []int{http.StatusOK, http.StatusBadRequest}, rec.Code, "%q: %s", last, rec.Body)
	})
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
