package relay_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// post with Host and Origin as a browser on a rebound name sends them.
func postAs(t *testing.T, base, host, origin string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(hello))
	require.NoError(t, err)
	req.Host = host
	req.Header.Set("Origin", origin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A relay without auth is not spent by a page under a name pointed at its
// address (DNS rebinding: the page is same-origin with it): a browser's
// request under a host name other than localhost, an IP address and the
// allowed hosts is refused, over SSE and the WebSocket, and says how to
// allow it. With auth, identities are checked instead.
func TestARelayWithoutAuthRefusesAPageUnderARebindingName(t *testing.T) {
	_, base := start(t, relay.WithAllowedHosts("relay.example"))
	port := base[strings.LastIndex(base, ":")+1:]
	for host, want := range map[string]int{
		"attacker.example:" + port: http.StatusForbidden,
		"127.0.0.1:" + port:        http.StatusOK,
		"[::1]:" + port:            http.StatusOK,
		"localhost:" + port:        http.StatusOK,
		"app.localhost:" + port:    http.StatusOK,
		"RELAY.example:" + port:    http.StatusOK,
	} {
		code, body := postAs(t, base, host, "http://"+host)
		require.Equal(t, want, code, "%s: %s", host, body)
		if want == http.StatusForbidden {
			require.Contains(t, body, "host_not_allowed")
			require.Contains(t, body, "--allowed-host attacker.example")
		}
	}
	// Without an Origin (curl, an SDK on a server) no page is involved.
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(hello))
	require.NoError(t, err)
	req.Host = "attacker.example:" + port
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// The WebSocket is handed the refusal and closed.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws", &websocket.DialOptions{
		Host: "attacker.example:" + port, HTTPHeader: http.Header{"Origin": {"http://attacker.example:" + port}}})
	require.NoError(t, err)
	defer c.CloseNow()
	_, msg, err := c.Read(ctx)
	require.NoError(t, err)
	require.Contains(t, string(msg), "DNS rebinding")

	// With auth the host is not the guard.
	_, authed := start(t, relay.WithToken("shared-token"), relay.WithAllowedOrigins("*"))
	code, body := postAs(t, authed, "attacker.example:1", "http://attacker.example:1")
	require.Equal(t, http.StatusUnauthorized, code, body)
}
