// The WebSocket sinks. Frames owns the connection once coder/websocket has
// done the handshake: it writes every frame (events, pongs, the close) and
// reads the client's, and the library's Conn is never used again but to be
// released. Library sends through coder/websocket's Conn.Write.

package sink

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// Frames sends one WebSocket text message per event, each the exact SSE
// text the SSE endpoint writes for it, as one unfragmented, unmasked frame
// (RFC 6455 5.2; a server never masks), inline and without blocking when
// the socket takes them (see streamlog's reader). Its lock orders whole
// frames on the socket: the events, the pongs its reader answers and the
// close. Once a close frame has gone out no frame follows it (RFC 6455
// 5.5.1).
type Frames struct {
	mu      sync.Mutex
	sockOut // the TCP connection; pending: the part of the frames the socket did not take
	hdr     [maxFrameHeader]byte
	vec     [2][]byte
	bufs    net.Buffers
	closing bool // a close frame was written
}

// NewFrames makes the sink of a WebSocket connection the relay owns.
func NewFrames(conn net.Conn, timeout time.Duration) *Frames {
	return &Frames{sockOut: newSockOut(conn, timeout)}
}

// errClosing refuses a frame after the close frame.
var errClosing = fmt.Errorf("relay: the websocket close handshake has begun: %w", net.ErrClosed)

// Frame layout (RFC 6455 5.2).
const (
	maxFrameHeader = 10 // 2 bytes, 8 of extended length, no mask
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xa
	finBit         = 0x80
)

// appendHeader appends the header of a final, unmasked frame of n payload
// bytes: the length in 7 bits, or 126 and 16 bits, or 127 and 64 bits,
// always in the shortest form (5.2: "the minimal number of bytes").
func appendHeader(b []byte, op byte, n int) []byte {
	switch {
	case n <= 125:
		return append(b, finBit|op, byte(n))
	case n <= 0xFFFF:
		return append(b, finBit|op, 126, byte(n>>8), byte(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, finBit|op, 127), uint64(n))
	}
}

func appendTextHeader(b []byte, n int) []byte { return appendHeader(b, opText, n) }

// WriteMessage sends p as one text message, blocking within the write
// timeout.
func (k *Frames) WriteMessage(p []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.writeLocked(opText, p)
}

func (k *Frames) writeLocked(op byte, p []byte) error {
	if err := k.readyLocked(); err != nil {
		return err
	}
	// One writev, header and payload, without copying the payload (the
	// vector lives in the sink: no allocation per event).
	k.vec = [2][]byte{appendHeader(k.hdr[:0], op, len(p)), p}
	k.bufs = k.vec[:]
	_, err := k.bufs.WriteTo(k.conn)
	k.vec = [2][]byte{}
	return cutError(err)
}

// readyLocked writes what TrySend left behind and arms the deadline of a
// blocking write.
func (k *Frames) readyLocked() error {
	if err := k.flushPending(); err != nil {
		return err
	}
	if k.closing {
		return errClosing
	}
	return armWriteDeadline(k.conn, &k.armed, k.timeout)
}

// WriteClose sends the close frame with code and reason (at most 123
// bytes: the caller trims it); nothing is sent after it.
func (k *Frames) WriteClose(code websocket.StatusCode, reason string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closing {
		return nil
	}
	p := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(reason)), uint16(code))
	err := k.writeLocked(opClose, append(p, reason...))
	k.closing = true
	return err
}

// pong answers a ping with its payload, between two whole frames.
func (k *Frames) pong(p []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closing {
		return nil
	}
	return k.writeLocked(opPong, p)
}

// frameChunk is how many bytes of frames a send copies before writing
// them: a resume replays a long log in writes of about this size.
const frameChunk = 32 << 10

// frameBufs lends the buffers a batch's frames are copied into: they live
// for one write, and an idle connection keeps none.
var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func putFrameBuf(b *[]byte) {
	if cap(*b) <= 2*frameChunk {
		*b = (*b)[:0]
		frameBufs.Put(b)
	}
}

// appendFrames appends the events of b, from the one at index i on, as
// frames, until the buffer holds at least frameChunk bytes; it returns the
// index of the next event.
func appendFrames(buf []byte, b streamlog.Batch, i int) ([]byte, int) {
	start := b.Base
	if i > 0 {
		start = b.Ends[i-1]
	}
	for ; i < len(b.Ends) && len(buf) < frameChunk; i++ {
		p := b.Data[start-b.Base : b.Ends[i]-b.Base]
		buf = append(appendTextHeader(buf, len(p)), p...)
		start = b.Ends[i]
	}
	return buf, i
}

// Send writes the events of b, one message each, blocking within the
// write timeout; several events go out in one write per frameChunk bytes.
// The lock is held for one write at a time: a long replay to a slow
// client lets a pong through between two writes.
func (k *Frames) Send(b streamlog.Batch) error {
	if len(b.Ends) == 1 {
		return k.WriteMessage(b.Data)
	}
	buf := frameBufs.Get().(*[]byte)
	defer putFrameBuf(buf)
	for i := 0; i < len(b.Ends); {
		*buf, i = appendFrames((*buf)[:0], b, i)
		if err := k.writeFrames(*buf); err != nil {
			return err
		}
	}
	return nil
}

// writeFrames writes whole frames, blocking within the write timeout.
func (k *Frames) writeFrames(p []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.readyLocked(); err != nil {
		return err
	}
	_, err := k.conn.Write(p)
	return cutError(err)
}

func (k *Frames) KeepAlive() error { return k.WriteMessage(KeepAlive) }

// maxInline is the most bytes of events TrySend frames at once; a reader
// that far behind sends from its own goroutine. Framed, they fit in one
// frameChunk (a frame header is at most 4 bytes for at least 1 byte of
// event text below 64 KiB, and every event has more than 8).
const maxInline = frameChunk / 2

// TrySend writes the events of b with one non-blocking writev straight on
// the socket (see nowWriter); what the socket does not take waits in
// pending. It never waits for the sink's lock either: while a pong or a
// blocking write goes out, the reader's goroutine sends.
func (k *Frames) TrySend(b streamlog.Batch) (ok, queued bool) {
	if k.now == nil || len(b.Data) > maxInline || !k.mu.TryLock() {
		return false, false
	}
	defer k.mu.Unlock()
	if k.closing || len(k.pending) > 0 {
		return false, false
	}
	var hdr, body []byte
	if len(b.Ends) == 1 {
		hdr, body = appendTextHeader(k.hdr[:0], len(b.Data)), b.Data
	} else {
		buf := frameBufs.Get().(*[]byte)
		defer putFrameBuf(buf)
		var framed int
		if *buf, framed = appendFrames((*buf)[:0], b, 0); framed < len(b.Ends) {
			return false, false // all of b or nothing: the goroutine sends
		}
		body = *buf
	}
	n, err := k.now.writev(hdr, body, nil)
	if err != nil || n == 0 {
		// Full (EAGAIN) or broken: the blocking write sends it, or
		// meets the error, on the reader's goroutine.
		return false, false
	}
	if n < len(hdr)+len(body) {
		k.queue(n, hdr, body)
		return true, true
	}
	return true, false
}

// Flush writes what TrySend could not, within the write timeout.
func (k *Frames) Flush() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.flushPending()
}

// Library sends through coder/websocket's Conn.Write, one message per
// event, on the reader's goroutine: the plain path. The write deadline is
// the connection's (set on the net.Conn the relay handed the library), so
// that an event costs no context.
type Library struct {
	c       *websocket.Conn
	conn    net.Conn
	timeout time.Duration
	armed   time.Time
}

// NewLibrary makes the sink of a WebSocket connection c, whose hijacked
// net.Conn is conn.
func NewLibrary(c *websocket.Conn, conn net.Conn, timeout time.Duration) *Library {
	return &Library{c: c, conn: conn, timeout: timeout}
}

// WriteMessage sends p as one text message.
func (k *Library) WriteMessage(p []byte) error {
	if err := armWriteDeadline(k.conn, &k.armed, k.timeout); err != nil {
		return err
	}
	return cutError(k.c.Write(context.Background(), websocket.MessageText, p))
}

func (k *Library) Send(b streamlog.Batch) error {
	start := b.Base
	for _, end := range b.Ends {
		if err := k.WriteMessage(b.Data[start-b.Base : end-b.Base]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func (k *Library) KeepAlive() error { return k.WriteMessage(KeepAlive) }

// TrySend is not possible through the library: its writes block.
func (k *Library) TrySend(streamlog.Batch) (ok, queued bool) { return false, false }
func (k *Library) Flush() error                              { return nil }

// HalfClose would send a FIN behind the library's writer: not done.
func (k *Library) HalfClose() bool { return false }

// MaxCloseReason is what a close frame leaves for the reason (RFC 6455
// 5.5: 125 bytes of payload, 2 of them the status code).
const MaxCloseReason = 123

// CloseReason keeps a close reason within MaxCloseReason bytes, cut between two
// characters (a reason must be valid UTF-8: RFC 6455 5.5.1).
func CloseReason(s string) string {
	if len(s) <= MaxCloseReason {
		return s
	}
	cut := MaxCloseReason - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// CloseCode is the close code of a WebSocket refused for what HTTP
// answers with status: a stream gone is a normal end, a limit or an
// unavailable store says to try again later, the relay's own failure is
// an internal error, anything else a policy violation.
func CloseCode(status int) websocket.StatusCode {
	switch status {
	case http.StatusNotFound, http.StatusGone:
		return websocket.StatusNormalClosure
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return websocket.StatusTryAgainLater
	case http.StatusInternalServerError:
		return websocket.StatusInternalError
	}
	return websocket.StatusPolicyViolation
}
