package relaytest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
)

// The relay serves for the test on loopback, and when the test ends it is
// shut down: a stream it was sending ends, and the address refuses.
func TestStartServesUntilTheTestEndsThenShutsBothDown(t *testing.T) {
	var url string
	var body io.ReadCloser
	t.Run("serving", func(t *testing.T) {
		srv, ts := relaytest.Start(t, relay.WithSimDefaults(relay.SimDefaults{TTFT: time.Millisecond, Gap: 5 * time.Millisecond, TokenChars: 1}))
		require.NotNil(t, srv)
		url = ts.URL
		require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
		resp, err := http.Get(url + "/healthz")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		// A stream far longer than the test: 100,000 characters 5 ms apart.
		resp, err = http.Post(url+"/v1/chat/completions?answer=sample-100k", "application/json",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		body = resp.Body
	})
	defer body.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, body)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream still runs after its test ended")
	}
	_, err := http.Get(url + "/healthz")
	require.Error(t, err, "the server is closed")
}
