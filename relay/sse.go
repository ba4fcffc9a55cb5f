// SSE serving: the response headers, the prelude, and the two SSE sinks
// (net/http's response writer, and chunks written straight to a hijacked
// HTTP/1.1 connection).

package relay

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/trickle-dev/trickle/sse"
)

var keepAliveComment = append(sse.AppendComment(nil, "keep-alive"), '\n')

// sseSink writes to an SSE response with a deadline on every write.
type sseSink struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (k *sseSink) write(p []byte) error {
	if err := k.rc.SetWriteDeadline(time.Now().Add(k.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := k.w.Write(p); err != nil {
		return err
	}
	return k.rc.Flush()
}

func (k *sseSink) send(b batch) error { return k.write(b.data) }
func (k *sseSink) keepAlive() error   { return k.write(keepAliveComment) }

// trySend is not possible through net/http's response writer.
func (k *sseSink) trySend(batch) (ok, queued bool) { return false, false }
func (k *sseSink) flush() error                    { return nil }

// halfClose is not possible through net/http's response writer (HTTP/1.0
// and HTTP/2 clients): a cut client there just leaves.
func (k *sseSink) halfClose() bool { return false }

// sseHeaders are the headers that keep every proxy from buffering or
// compressing the stream.
func sseHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	h.Del("Content-Encoding")
}

// serveSSE streams l to an SSE response from position pos.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request, l *genLog, pos int) {
	sseHeaders(w.Header())
	w.Header().Set("X-Trickle-Stream", l.id)
	// HTTP/1.1 only: chunked encoding is written by hand; HTTP/1.0 clients
	// (and proxies speaking it) and HTTP/2 take the net/http path.
	if r.ProtoMajor == 1 && r.ProtoMinor == 1 {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			s.serveHijacked(conn, w.Header(), l, pos)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	k := &sseSink{w: w, rc: http.NewResponseController(w), timeout: s.cfg.writeTimeout}
	defer k.rc.SetWriteDeadline(time.Time{}) // the connection may serve another request
	if err := k.write(s.prelude(l)); err != nil {
		s.pumpDone(l, "sse", endGone, err)
		return
	}
	end, err := s.pump(r.Context(), l, pos, k)
	s.pumpDone(l, "sse", end, err)
	if end == endDrop {
		// Close the connection without the chunked terminator: the client
		// sees a dropped connection, not a clean end.
		time.Sleep(dropLinger)
		panic(http.ErrAbortHandler)
	}
}

// dropLinger is how long a connection cut by drop_after waits after its
// last event: a browser that gets data and the error together may discard
// the data (an errored ReadableStream drops its queue), and the fault is
// meant to cut after N events, not to lose some of them.
const dropLinger = 50 * time.Millisecond

// hijackSink writes HTTP/1.1 chunks straight to the connection.
type hijackSink struct {
	sockOut
	size [20]byte
	vec  [3][]byte
	bufs net.Buffers
}

// sockOut is the write side of a connection taken over from net/http,
// which the SSE and the WebSocket sinks share: the write deadline pushed
// back as they write, the non-blocking writer, and what the socket has
// not taken yet.
type sockOut struct {
	conn    net.Conn
	timeout time.Duration
	armed   time.Time // when the write deadline was last pushed back
	// now writes without blocking (trySend); nil when the connection has
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

// halfClose leaves the last chunk or frame unfinished: the client sees a
// cut (no terminating chunk, no close frame), never a clean end.
func (o *sockOut) halfClose() bool { return closeWrite(o.conn) }

var crlf = []byte("\r\n")

func (k *hijackSink) write(p []byte) error {
	if err := k.flush(); err != nil {
		return err
	}
	if err := armWriteDeadline(k.conn, &k.armed, k.timeout); err != nil {
		return err
	}
	hdr := append(strconv.AppendInt(k.size[:0], int64(len(p)), 16), '\r', '\n')
	// One writev: chunk size, the events, CRLF, without copying them (the
	// vector lives in the sink: one allocation less per event).
	k.vec = [3][]byte{hdr, p, crlf}
	k.bufs = k.vec[:]
	_, err := k.bufs.WriteTo(k.conn)
	k.vec = [3][]byte{}
	return cutError(err)
}

func (k *hijackSink) send(b batch) error { return k.write(b.data) }
func (k *hijackSink) keepAlive() error   { return k.write(keepAliveComment) }

// trySend writes one chunk with a non-blocking writev straight on the
// socket (see nowWriter); what the socket does not take waits in pending.
func (k *hijackSink) trySend(b batch) (ok, queued bool) {
	if k.now == nil || len(k.pending) > 0 {
		return false, false
	}
	hdr := append(strconv.AppendInt(k.size[:0], int64(len(b.data)), 16), '\r', '\n')
	n, err := k.now.writev(hdr, b.data, crlf)
	if err != nil || n == 0 {
		// Full (EAGAIN) or broken: the blocking write sends it, or
		// meets the error, on the reader's goroutine.
		return false, false
	}
	if total := len(hdr) + len(b.data) + len(crlf); n < total {
		for _, p := range [][]byte{hdr, b.data, crlf} {
			skip := min(n, len(p))
			k.pending = append(k.pending, p[skip:]...)
			n -= skip
		}
		return true, true
	}
	return true, false
}

// flush writes what trySend could not, within the write timeout.
func (k *hijackSink) flush() error { return k.flushPending() }

// serveHijacked serves an SSE stream on a connection taken over from
// net/http. An idle stream then costs one small goroutine waiting for the
// client to hang up and a reader with no goroutine, and no buffers: the
// server's per-connection read and write buffers and the handler's stack
// are released, which is what keeps bench/load's memory per idle stream
// small. The response is plain HTTP/1.1 chunked
// encoding, so a clean end (terminating chunk) and a drop (no terminator)
// stay distinguishable, and the connection closes after the stream.
func (s *Server) serveHijacked(conn net.Conn, hdr http.Header, l *genLog, pos int) {
	head := make([]byte, 0, 512)
	head = append(head, "HTTP/1.1 200 OK\r\n"...)
	hdr.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	hdr.Set("Transfer-Encoding", "chunked")
	hdr.Set("Connection", "close")
	for _, k := range slices.Sorted(maps.Keys(hdr)) {
		for _, v := range hdr[k] {
			head = append(head, k...)
			head = append(head, ": "...)
			head = append(head, v...)
			head = append(head, crlf...)
		}
	}
	head = append(head, crlf...)
	pre := s.prelude(l)
	head = strconv.AppendInt(head, int64(len(pre)), 16)
	head = append(append(append(head, crlf...), pre...), crlf...)
	k := &hijackSink{sockOut: newSockOut(conn, s.cfg.writeTimeout)}
	conn.SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
	if _, err := conn.Write(head); err != nil {
		conn.Close()
		return
	}
	s.pumps.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	// Reading is how a hang-up is noticed at once (not at the next
	// write); the client sends nothing more on this connection.
	go func() {
		var b [1]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				cancel()
				return
			}
		}
	}()
	s.startPump(ctx, l, pos, k, func(end pumpEnd, err error) {
		defer s.pumps.Done()
		defer cancel()
		s.pumpDone(l, "sse", end, err)
		if end == endDone || end == endShutdown {
			conn.SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
			conn.Write([]byte("0\r\n\r\n"))
		}
		if end == endDrop {
			time.Sleep(dropLinger)
		}
		conn.Close() // a drop (fault) or a gone client: no terminator
	})
}

func (s *Server) prelude(l *genLog) []byte {
	// The prelude names the stream and sets the reconnection delay; a
	// block without data dispatches no event (WHATWG "dispatch the
	// event": empty data buffer).
	return fmt.Appendf(nil, ": trickle stream %s\nretry: %d\n\n", l.id, s.cfg.retryHint.Milliseconds())
}

func (s *Server) pumpDone(l *genLog, transport string, end pumpEnd, err error) {
	switch end {
	case endGone:
		s.log.Info("client left", "stream", l.id, "transport", transport, "events", l.count(), "err", err)
	case endDrop:
		s.log.Info("connection dropped (drop_after)", "stream", l.id, "transport", transport, "events", l.dropAfter)
	case endShutdown:
		s.log.Info("client handed a resumable end (shutdown)", "stream", l.id, "transport", transport)
	}
}
