package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"
)

// The clients here speak just enough HTTP/1.1 and WebSocket to read the
// relay's streams on a bare TCP connection: one goroutine per stream, one
// read buffer, no allocation per event. The load generator shares the two
// cores with the relay, so every microsecond it spends per event is taken
// from the relay and shows up as added latency (net/http's client and
// coder/websocket's cost several times more per event). What they check is
// what the counts need — each event's sequence number, whether it is the end
// marker or the relay's terminal status — the relay's tests hold its wire
// format to the sse package's decoder.

// streamRec is what one stream's client saw, over all its connections.
type streamRec struct {
	id       string
	resumes  int
	last     int     // highest sequence number seen
	arrived  []int64 // arrived[k]: unix nanos of event seq k+1 (0: never)
	dups     int     // events seen again (sequence number not after last)
	gaps     int     // events skipped inside the stream (a later one came first)
	done     bool    // the end marker arrived
	status   string  // data of the relay's terminal trickle.status event, if any
	stallAt  int     // stop reading for stallFor after this many events (0: never)
	stallFor time.Duration
}

// delivered is the number of distinct events of the stream that arrived.
func (r *streamRec) delivered() int {
	n := 0
	for _, at := range r.arrived {
		if at != 0 {
			n++
		}
	}
	return n
}

// scanner reads SSE event text (as the relay writes it: "id: S:N", optional
// "event:", one "data:" line, a blank line) from a byte stream cut anywhere.
type scanner struct {
	rec     *streamRec
	partial []byte // an unfinished line carried over to the next chunk
	seq     int
	status  bool
	hasData bool
	isDone  bool
	data    []byte
	wire    *atomic.Int64
	stall   time.Duration // set when the client must now stop reading for a while
}

var (
	pID     = []byte("id: ")
	pEvent  = []byte("event: trickle.status")
	pData   = []byte("data: ")
	pDone   = []byte("[DONE]")
	pStream = []byte(": trickle stream ")
)

// feed scans p; now is when it arrived.
func (s *scanner) feed(p []byte, now int64) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.partial = append(s.partial, p...)
			return
		}
		line := p[:i]
		if len(s.partial) > 0 {
			s.partial = append(s.partial, line...)
			line = s.partial
		}
		s.line(line, now)
		s.partial = s.partial[:0]
		p = p[i+1:]
	}
}

func (s *scanner) line(l []byte, now int64) {
	switch {
	case len(l) == 0:
		if s.hasData {
			s.dispatch(now)
		}
		s.seq, s.status, s.hasData, s.isDone = 0, false, false, false
	case bytes.HasPrefix(l, pID):
		if j := bytes.LastIndexByte(l, ':'); j > 0 {
			s.seq, _ = strconv.Atoi(string(l[j+1:])) // no allocation: the compiler sees through it
		}
	case bytes.Equal(l, pEvent):
		s.status = true
	case bytes.HasPrefix(l, pData):
		s.hasData = true
		s.isDone = bytes.Equal(l[len(pData):], pDone)
		if s.status {
			s.data = append(s.data[:0], l[len(pData):]...)
		}
	case bytes.HasPrefix(l, pStream) && s.rec.id == "":
		s.rec.id = string(l[len(pStream):])
	}
}

func (s *scanner) dispatch(now int64) {
	r := s.rec
	if s.status {
		// The relay's own terminal event: it says why the stream ended
		// (stopped, cancelled, failed); it is not one of the answer's.
		r.status = string(s.data)
		return
	}
	switch {
	case s.seq <= 0:
		return
	case s.seq <= r.last:
		r.dups++
		return
	case s.seq > r.last+1:
		r.gaps += s.seq - r.last - 1
	}
	r.last = s.seq
	if s.seq <= len(r.arrived) {
		r.arrived[s.seq-1] = now
	}
	if s.isDone {
		r.done = true
	}
	if r.stallAt > 0 && s.seq == r.stallAt {
		// Fault injection: this client stops reading for a while, as a
		// stalled tab or a congested link would (the reading loop does,
		// after the bytes it already has).
		r.stallAt = 0
		s.stall = r.stallFor
	}
}

// endKind is how one connection of a stream ended.
type endKind int

const (
	endClean endKind = iota // the relay ended the response or closed normally
	endCut                  // the connection broke: resume
)

// dialRaw connects and sends the request head (and body).
func dialRaw(addr string, deadline time.Time, req []byte, wire *atomic.Int64) (net.Conn, []byte, error) {
	c, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, nil, err
	}
	c.SetDeadline(deadline)
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, make([]byte, 0, 4096), nil
}

// readHead reads the response head; it returns the status line's code and
// what followed the head in the buffer.
func readHead(c net.Conn, buf []byte, wire *atomic.Int64) (code int, head, rest []byte, err error) {
	for {
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			head, rest = buf[:i+2], buf[i+4:]
			break
		}
		if len(buf) == cap(buf) {
			return 0, nil, nil, errors.New("response head over 4 KiB")
		}
		n, err := c.Read(buf[len(buf):cap(buf)])
		wire.Add(int64(n))
		buf = buf[:len(buf)+n]
		if err != nil {
			return 0, nil, nil, fmt.Errorf("reading the response head: %w", err)
		}
	}
	if len(head) < 12 {
		return 0, nil, nil, fmt.Errorf("bad status line %q", head)
	}
	code, err = strconv.Atoi(string(head[9:12]))
	return code, head, rest, err
}

// header returns a header's value from a response head.
func header(head []byte, name string) string {
	for line := range bytes.SplitSeq(head, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(k, []byte(name)) {
			return string(bytes.TrimSpace(v))
		}
	}
	return ""
}

// body decodes a response body fed in pieces as they arrive: chunked SSE
// or WebSocket frames. feed reports whether the connection is over and how.
type body interface {
	feed(data []byte, s *scanner, now int64) (over bool, end endKind, err error)
}

// chunkedBody decodes HTTP/1.1 chunked transfer coding: size line, that
// many bytes, CRLF; a zero size ends the body.
type chunkedBody struct {
	inChunk int // payload bytes left in the current chunk
	trail   int // CRLF bytes left after the current chunk
	sizeBuf []byte
}

func (c *chunkedBody) feed(data []byte, s *scanner, now int64) (bool, endKind, error) {
	for len(data) > 0 {
		switch {
		case c.inChunk > 0:
			k := min(c.inChunk, len(data))
			s.feed(data[:k], now)
			c.inChunk -= k
			data = data[k:]
			if c.inChunk == 0 {
				c.trail = 2
			}
		case c.trail > 0:
			k := min(c.trail, len(data))
			c.trail -= k
			data = data[k:]
		default:
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				c.sizeBuf = append(c.sizeBuf, data...)
				return false, 0, nil
			}
			c.sizeBuf = append(c.sizeBuf, data[:i]...)
			data = data[i+1:]
			hex, _, _ := bytes.Cut(bytes.TrimRight(c.sizeBuf, "\r"), []byte(";"))
			size, err := strconv.ParseUint(string(hex), 16, 63)
			c.sizeBuf = c.sizeBuf[:0]
			if err != nil {
				return true, endCut, fmt.Errorf("bad chunk size %q", hex)
			}
			if size == 0 {
				return true, endClean, nil
			}
			c.inChunk = int(size)
		}
	}
	return false, 0, nil
}

// wsBody decodes WebSocket frames (unmasked, from the server) to the close.
type wsBody struct {
	hdr     []byte // an unfinished frame header
	payload int    // payload bytes left in the current frame
	opcode  byte
	ctl     []byte // a close frame's payload
}

func (w *wsBody) feed(data []byte, s *scanner, now int64) (bool, endKind, error) {
	for len(data) > 0 {
		if w.payload > 0 {
			k := min(w.payload, len(data))
			switch w.opcode {
			case 1, 0:
				s.feed(data[:k], now)
			default:
				w.ctl = append(w.ctl, data[:k]...)
			}
			w.payload -= k
			data = data[k:]
			if w.payload == 0 && w.opcode == 8 {
				end, err := closeEnd(w.ctl)
				return true, end, err
			}
			continue
		}
		w.hdr = append(w.hdr, data[0])
		data = data[1:]
		if len(w.hdr) < 2 {
			continue
		}
		need := 2
		switch w.hdr[1] & 0x7f {
		case 126:
			need = 4
		case 127:
			need = 10
		}
		if len(w.hdr) < need {
			continue
		}
		w.opcode = w.hdr[0] & 0x0f
		switch need {
		case 2:
			w.payload = int(w.hdr[1] & 0x7f)
		case 4:
			w.payload = int(binary.BigEndian.Uint16(w.hdr[2:]))
		default:
			w.payload = int(binary.BigEndian.Uint64(w.hdr[2:]))
		}
		w.hdr = w.hdr[:0]
		w.ctl = w.ctl[:0]
		if w.payload == 0 && w.opcode == 8 {
			end, err := closeEnd(nil)
			return true, end, err
		}
	}
	return false, 0, nil
}

// readBody reads a response body on a blocking connection to its end: the
// goroutine-per-stream client.
func readBody(c net.Conn, buf, rest []byte, b body, s *scanner) (endKind, error) {
	data := rest
	for {
		if over, end, err := b.feed(data, s, time.Now().UnixNano()); over {
			return end, err
		}
		if s.stall > 0 {
			time.Sleep(s.stall)
			s.stall = 0
		}
		n, err := c.Read(buf[:cap(buf)])
		s.wire.Add(int64(n))
		data = buf[:n]
		if err != nil && n == 0 {
			return endCut, err
		}
	}
}

// closeEnd reads a close frame: 1000 (normal closure) is a clean end.
func closeEnd(p []byte) (endKind, error) {
	if len(p) >= 2 && binary.BigEndian.Uint16(p) == 1000 {
		return endClean, nil
	}
	code := 1005
	if len(p) >= 2 {
		code = int(binary.BigEndian.Uint16(p))
	}
	return endCut, fmt.Errorf("websocket closed with status %d: %q", code, p[min(2, len(p)):])
}

// wsKey is a Sec-WebSocket-Key: 16 random bytes, base64.
func wsKey() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.StdEncoding.EncodeToString(b[:])
}

// maskedText frames p as a masked client text message.
func maskedText(p []byte) []byte {
	out := []byte{0x81}
	switch {
	case len(p) < 126:
		out = append(out, 0x80|byte(len(p)))
	case len(p) < 1<<16:
		out = append(out, 0x80|126, byte(len(p)>>8), byte(len(p)))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(len(p)))
	}
	var key [4]byte
	rand.Read(key[:])
	out = append(out, key[:]...)
	for i, b := range p {
		out = append(out, b^key[i%4])
	}
	return out
}

// discard is used when a response is an error: read a little for the
// message.
func discard(c net.Conn, rest []byte) string {
	b := append([]byte{}, rest...)
	more, _ := io.ReadAll(io.LimitReader(c, 512))
	return string(append(b, more...))
}
