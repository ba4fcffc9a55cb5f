package sse

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// DefaultMaxEventSize is the event size bound used when no WithMaxEventSize
// option is given: 1 MiB, far above any model's streamed chunk and far below
// what an untrusted server could make a browser tab hold.
const DefaultMaxEventSize = 1 << 20

// ErrEventTooLarge is wrapped by the error returned when one event (its data
// buffer, its event type buffer and the line being read) grows beyond the
// maximum event size. The event is dropped and the parser resynchronises at
// the next blank line; events after it are still dispatched.
var ErrEventTooLarge = errors.New("sse: event too large")

// ErrIncomplete is wrapped by the error returned when the byte stream ends in
// the middle of an event: the unterminated block is discarded, as the
// standard requires, and the caller learns that it was cut short.
var ErrIncomplete = errors.New("sse: stream ended in the middle of an event")

// Handler receives what a Parser decodes, in stream order.
type Handler interface {
	// Event is called once for each dispatched event.
	Event(Event)
	// Retry is called when a valid "retry" field is read (the standard
	// applies it at once, not at dispatch) with the new reconnection time in
	// milliseconds.
	Retry(ms int)
}

// HandlerFunc adapts a function to Handler; it ignores retry fields.
type HandlerFunc func(Event)

// Event calls f(e).
func (f HandlerFunc) Event(e Event) { f(e) }

// Retry does nothing: a HandlerFunc has no use for reconnection times.
func (HandlerFunc) Retry(int) {}

// Option configures a Parser or a Decoder.
type Option func(*config)

type config struct {
	maxEventSize int
}

// WithMaxEventSize sets the largest event the decoder holds, in bytes: the
// data buffer plus the event type buffer plus the line being read. Beyond it
// the event is dropped with an error wrapping ErrEventTooLarge. n <= 0 means
// DefaultMaxEventSize.
func WithMaxEventSize(n int) Option {
	return func(c *config) {
		if n <= 0 {
			n = DefaultMaxEventSize
		}
		c.maxEventSize = n
	}
}

func newConfig(opts []Option) config {
	c := config{maxEventSize: DefaultMaxEventSize}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// maxRetryMs keeps a parsed reconnection time convertible to time.Duration
// (nanoseconds in an int64) without overflow.
const maxRetryMs = math.MaxInt64 / 1_000_000

// What the parser does with the rest of the current line.
const (
	keepLine    = iota
	skipComment // a comment: nothing of it is needed
	skipLine    // part of an oversize event: dropped
)

// Parser is the push decoder: write the response body to it in whatever
// pieces the network delivers and it calls its Handler for each event as soon
// as the event's terminating blank line arrives.
//
// Every byte is looked at a bounded number of times whatever the cut (lines
// are searched for their ends only in new bytes), and memory is bounded by
// the maximum event size. A Parser is not safe for concurrent use.
type Parser struct {
	h     Handler
	max   int
	onErr func(error) // Decoder's hook: errors delivered in stream order

	// Byte-level state of the current stream (connection).
	started bool    // the optional BOM at byte 0 has been dealt with
	bom     [3]byte // bytes held while deciding whether they are a BOM
	nbom    int
	skipLF  bool   // the previous line ended with CR: an LF now is its tail
	line    []byte // the unfinished line, when it spans writes
	skip    int    // keepLine, skipComment or skipLine
	offset  int64  // bytes of this stream consumed, for error messages

	// Field-level state (the standard's buffers).
	data      []byte
	typ       []byte
	idBuf     string // the standard's "last event ID buffer"
	lastID    string // the "last event ID string" (what EventSource exposes)
	pending   bool   // a field line has been read since the last blank line
	dropBlock bool   // the current block overflowed: ignore it to its end
	lastType  string // the previous custom event type, reused when equal
	scratch   []byte // WHATWG UTF-8 decode output for invalid input
	err       error  // first error of the current Write
}

// NewParser returns a Parser that reports to h.
func NewParser(h Handler, opts ...Option) *Parser {
	c := newConfig(opts)
	return &Parser{h: h, max: c.maxEventSize}
}

// LastEventID returns the last event ID string: the id in force at the last
// dispatch, which is what a reconnection sends as Last-Event-ID.
func (p *Parser) LastEventID() string { return p.lastID }

// Reset prepares the parser for the byte stream of a new connection: the
// unfinished line and block are discarded, a BOM is again allowed at byte 0,
// and the last event ID is kept.
//
// The standard initialises a new stream's last event ID buffer to the empty
// string; browsers (and this parser) initialise it to the last event ID
// string instead, so that an event on the new connection without an id field
// keeps the id the reconnection was made with rather than clearing it.
func (p *Parser) Reset() {
	p.started = false
	p.nbom = 0
	p.skipLF = false
	p.line = p.line[:0]
	p.skip = keepLine
	p.offset = 0
	p.data = p.data[:0]
	p.typ = p.typ[:0]
	p.idBuf = p.lastID
	p.pending = false
	p.dropBlock = false
}

// Write decodes chunk, dispatching every event it completes. It always
// consumes the whole chunk. The error, if any, wraps ErrEventTooLarge: the
// oversize event was dropped and the events after it in chunk were still
// dispatched; the parser stays usable.
func (p *Parser) Write(chunk []byte) (int, error) {
	n := len(chunk)
	p.err = nil
	if !p.started {
		chunk = p.stripBOM(chunk)
	}
	p.feed(chunk)
	err := p.err
	p.err = nil
	return n, err
}

// Close ends the byte stream. An unterminated block is discarded, with any id
// it carried (the standard only exposes an id at dispatch), and the returned
// error wraps ErrIncomplete. Close leaves the parser as Reset does.
func (p *Parser) Close() error {
	p.err = nil
	if !p.started && p.nbom > 0 {
		// A stream shorter than a BOM that began like one: the held bytes
		// are ordinary (invalid) text.
		p.started = true
		p.feed(p.bom[:p.nbom])
	}
	p.started = true
	unfinished := p.pending || p.skip == skipLine || (p.skip == keepLine && len(p.line) > 0)
	discarded := len(p.line) + len(p.data)
	at := p.offset
	p.Reset()
	if unfinished {
		return fmt.Errorf("%w (discarded %d buffered bytes at stream byte %d)", ErrIncomplete, discarded, at)
	}
	return nil
}

var bomBytes = [3]byte{0xEF, 0xBB, 0xBF}

// stripBOM drops one UTF-8 BOM at byte 0 of the stream, even when it arrives
// split across writes (the UTF-8 decode algorithm strips it before the
// event-stream parser sees any character).
func (p *Parser) stripBOM(b []byte) []byte {
	for len(b) > 0 && p.nbom < 3 {
		if b[0] != bomBytes[p.nbom] {
			// Not a BOM: whatever was held is ordinary input.
			p.started = true
			held := p.nbom
			p.nbom = 0
			if held > 0 {
				p.feed(bomBytes[:held])
			}
			return b
		}
		p.nbom++
		b = b[1:]
		p.offset++
	}
	if p.nbom == 3 {
		p.started = true
		p.nbom = 0
	}
	return b
}

// feed splits b into lines. A line that lies wholly inside b is processed in
// place; only the unfinished tail is copied into p.line.
func (p *Parser) feed(b []byte) {
	lf := -2 // index in b of the next LF; -2 unknown, -1 none
	base := 0
	for len(b) > 0 {
		if p.skipLF {
			p.skipLF = false
			if b[0] == '\n' {
				b = b[1:]
				base++
				p.offset++
				continue
			}
		}
		// Search for LF once per LF, and for CR only up to it, so that a
		// chunk full of lone CRs (or of CRLFs) is still scanned in linear
		// time.
		if lf != -1 && lf < base {
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				lf = base + i
			} else {
				lf = -1
			}
		}
		limit := len(b)
		if lf >= 0 {
			limit = lf - base
		}
		end := bytes.IndexByte(b[:limit], '\r')
		if end < 0 {
			if lf < 0 {
				p.partial(b)
				p.offset += int64(len(b))
				return
			}
			end = limit
		} else {
			p.skipLF = true
		}
		seg := b[:end]
		b = b[end+1:]
		base += end + 1
		p.offset += int64(end + 1)
		p.endLine(seg)
	}
}

// partial holds bytes of a line whose end has not arrived yet.
func (p *Parser) partial(b []byte) {
	if p.skip != keepLine {
		return
	}
	if len(p.line) == 0 && (b[0] == ':' || p.dropBlock) {
		// Comments are never needed (and keep-alive padding can be long);
		// nor are lines of a dropped block.
		p.skip = skipComment
		if p.dropBlock {
			p.skip = skipLine
		}
		return
	}
	if !p.fits(len(p.line) + len(b)) {
		p.overflow(len(p.line) + len(b))
		p.line = p.line[:0]
		p.skip = skipLine
		return
	}
	p.line = append(p.line, b...)
}

// endLine completes the current line with its last bytes seg.
func (p *Parser) endLine(seg []byte) {
	if p.skip != keepLine {
		// The line is not blank: it had bytes before this write.
		p.skip = keepLine
		return
	}
	line := seg
	if len(p.line) > 0 {
		p.line = append(p.line, seg...)
		line = p.line
	}
	p.processLine(line)
	p.line = p.line[:0]
}

func (p *Parser) fits(lineLen int) bool {
	return len(p.data)+len(p.typ)+lineLen <= p.max
}

// overflow reports an oversize event and drops it to its end.
func (p *Parser) overflow(size int) {
	err := fmt.Errorf("%w: more than %d bytes (reached %d) in the event before stream byte %d; event dropped",
		ErrEventTooLarge, p.max, size, p.offset)
	p.data = p.data[:0]
	p.typ = p.typ[:0]
	p.dropBlock = true
	p.pending = true
	p.report(err)
}

func (p *Parser) report(err error) {
	if p.onErr != nil {
		p.onErr(err)
	}
	if p.err == nil {
		p.err = err
	}
}

// processLine interprets one complete line, following "Interpreting an event
// stream". It works on raw bytes: CR, LF and ':' are ASCII, and the WHATWG
// UTF-8 decoder never folds an ASCII byte into a replacement character, so
// lines and field names split the same before and after decoding; only
// values that are kept are decoded (see text).
func (p *Parser) processLine(line []byte) {
	if len(line) == 0 {
		p.dispatch()
		return
	}
	if line[0] == ':' {
		return
	}
	if p.dropBlock {
		return
	}
	if !p.fits(len(line)) {
		p.overflow(len(line))
		return
	}
	p.pending = true
	var name, value []byte
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else {
		name = line
	}
	switch string(name) {
	case "data":
		p.data = append(p.data, p.text(value)...)
		p.data = append(p.data, '\n')
	case "event":
		p.typ = append(p.typ[:0], p.text(value)...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			v := p.text(value)
			if string(v) != p.idBuf {
				p.idBuf = string(v)
			}
		}
	case "retry":
		if ms, ok := parseRetry(value); ok {
			p.h.Retry(ms)
		}
	}
	// Any other field name is ignored, as the standard says.
}

// text returns v decoded as UTF-8 the WHATWG way: v itself when valid (the
// common case, checked quickly), else a copy with each maximal invalid
// subpart replaced by U+FFFD.
func (p *Parser) text(v []byte) []byte {
	if utf8.Valid(v) {
		return v
	}
	p.scratch = appendWHATWG(p.scratch[:0], v)
	return p.scratch
}

// parseRetry accepts only a non-empty run of ASCII digits, as the standard
// does; huge values saturate at maxRetryMs.
func parseRetry(v []byte) (int, bool) {
	if len(v) == 0 {
		return 0, false
	}
	ms := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if ms > (maxRetryMs-9)/10 {
			ms = maxRetryMs
			continue
		}
		ms = ms*10 + int(c-'0')
	}
	return ms, true
}

// dispatch runs the standard's "dispatch the event" steps at a blank line.
func (p *Parser) dispatch() {
	// Step 1 happens even when nothing is dispatched: a block with only an
	// id still moves the last event ID string (and the reconnection value).
	p.lastID = p.idBuf
	p.pending = false
	if p.dropBlock {
		p.dropBlock = false
		p.data = p.data[:0]
		p.typ = p.typ[:0]
		return
	}
	if len(p.data) == 0 {
		// Step 2: nothing to dispatch, but the event type buffer is reset.
		p.typ = p.typ[:0]
		return
	}
	e := Event{
		Type:        "message",
		Data:        string(p.data[:len(p.data)-1]),
		LastEventID: p.lastID,
	}
	if len(p.typ) > 0 {
		if string(p.typ) != p.lastType {
			p.lastType = string(p.typ)
		}
		e.Type = p.lastType
	}
	p.data = p.data[:0]
	p.typ = p.typ[:0]
	p.h.Event(e)
}
