package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/stream"
)

// An upstream URL may carry a key (Google-style ?key=, or userinfo): the
// errors the relay logs name the upstream by scheme, host and path only,
// whichever way the request fails.
func TestTheUpstreamsErrorsNeverSpellItsQueryOrUserinfo(t *testing.T) {
	const secret = "AIzaSECRET"
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := refused.Addr().String()
	refused.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	t.Cleanup(failing.Close)
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"))
	}))
	t.Cleanup(cut.Close)
	for name, base := range map[string]string{
		"connection refused": "http://" + deadAddr,
		"a 503":              failing.URL,
		"no end marker":      cut.URL,
	} {
		t.Run(name, func(t *testing.T) {
			raw := strings.Replace(base, "http://", "http://user:"+secret+"@", 1) + "/v1/chat/completions?key=" + secret
			u := &Upstream{URL: raw, Dialect: stream.DialectOpenAI, Model: "m"}
			require.NoError(t, u.Check(Defaults{FirstTokenTimeout: redirectTimeout, IdleTimeout: redirectTimeout, TotalTimeout: redirectTimeout}))
			require.Equal(t, base+"/v1/chat/completions", u.Where())
			_, err := u.Run(context.Background(), "s", []byte(`{}`), 1<<20, func(string, string) bool { return true }, func(int, error) {})
			require.Error(t, err)
			require.NotContains(t, err.Error(), secret)
			require.Contains(t, err.Error(), u.Where(), "the error still says which upstream")
			_, err = u.Forward(context.Background(), httptest.NewRecorder(), []byte(`{}`))
			if name != "no end marker" {
				require.Error(t, err)
				require.NotContains(t, err.Error(), secret)
			}
		})
	}
}
