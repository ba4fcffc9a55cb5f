// Package sink holds the socket writers a stream's readers send through
// (streamlog.Sink): SSE on net/http's response writer or as HTTP/1.1
// chunks straight on a hijacked connection, and WebSocket through
// coder/websocket's Conn.Write or as frames on a connection the relay owns
// after the handshake. Each fast path has its plain twin, selected by
// Path, so that the two can be measured side by side (bench/load -path).
// A sink never decides what to send: the reader does.
package sink

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/sse"
)

// Path picks how events reach the socket.
type Path int

const (
	// Fast writes on the connection taken over from net/http: SSE as
	// hand-written chunks, WebSocket as frames, both with a non-blocking
	// writev from the goroutine that appended the event when the socket
	// takes it (see BenchmarkSinks and bench/load).
	Fast Path = iota
	// Plain writes through the libraries: net/http's response writer and
	// http.ResponseController's Flush, coder/websocket's Conn.Write.
	Plain
)

func (p Path) String() string {
	if p == Plain {
		return "plain"
	}
	return "fast"
}

// ParsePath reads "fast" or "plain".
func ParsePath(s string) (Path, error) {
	switch s {
	case "fast", "":
		return Fast, nil
	case "plain":
		return Plain, nil
	}
	return Fast, fmt.Errorf("write path %q: want fast or plain", s)
}

// KeepAlive is the heartbeat comment every sink writes.
var KeepAlive = append(sse.AppendComment(nil, "keep-alive"), '\n')

// armWriteDeadline pushes conn's write deadline to timeout from now, at
// most once a second (a write is then bounded by timeout minus up to a
// second): setting it costs a runtime timer operation, and tokens come
// many times a second.
func armWriteDeadline(conn net.Conn, armed *time.Time, timeout time.Duration) error {
	if now := time.Now(); now.Sub(*armed) > time.Second || timeout <= 2*time.Second {
		if err := conn.SetWriteDeadline(now.Add(timeout)); err != nil {
			return err
		}
		*armed = now
	}
	return nil
}

// cutError turns a write that hit the write deadline into streamlog.ErrCut.
func cutError(err error) error {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", streamlog.ErrCut, err)
	}
	return err
}

// closeWrite half-closes a TCP (or TLS) connection.
func closeWrite(c net.Conn) bool {
	cw, ok := c.(interface{ CloseWrite() error })
	return ok && cw.CloseWrite() == nil
}

// sockOut is the write side of a connection taken over from net/http,
// which the SSE and the WebSocket sinks share: the write deadline pushed
// back as they write, the non-blocking writer, and what the socket has
// not taken yet.
type sockOut struct {
	conn    net.Conn
	timeout time.Duration
	armed   time.Time // when the write deadline was last pushed back
	// now writes without blocking (TrySend); nil when the connection has
	// no socket of its own (TLS) or the platform has no nowWriter.
	now     *nowWriter
	pending []byte // the bytes a non-blocking write left
}

func newSockOut(conn net.Conn, timeout time.Duration) sockOut {
	return sockOut{conn: conn, timeout: timeout, now: newNowWriter(conn)}
}

// flushPending writes what a non-blocking write left, within the write
// timeout.
func (o *sockOut) flushPending() error {
	if len(o.pending) == 0 {
		return nil
	}
	if err := armWriteDeadline(o.conn, &o.armed, o.timeout); err != nil {
		return err
	}
	n, err := o.conn.Write(o.pending)
	o.pending = o.pending[:copy(o.pending, o.pending[n:])]
	return cutError(err)
}

// queue keeps what a non-blocking write of parts left after its first n
// bytes.
func (o *sockOut) queue(n int, parts ...[]byte) {
	for _, p := range parts {
		skip := min(n, len(p))
		o.pending = append(o.pending, p[skip:]...)
		n -= skip
	}
}

// HalfClose leaves the last chunk or frame unfinished: the client sees a
// cut (no terminating chunk, no close frame), never a clean end.
func (o *sockOut) HalfClose() bool { return closeWrite(o.conn) }
