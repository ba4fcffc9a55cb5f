package sse

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/errtext"
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

// DropHandler is a Handler that is also told about every dropped event, in
// stream order: the Parser calls Dropped (with an error wrapping
// ErrEventTooLarge) at the point of the stream where the oversize event
// ended, between the Event calls of its neighbours, however the bytes were
// cut. A caller that numbers or counts problems needs this; Write's error
// alone does not say where among the chunk's events the drop happened.
type DropHandler interface {
	Handler
	Dropped(err error)
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
// data buffer plus the event type buffer plus the line being read (default
// DefaultMaxEventSize). Beyond it the event is dropped with an error
// wrapping ErrEventTooLarge. n must be positive.
func WithMaxEventSize(n int) Option {
	return func(c *config) { c.maxEventSize = n }
}

// newConfig applies opts to the defaults and names the first option whose
// value cannot work.
func newConfig(opts []Option) (config, error) {
	c := config{maxEventSize: DefaultMaxEventSize}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxEventSize <= 0 {
		return c, &OptionError{Option: "WithMaxEventSize", Value: c.maxEventSize, Reason: "the limit must be positive"}
	}
	return c, nil
}

// maxRetryMs keeps a parsed reconnection time convertible to time.Duration
// (nanoseconds in an int64) without overflow, and fits in int everywhere.
const maxRetryMs = min(math.MaxInt, math.MaxInt64/1_000_000)

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
	started bool   // the optional BOM at byte 0 has been dealt with
	nbom    int    // bytes of a BOM held (bomBytes[:nbom]) while deciding
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

	// A block's single data value, still in the caller's chunk (valid only
	// during the Write that holds it; see materialize).
	chunk        []byte // the bytes of the current feed call
	refLo, refHi int    // the value's bounds in chunk, when hasRef
	hasRef       bool
	inPlaceValid bool            // the complete lines of the current chunk are UTF-8
	arena        strings.Builder // see str
	err          error           // the errors of the current Write, joined
}

// NewParser returns a Parser that reports to h (nil: events are decoded and
// dropped, which still tracks the last event ID). The Handler must not call
// back into the Parser. An option value that cannot work is an
// *OptionError (matching ErrBadOption) naming it.
func NewParser(h Handler, opts ...Option) (*Parser, error) {
	if h == nil {
		h = HandlerFunc(func(Event) {})
	}
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	p := &Parser{h: h, max: c.maxEventSize}
	if dh, ok := h.(DropHandler); ok {
		p.onErr = dh.Dropped
	}
	return p, nil
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
	p.hasRef = false
	p.typ = p.typ[:0]
	p.idBuf = p.lastID
	p.pending = false
	p.dropBlock = false
}

// Write decodes chunk, dispatching every event it completes. It always
// consumes the whole chunk. The error, if any, wraps ErrEventTooLarge: the
// oversize event was dropped and the events after it in chunk were still
// dispatched; the parser stays usable. When chunk ended more than one
// oversize event the error joins one error per dropped event (errors.Join),
// in stream order; a DropHandler learns of each where it happened.
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

// Close ends the byte stream. An unterminated block is discarded and the
// returned error wraps ErrIncomplete; a trailing comment, even unterminated,
// is not an unfinished event. Close leaves the parser as Reset does.
//
// The discarded block's id is never exposed. The standard sets the "last
// event ID buffer" when the id line is read, but only step 1 of "dispatch the
// event", at a blank line, copies it to the "last event ID string" that
// EventSource exposes as lastEventId and sends on reconnection; "if the file
// ends in the middle of an event, before the final empty line, the
// incomplete event is not dispatched". So LastEventID stays at the last
// dispatched value (web-platform-tests format-data-before-final-empty-line
// checks exactly this: the reconnection sends no such id).
func (p *Parser) Close() error {
	p.err = nil
	if !p.started && p.nbom > 0 {
		// A stream shorter than a BOM that began like one: the held bytes
		// are ordinary (invalid) text.
		p.started = true
		p.feed(bomBytes[:p.nbom])
	}
	p.started = true
	unfinished := p.pending || p.skip == skipLine || (p.skip == keepLine && len(p.line) > 0)
	discarded := len(p.line) + len(p.data)
	at := p.offset
	p.Reset()
	if unfinished {
		return errtext.Wrap(ErrIncomplete.Error()+" (discarded "+strconv.Itoa(discarded)+" buffered bytes at stream byte "+strconv.FormatInt(at, 10)+")", ErrIncomplete)
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
	p.inPlaceValid = validPrefix(b)
	p.chunk = b

	// lf and cr are the indexes in b of the next LF and CR at or after
	// base (-1: none left; -2: not searched yet). Each search starts where
	// the previous one's result was consumed, so every byte is looked at
	// once per kind however the lines and chunks fall: linear time even for
	// a chunk of lone CRs or a line fed a few bytes at a time.
	lf, cr := -2, -2
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
		if b[0] == '\n' && p.skip == keepLine && len(p.line) == 0 {
			// A blank line: the event's end, in the common LF form.
			b = b[1:]
			base++
			p.offset++
			p.dispatch()
			continue
		}
		if lf != -1 && lf < base {
			lf = indexFrom(b, base, '\n')
		}
		if cr != -1 && cr < base {
			cr = indexFrom(b, base, '\r')
		}
		end := lf
		if cr >= 0 && (lf < 0 || cr < lf) {
			end = cr
			p.skipLF = true
		}
		if end < 0 {
			p.partial(b)
			p.offset += int64(len(b))
			break
		}
		end -= base
		if end >= 5 && string(b[:5]) == "data:" && p.skip == keepLine && len(p.line) == 0 &&
			!p.hasRef && len(p.data) == 0 && !p.dropBlock && p.inPlaceValid && len(p.typ)+end <= p.max {
			// The line streams are made of, the first data line of its
			// block and whole in this chunk: what processLine would do,
			// without the calls.
			v := 5
			if end > 5 && b[5] == ' ' {
				v = 6
			}
			p.pending = true
			p.refLo, p.refHi, p.hasRef = base+v, base+end, true
		} else {
			p.endLine(b[:end], base)
		}
		b = b[end+1:]
		base += end + 1
		p.offset += int64(end + 1)
	}
	// The chunk belongs to the caller once Write returns: a data value kept
	// in place is copied now.
	p.materialize()
	p.chunk = nil
}

// validPrefix reports whether b, less an unfinished character at its end, is
// valid UTF-8: one fast pass in the common case. Every line that ends inside
// b is then valid too (CR and LF never split a character), so no value of
// this chunk needs checking on its own.
func validPrefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	// The chunk may end in the middle of a character: drop its lead and
	// continuation bytes (at most three) and look again.
	i := len(b) - 1
	for i >= 0 && len(b)-i <= 3 && b[i]&0xC0 == 0x80 {
		i--
	}
	if i < 0 || b[i] < 0xC0 {
		return false
	}
	return utf8.Valid(b[:i])
}

// indexFrom returns the index of c in b at or after base (b starts at base),
// or -1.
func indexFrom(b []byte, base int, c byte) int {
	if i := bytes.IndexByte(b, c); i >= 0 {
		return base + i
	}
	return -1
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
func (p *Parser) endLine(seg []byte, at int) {
	if p.skip != keepLine {
		// The line is not blank: it had bytes before this write.
		p.skip = keepLine
		return
	}
	if len(p.line) == 0 {
		p.processLine(seg, at)
		return
	}
	p.line = append(p.line, seg...)
	p.processLine(p.line, -1)
	p.line = p.line[:0]
}

func (p *Parser) fits(lineLen int) bool {
	n := len(p.data) + len(p.typ) + lineLen
	if p.hasRef {
		n += p.refHi - p.refLo + 1 // as it will be in the data buffer
	}
	return n <= p.max
}

// materialize copies a data value kept in place into the data buffer.
func (p *Parser) materialize() {
	if p.hasRef {
		p.data = append(p.data, p.chunk[p.refLo:p.refHi]...)
		p.data = append(p.data, '\n')
		p.refLo, p.refHi, p.hasRef = 0, 0, false
	}
}

// overflow reports an oversize event and drops it to its end.
func (p *Parser) overflow(size int) {
	err := errtext.Wrap(ErrEventTooLarge.Error()+": more than "+strconv.Itoa(p.max)+" bytes (reached "+strconv.Itoa(size)+") in the event before stream byte "+strconv.FormatInt(p.offset, 10)+"; event dropped", ErrEventTooLarge)
	p.data = p.data[:0]
	p.refLo, p.refHi, p.hasRef = 0, 0, false
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
		return
	}
	// A second drop in the same Write: join them flat, one error per event.
	errs := []error{p.err}
	if j, ok := p.err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	p.err = errors.Join(append(errs[:len(errs):len(errs)], err)...)
}

// processLine interprets one complete line, following "Interpreting an event
// stream". It works on raw bytes: CR, LF and ':' are ASCII, and the WHATWG
// UTF-8 decoder never folds an ASCII byte into a replacement character, so
// lines and field names split the same before and after decoding; only
// values that are kept are decoded (see text).
//
// at is where line starts in p.chunk, or -1 when it was assembled in p.line.
func (p *Parser) processLine(line []byte, at int) {
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
	if len(line) >= 5 && string(line[:5]) == "data:" {
		// The line model streams are made of, without a search for ':'.
		name, value = line[:4], line[5:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else {
		name = line
	}
	inPlace := at >= 0
	valid := inPlace && p.inPlaceValid
	switch string(name) {
	case "data":
		if inPlace && valid && !p.hasRef && len(p.data) == 0 {
			// The usual block has one data line: keep it where it is
			// and make the event's string straight from it.
			// (Offsets, not a slice: storing a pointer per event would
			// cost a GC write barrier.)
			p.refHi = at + len(line)
			p.refLo, p.hasRef = p.refHi-len(value), true
			break
		}
		p.materialize()
		p.data = append(p.data, p.text(value, valid)...)
		p.data = append(p.data, '\n')
	case "event":
		p.typ = append(p.typ[:0], p.text(value, valid)...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			v := p.text(value, valid)
			if string(v) != p.idBuf {
				p.idBuf = p.str(v)
			}
		}
	case "retry":
		if ms, ok := parseRetry(value); ok {
			p.h.Retry(ms)
		}
	}
	// Any other field name is ignored, as the standard says.
}

// text returns v decoded as UTF-8 the WHATWG way: v itself when known or
// found valid (the common case), else a copy with each maximal invalid
// subpart replaced by U+FFFD.
func (p *Parser) text(v []byte, valid bool) []byte {
	if valid || utf8.Valid(v) {
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

// Small events' Data strings are cut from shared blocks, so that a stream of
// short deltas costs one allocation per block rather than one per event. A
// retained Data string keeps at most one block (arenaBlock bytes) alive.
const (
	arenaBlock = 4 << 10
	arenaMax   = 256 // larger data gets its own allocation
)

// str returns b as a string. The block is a strings.Builder: it only ever
// appends, so the strings it has handed out never change, and it grows
// without zeroing memory first (which on js/wasm costs more than the copy).
func (p *Parser) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > arenaMax {
		return string(b)
	}
	if p.arena.Cap()-p.arena.Len() < len(b) {
		p.arena.Reset() // a new block; the old one lives on in its strings
		p.arena.Grow(arenaBlock)
	}
	off := p.arena.Len()
	p.arena.Write(b)
	return p.arena.String()[off:]
}

// dispatch runs the standard's "dispatch the event" steps at a blank line.
func (p *Parser) dispatch() {
	// Step 1 happens even when nothing is dispatched: a block with only an
	// id still moves the last event ID string (and the reconnection value).
	// (Skipped in the common case of no ids at all, where comparing or
	// storing strings per event is measurable.)
	if len(p.idBuf) != 0 || len(p.lastID) != 0 {
		p.lastID = p.idBuf
	}
	p.pending = false
	if p.dropBlock {
		p.dropBlock = false
		p.data = p.data[:0]
		p.typ = p.typ[:0]
		return
	}
	e := Event{Type: "message", LastEventID: p.lastID}
	switch {
	case p.hasRef:
		e.Data = p.str(p.chunk[p.refLo:p.refHi])
		p.hasRef = false
	case len(p.data) > 0:
		e.Data = p.str(p.data[:len(p.data)-1])
		p.data = p.data[:0]
	default:
		// Step 2: nothing to dispatch, but the event type buffer is reset.
		if len(p.typ) > 0 {
			p.typ = p.typ[:0]
		}
		return
	}
	if len(p.typ) > 0 {
		if string(p.typ) != p.lastType {
			p.lastType = string(p.typ)
		}
		e.Type = p.lastType
		p.typ = p.typ[:0]
	}
	p.h.Event(e)
}
