package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/stream"
)

// redirectTimeout bounds each upstream call of the redirect test: long
// enough for a loaded machine, short enough that a hang fails.
const redirectTimeout = 20 * time.Second

// hopRecorder is an HTTP server that keeps what each request it got carried.
type hopRecorder struct {
	mu   sync.Mutex
	seen []string // method, path, key headers and body of each request
}

func (rec *hopRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.seen = append(rec.seen, fmt.Sprintf("%s %s authorization=%q x-api-key=%q body=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("x-api-key"), body))
	rec.mu.Unlock()
	http.Error(w, "recorded", http.StatusTeapot)
}

func (rec *hopRecorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.seen...)
}

// An upstream that redirects never gets the relay to follow: not to
// another host, not to the same host on another port, not with any
// redirect code, in any dialect, streamed or not. The 3xx is the
// upstream's failure, its Location kept for the log, and the client's
// words say what to check without naming the target.
func TestARedirectingUpstreamIsNeverFollowedWithTheKey(t *testing.T) {
	elsewhere := &hopRecorder{}
	other := httptest.NewServer(elsewhere)
	t.Cleanup(other.Close)
	// The same machine under another name (another host to the client),
	// and the same name on another port.
	targets := map[string]string{
		"another host": strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/v1/chat/completions",
		"another port": other.URL + "/v1/chat/completions",
	}
	for where, target := range targets {
		for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			for _, d := range Dialects() {
				for _, streamed := range []bool{true, false} {
					name := fmt.Sprintf("%s/%d/%s/streamed=%v", where, code, d, streamed)
					t.Run(name, func(t *testing.T) {
						first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
							http.Redirect(w, r, target, code)
						}))
						t.Cleanup(first.Close)
						u := &Upstream{URL: first.URL + "/v1/chat/completions", Dialect: d, Key: "sk-secret-key", Model: "m"}
						require.NoError(t, u.Check(Defaults{FirstTokenTimeout: redirectTimeout, IdleTimeout: redirectTimeout, TotalTimeout: redirectTimeout}))
						payload := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"the prompt"}]}`)
						var err error
						if streamed {
							_, err = u.Run(context.Background(), "s1", payload, 1<<20, func(string, string) bool { return true }, func(int, error) {})
						} else {
							w := httptest.NewRecorder()
							_, err = u.Forward(context.Background(), w, payload)
							require.Empty(t, w.Body.String(), "nothing written to the client")
						}
						var se *StatusError
						require.True(t, errors.As(err, &se), "a StatusError: %v", err)
						require.Equal(t, code, se.Code)
						require.Equal(t, target, se.Location, "the redirect's target is kept for the log")
						require.Contains(t, err.Error(), "does not follow")
						pub := Public(err)
						require.Contains(t, pub, "redirect")
						require.NotContains(t, pub, "localhost")
						require.NotContains(t, pub, "127.0.0.1")
						require.Empty(t, elsewhere.requests(), "the redirect's target got nothing")
					})
				}
			}
		}
	}
	// A client of the embedder's, following redirects by default, is
	// held to the same rule.
	t.Run("an embedder's client", func(t *testing.T) {
		first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, targets["another host"], http.StatusTemporaryRedirect)
		}))
		t.Cleanup(first.Close)
		mine := &http.Client{}
		u := &Upstream{URL: first.URL, Dialect: stream.DialectAnthropic, Key: "sk-secret-key", Model: "m", Client: mine}
		require.NoError(t, u.Check(Defaults{FirstTokenTimeout: redirectTimeout, IdleTimeout: redirectTimeout, TotalTimeout: redirectTimeout}))
		_, err := u.Run(context.Background(), "s2", []byte(`{}`), 1<<20, func(string, string) bool { return true }, func(int, error) {})
		require.Error(t, err)
		require.Empty(t, elsewhere.requests())
		require.Nil(t, mine.CheckRedirect, "the embedder's own client is not changed")
	})
}
