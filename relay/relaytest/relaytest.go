// Package relaytest serves a relay for a test: relay.New with the test's
// options behind an httptest.Server on 127.0.0.1, both shut down when the
// test ends.
package relaytest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/trickle-dev/trickle/relay"
)

// ShutdownTimeout bounds the relay's Shutdown at the end of a test: a
// test's end does not wait for the streams it left running, which are
// handed a resumable end, and the clients' connections are closed.
const ShutdownTimeout = 100 * time.Millisecond

// Start builds a relay with opts (after a logger that discards, which an
// option of opts may replace) and serves its Handler on loopback. When the
// test ends the relay shuts down (within ShutdownTimeout), then the
// clients' connections are closed and the server stops. A bad option fails
// the test.
func Start(t testing.TB, opts ...relay.Option) (*relay.Server, *httptest.Server) {
	t.Helper()
	all := append([]relay.Option{relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	srv, err := relay.New(all...)
	if err != nil {
		t.Fatalf("relaytest: %v", err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.CloseClientConnections()
		ts.Close()
	})
	return srv, ts
}
