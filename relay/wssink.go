// The WebSocket sink: the relay writes its event messages as WebSocket
// frames itself, on the connection coder/websocket accepted, next to the
// frames the library writes (pong, close) and never inside one of them.

package relay

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"time"
)

// wsSink sends one WebSocket text message per event, each the exact SSE
// text the SSE endpoint writes for it, as one unfragmented, unmasked frame
// (RFC 6455 5.2; a server never masks).
//
// coder/websocket does the handshake, reads the client's messages and
// writes the control frames (pong, close) and the messages sent before the
// stream starts. Its writes block, so a stream's events would each need a
// goroutine; the sink instead writes the event frames itself, inline and
// without blocking when the socket takes them, as the SSE sink does (see
// reader.wake). Both writers meet here: the library writes through
// wsLibraryWire (its buffered writer's destination), which hands the sink
// whole frames only, and the sink's lock orders whole frames on the socket
// — never an event inside a library frame nor the reverse. Once a close
// frame has gone out no event follows it (RFC 6455 5.5.1).
type wsSink struct {
	mu      sync.Mutex
	sockOut // the TCP connection; pending: the part of the frames the socket did not take
	hdr     [maxFrameHeader]byte
	vec     [2][]byte
	bufs    net.Buffers
	lib     []byte // the library's bytes that do not make a whole frame yet
	closing bool   // a close frame was written
}

func newWSSink(conn net.Conn, timeout time.Duration) *wsSink {
	return &wsSink{sockOut: newSockOut(conn, timeout)}
}

// errWSClosing refuses an event after the close frame.
var errWSClosing = fmt.Errorf("relay: the websocket close handshake has begun: %w", net.ErrClosed)

// Frame layout (RFC 6455 5.2).
const (
	maxFrameHeader = 10 // 2 bytes, 8 of extended length, no mask
	opText         = 0x1
	opClose        = 0x8
	finBit         = 0x80
)

// appendTextHeader appends the header of a final, unmasked text frame of n
// payload bytes: the length in 7 bits, or 126 and 16 bits, or 127 and 64
// bits, always in the shortest form (5.2: "the minimal number of bytes").
func appendTextHeader(b []byte, n int) []byte {
	switch {
	case n <= 125:
		return append(b, finBit|opText, byte(n))
	case n <= 0xFFFF:
		return append(b, finBit|opText, 126, byte(n>>8), byte(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, finBit|opText, 127), uint64(n))
	}
}

// frameSize reads the header at the start of b: the frame's whole length
// (header and payload) and its opcode; ok is false while b holds less than
// the header.
func frameSize(b []byte) (size int, op byte, ok bool) {
	if len(b) < 2 {
		return 0, 0, false
	}
	op = b[0] & 0x0f
	h, n := 2, uint64(b[1]&0x7f)
	switch n {
	case 126:
		if h = 4; len(b) < h {
			return 0, 0, false
		}
		n = uint64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		if h = 10; len(b) < h {
			return 0, 0, false
		}
		n = binary.BigEndian.Uint64(b[2:])
	}
	if b[1]&0x80 != 0 { // masked: a client's frame, never the server's
		h += 4
	}
	return h + int(n), op, true
}

// wsLibraryWire is where coder/websocket's buffered writer writes: the
// sink, frame by frame.
type wsLibraryWire wsSink

// Write takes the library's bytes, however its buffer cuts them, and
// writes every frame they complete, whole, in order with the events.
func (w *wsLibraryWire) Write(p []byte) (int, error) {
	k := (*wsSink)(w)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.lib = append(k.lib, p...)
	whole := 0
	for {
		size, op, ok := frameSize(k.lib[whole:])
		if !ok || size > len(k.lib)-whole {
			break
		}
		if op == opClose {
			k.closing = true
		}
		whole += size
	}
	if whole == 0 {
		return len(p), nil
	}
	err := k.flushPending()
	if err == nil {
		err = armWriteDeadline(k.conn, &k.armed, k.timeout)
	}
	if err == nil {
		_, err = k.conn.Write(k.lib[:whole])
	}
	k.lib = k.lib[:copy(k.lib, k.lib[whole:])]
	return len(p), cutError(err)
}

// write sends p as one message, blocking within the write timeout.
func (k *wsSink) write(p []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.readyLocked(); err != nil {
		return err
	}
	// One writev, header and payload, without copying the payload (the
	// vector lives in the sink: no allocation per event).
	k.vec = [2][]byte{appendTextHeader(k.hdr[:0], len(p)), p}
	k.bufs = k.vec[:]
	_, err := k.bufs.WriteTo(k.conn)
	k.vec = [2][]byte{}
	return cutError(err)
}

// readyLocked writes what trySend left behind and arms the deadline of a
// blocking write of events.
func (k *wsSink) readyLocked() error {
	if err := k.flushPending(); err != nil {
		return err
	}
	if k.closing {
		return errWSClosing
	}
	return armWriteDeadline(k.conn, &k.armed, k.timeout)
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
func appendFrames(buf []byte, b batch, i int) ([]byte, int) {
	start := b.base
	if i > 0 {
		start = b.ends[i-1]
	}
	for ; i < len(b.ends) && len(buf) < frameChunk; i++ {
		p := b.data[start-b.base : b.ends[i]-b.base]
		buf = append(appendTextHeader(buf, len(p)), p...)
		start = b.ends[i]
	}
	return buf, i
}

// send writes the events of b, one message each, blocking within the
// write timeout; several events go out in one write per frameChunk bytes.
// The lock is held for one write at a time: a long replay to a slow
// client lets the library's frames (a pong) through between two writes.
func (k *wsSink) send(b batch) error {
	if len(b.ends) == 1 {
		return k.write(b.data)
	}
	buf := frameBufs.Get().(*[]byte)
	defer putFrameBuf(buf)
	for i := 0; i < len(b.ends); {
		*buf, i = appendFrames((*buf)[:0], b, i)
		if err := k.writeFrames(*buf); err != nil {
			return err
		}
	}
	return nil
}

// writeFrames writes whole frames, blocking within the write timeout.
func (k *wsSink) writeFrames(p []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.readyLocked(); err != nil {
		return err
	}
	_, err := k.conn.Write(p)
	return cutError(err)
}

func (k *wsSink) keepAlive() error { return k.write(keepAliveComment) }

// maxInline is the most bytes of events trySend frames at once; a reader
// that far behind sends from its own goroutine. Framed, they fit in one
// frameChunk (a frame header is at most 4 bytes for at least 1 byte of
// event text below 64 KiB, and every event has more than 8).
const maxInline = frameChunk / 2

// trySend writes the events of b with one non-blocking writev straight on
// the socket (see nowWriter); what the socket does not take waits in
// pending. It never waits for the sink's lock either: while the library
// writes a frame, the reader's goroutine sends.
func (k *wsSink) trySend(b batch) (ok, queued bool) {
	if k.now == nil || len(b.data) > maxInline || !k.mu.TryLock() {
		return false, false
	}
	defer k.mu.Unlock()
	if k.closing || len(k.pending) > 0 {
		return false, false
	}
	var hdr, body []byte
	if len(b.ends) == 1 {
		hdr, body = appendTextHeader(k.hdr[:0], len(b.data)), b.data
	} else {
		buf := frameBufs.Get().(*[]byte)
		defer putFrameBuf(buf)
		var framed int
		if *buf, framed = appendFrames((*buf)[:0], b, 0); framed < len(b.ends) {
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
		for _, p := range [][]byte{hdr, body} {
			skip := min(n, len(p))
			k.pending = append(k.pending, p[skip:]...)
			n -= skip
		}
		return true, true
	}
	return true, false
}

// flush writes what trySend could not, within the write timeout.
func (k *wsSink) flush() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.flushPending()
}
