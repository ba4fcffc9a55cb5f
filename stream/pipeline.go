package stream

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/sse"
)

// Framing is how a response body is cut into events.
type Framing int

// The framings. FramingUnknown until the content type or the first byte
// says.
const (
	FramingUnknown Framing = iota
	// FramingSSE: text/event-stream, decoded by package sse.
	FramingSSE
	// FramingNDJSON: one JSON object per line (Ollama).
	FramingNDJSON
	// FramingText: the body is the answer's text (DialectText).
	FramingText
)

func (f Framing) String() string {
	switch f {
	case FramingSSE:
		return "sse"
	case FramingNDJSON:
		return "ndjson"
	case FramingText:
		return "text"
	}
	return "unknown"
}

// DefaultMaxEventSize bounds one SSE event or NDJSON line when no
// WithMaxEventSize is given: the bound package sse uses by default.
const DefaultMaxEventSize = sse.DefaultMaxEventSize

// Option configures a Pipeline.
type Option func(*Pipeline)

// WithDialect fixes the dialect (one of Dialects) instead of detecting it;
// DialectAuto or "" (the default) detects it from the content type and the
// first event. NewPipeline refuses a value that is not a Dialect constant
// (read one with ParseDialect) with an *OptionError that also matches
// ErrUnknownDialect.
func WithDialect(d Dialect) Option {
	return func(p *Pipeline) { p.want = d }
}

// WithContentType gives the response's Content-Type header:
// text/event-stream selects SSE framing; application/x-ndjson,
// application/json and their kin select NDJSON lines (Ollama); text/plain
// and text/markdown make the body the answer's text (DialectText). Without
// it the first non-blank byte decides: '{' means NDJSON, anything else SSE.
// WithResponse gives it with the response's other headers.
func WithContentType(ct string) Option {
	return func(p *Pipeline) { p.contentType = ct }
}

// WithEventHandler calls h for every unified event applied to the answer,
// in stream order (events after the answer ended are not delivered).
func WithEventHandler(h func(Event)) Option {
	return func(p *Pipeline) { p.handler = h }
}

// WithMaxEventSize bounds one SSE event or NDJSON line, in bytes (default
// DefaultMaxEventSize; n must be positive). A larger event is dropped and
// counted as a skip (its error wraps ErrEventTooLarge); the events after
// it are still read.
func WithMaxEventSize(n int) Option {
	return func(p *Pipeline) { p.maxEvent = n }
}

// WithRelayStatus(false) ignores "trickle.status" events (StatusEventType):
// for bytes that come from a model's service rather than a relay, where
// such an event is not the relay's and must not end the answer (the
// relay's upstream proxy reads its upstream with it). The default, true,
// reads them as the relay's terminal status.
func WithRelayStatus(read bool) Option {
	return func(p *Pipeline) { p.ignoreStatus = !read }
}

// Pipeline is the browser's pipeline without the browser: response bytes
// in (SSE or NDJSON, any dialect), an Answer out. Feed it with Write as the
// bytes arrive, in any cut; the result does not depend on the cut. It is
// not safe for concurrent use.
type Pipeline struct {
	want        Dialect
	contentType string
	length      int64 // the body's Content-Length, -1 when unknown
	uiStream    bool  // the response says it is a UI message stream
	received    int64 // bytes of this connection's body so far
	handler     func(Event)
	maxEvent    int
	retry       time.Duration // the server's last retry: field

	ignoreStatus bool // trickle.status events are not a relay's (WithRelayStatus)

	framing Framing
	sniff   []byte // leading blank bytes held until the framing is known
	text    textState
	parser  *sse.Parser
	line    []byte // the unfinished NDJSON line
	tooLong bool   // the NDJSON line being read exceeded maxEvent

	dec       Decoder
	answer    *Answer
	seq       int    // SSE events / NDJSON lines seen
	accepted  int    // events the decoder read without an error
	head      []byte // the body's first bytes after its leading blanks (unreadable)
	reopen    bool   // the terminal status may be undone by Reconnect
	truncated bool   // the last Close ended mid-event

	// A JSON body is held until its first line says whether it is NDJSON
	// or one JSON completion (a backend that ignored stream: true), and to
	// its end when that line is not JSON on its own (a completion written
	// over several lines): see hold.
	holding bool
	pretty  bool   // the first line is not JSON alone: held to the end
	whole   []byte // the bytes held
	// scanned: the bytes of whole searched for the first line's end;
	// lineStart: where the first line that is not blank starts.
	scanned, lineStart int
}

// NewPipeline returns a pipeline waiting for its first bytes. An option
// value that cannot work is an *OptionError (matching ErrBadOption) naming
// it.
func NewPipeline(opts ...Option) (*Pipeline, error) {
	p := &Pipeline{maxEvent: DefaultMaxEventSize, answer: NewAnswer(), length: -1}
	for _, o := range opts {
		if o != nil {
			o(p)
		}
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	if p.want != "" && p.want != DialectAuto {
		p.dec = decoders[p.want]()
	}
	var err error
	if p.parser, err = sse.NewParser(sseSink{p}, sse.WithMaxEventSize(p.maxEvent)); err != nil {
		return nil, err
	}
	p.frame()
	return p, nil
}

// frame decides the framing from the dialect and the content type, as far
// as they tell before the first byte.
func (p *Pipeline) frame() {
	p.framing = framingOf(p.contentType)
	switch {
	case p.want == DialectText:
		p.framing = FramingText
	case p.framing == FramingText && p.dec != nil:
		// A dialect was asked for: its events, whatever the content type
		// says, are found by the first byte.
		p.framing = FramingUnknown
	case p.framing == FramingText:
		p.dec = &textDecoder{}
	case p.uiStream && p.dec == nil:
		p.dec = &aisdkDecoder{}
		p.framing = FramingSSE
	}
	p.holding = p.framing == FramingNDJSON
}

// framingOf reads a Content-Type header: its media type is what comes
// before the first ";", trimmed and lower-cased (RFC 9110 §8.3.1). Parameters
// never change the framing, so they are not parsed (package mime would do
// the same, and the widget is kept free of it for its size: see
// TestTheDefaultWidgetLinksNoneOfTheHeavyPackagesItDropped in
// wasm/internal/build).
func framingOf(ct string) Framing {
	if ct == "" {
		return FramingUnknown
	}
	mt, _, _ := strings.Cut(ct, ";")
	switch strings.ToLower(stdlite.TrimSpace(mt)) {
	case "text/event-stream":
		return FramingSSE
	case "application/x-ndjson", "application/ndjson", "application/jsonl",
		"application/x-jsonlines", "application/jsonlines", "application/json":
		return FramingNDJSON
	case "text/plain", "text/markdown":
		return FramingText
	}
	return FramingUnknown
}

// Answer is the answer being accumulated (the same value throughout).
func (p *Pipeline) Answer() *Answer { return p.answer }

// Dialect names the dialect in use, or DialectAuto while it is not known
// yet.
func (p *Pipeline) Dialect() Dialect {
	if p.dec == nil {
		return DialectAuto
	}
	return p.dec.Dialect()
}

// Framing says how the bytes are being cut into events.
func (p *Pipeline) Framing() Framing { return p.framing }

// LastEventID is the SSE last event ID, the value to resume with.
func (p *Pipeline) LastEventID() string { return p.parser.LastEventID() }

// Retry is the reconnection time the server last set with an SSE "retry:"
// field (0 when none): what a caller that resumes the stream should wait.
func (p *Pipeline) Retry() time.Duration { return p.retry }

// Write feeds raw response bytes. It always consumes the whole chunk and
// never fails: undecodable events are skipped and counted in the Answer,
// not returned (the error is io.Writer's, always nil).
func (p *Pipeline) Write(chunk []byte) (int, error) {
	n := len(chunk)
	p.received += int64(n)
	if len(p.head) <= headBytes {
		p.keepHead(chunk)
	}
	if p.framing == FramingUnknown {
		// Sniff: the first byte that is not a BOM or blank decides.
		i := 0
		for i < len(chunk) && isLeadingBlank(chunk[i]) {
			i++
		}
		if i == len(chunk) {
			p.sniff = append(p.sniff, chunk...)
			if len(p.sniff) > p.maxEvent {
				p.sniff = p.sniff[:0] // blank bytes carry nothing
			}
			return n, nil
		}
		p.framing = FramingSSE
		if chunk[i] == '{' {
			p.framing = FramingNDJSON
			p.holding = true
		}
		held := p.sniff
		p.sniff = nil
		p.feed(held)
	}
	p.feed(chunk)
	return n, nil
}

func isLeadingBlank(b byte) bool {
	return b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == 0xEF || b == 0xBB || b == 0xBF
}

func (p *Pipeline) feed(b []byte) {
	if len(b) == 0 {
		return
	}
	switch p.framing {
	case FramingSSE:
		p.feedSSE(b)
		return
	case FramingText:
		p.feedText(b)
		return
	}
	if p.holding {
		p.hold(b)
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.appendLine(b)
			return
		}
		if len(p.line) == 0 && !p.tooLong && i <= p.maxEvent {
			// A whole line inside the chunk is read in place, not copied.
			p.ndjsonLine(b[:i])
			b = b[i+1:]
			continue
		}
		p.appendLine(b[:i])
		if p.tooLong {
			p.tooLong = false
			p.seq++
			p.skipped(sse.Event{Type: "message"}, p.seq, errtext.Wrap(ErrEventTooLarge.Error()+": an NDJSON line is longer than "+strconv.Itoa(p.maxEvent)+" bytes", ErrEventTooLarge))
		} else {
			p.ndjsonLine(p.line)
		}
		p.line = p.line[:0]
		b = b[i+1:]
	}
}

// feedSSE gives the SSE parser the chunk as it came: the parser tells
// sseSink about each dropped event where it happens among the others, so
// the count and the order of the problems do not depend on how the bytes
// were cut (Write's joined error is not needed).
func (p *Pipeline) feedSSE(b []byte) {
	_, _ = p.parser.Write(b)
}

// sseSink receives the SSE parser's events and drops for its Pipeline.
type sseSink struct{ p *Pipeline }

func (s sseSink) Event(ev sse.Event) { s.p.event(ev) }

// Retry keeps the server's reconnection time for the caller that reconnects.
func (s sseSink) Retry(ms int) { s.p.retry = time.Duration(ms) * time.Millisecond }

// Dropped numbers the dropped event: it is an event of the stream. The
// parser's own message gives byte counts that depend on where the bytes
// were cut, so the problem names the bound.
func (s sseSink) Dropped(error) {
	p := s.p
	p.seq++
	p.skipped(sse.Event{Type: "message"}, p.seq, errtext.Wrap2(ErrEventTooLarge.Error()+": an SSE event is longer than "+strconv.Itoa(p.maxEvent)+" bytes ("+sse.ErrEventTooLarge.Error()+")", ErrEventTooLarge, sse.ErrEventTooLarge))
}

// appendLine grows the unfinished line, dropping it (and remembering that)
// once it passes the bound so a line without end cannot grow memory.
func (p *Pipeline) appendLine(b []byte) {
	if p.tooLong {
		return
	}
	if len(p.line)+len(b) > p.maxEvent {
		p.tooLong = true
		p.line = p.line[:0]
		return
	}
	p.line = append(p.line, b...)
}

func (p *Pipeline) ndjsonLine(line []byte) {
	if p.seq == 0 {
		line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF")) // a BOM before the first line
	}
	line = stdlite.TrimSpaceBytes(line)
	if len(line) == 0 {
		return
	}
	p.event(sse.Event{Type: "message", Data: string(line)})
}

// event handles one SSE event or NDJSON line.
func (p *Pipeline) event(ev sse.Event) {
	p.seq++
	if ev.Type == StatusEventType {
		if !p.ignoreStatus {
			p.status(ev)
		}
		return
	}
	if p.answer.status.Terminal() {
		if t, ok := p.dec.(trailer); ok && t.trailer(ev) {
			return
		}
		p.skipped(ev, p.seq, ErrAfterEnd)
		return
	}
	if p.dec == nil {
		name := Detect(ev)
		if name == "" && p.framing == FramingNDJSON {
			name = DialectOllama
		}
		if name == "" {
			p.skipped(ev, p.seq, ErrUndetected)
			return
		}
		p.dec, _ = NewDecoder(name)
	}
	if err := p.dec.Decode(ev, p.emit); err != nil {
		p.skipped(ev, p.seq, err)
		return
	}
	p.accepted++
}

func (p *Pipeline) emit(ev Event) {
	if p.answer.Apply(ev) && p.handler != nil {
		p.handler(ev)
	}
}

func (p *Pipeline) skipped(ev sse.Event, seq int, err error) {
	p.answer.skip(&DecodeError{Dialect: p.Dialect(), Event: seq, Type: ev.Type, Err: err})
}

// Close ends the byte stream cleanly (the connection closed). The answer
// is complete if the dialect's end marker came; otherwise it becomes
// Incomplete and Close returns the reason, wrapping ErrIncomplete.
func (p *Pipeline) Close() error {
	if p.holding {
		p.closeHeld()
	}
	clean := true
	seen := p.seq // whole events or lines that came, before a cut last one
	switch p.framing {
	case FramingSSE:
		if err := p.parser.Close(); err != nil {
			clean = false
		}
	case FramingNDJSON:
		// The last line may lack its newline; it is still a whole object.
		if p.tooLong {
			p.tooLong = false
			p.seq++
			p.skipped(sse.Event{Type: "message"}, p.seq, errtext.Wrap(ErrEventTooLarge.Error()+": an NDJSON line is longer than "+strconv.Itoa(p.maxEvent)+" bytes", ErrEventTooLarge))
			clean = false
		} else if len(stdlite.TrimSpaceBytes(p.line)) > 0 {
			if !jsonx.Valid(string(stdlite.TrimSpaceBytes(p.line))) {
				clean = false
			}
			p.ndjsonLine(p.line)
			if clean {
				seen = p.seq
			}
		}
		p.line = p.line[:0]
	case FramingText:
		clean = p.closeText()
	}
	p.truncated = !clean
	if clean && p.dec != nil && !p.answer.status.Terminal() {
		p.dec.Close(p.emit)
	}
	if p.answer.status.Terminal() {
		return nil
	}
	if p.unreadable(seen) {
		// Not a cut answer: nothing in it could be read. The answer fails
		// with what arrived, for the developer who sees it.
		p.answer.end(Failed, p.unreadableError())
		p.reopen = true
		return nil
	}
	err := p.incompleteError()
	p.answer.end(Incomplete, err)
	p.reopen = true
	return err
}

func (p *Pipeline) incompleteError() error {
	where := "in the middle of an event"
	if !p.truncated {
		where = "between events"
	}
	if p.dec == nil {
		return errtext.Wrap(ErrIncomplete.Error()+": the stream closed "+where+" after "+strconv.Itoa(p.seq)+" events before its dialect was known", ErrIncomplete)
	}
	if p.framing == FramingText {
		return errtext.Wrap(ErrIncomplete.Error()+": the text body closed after "+strconv.FormatInt(p.received, 10)+" of the "+strconv.FormatInt(p.length, 10)+" bytes its Content-Length announced", ErrIncomplete)
	}
	return errtext.Wrap(ErrIncomplete.Error()+": "+p.dec.Dialect().String()+" stream closed "+where+" after "+strconv.Itoa(p.seq)+" events without "+p.dec.EndMarker(), ErrIncomplete)
}

// Reconnect prepares for the byte stream of a new connection after a drop
// (a resume with LastEventID): the byte-level decoder starts afresh, the
// answer and the last event ID are kept. An answer made Incomplete by
// Close, or Failed by Fail, is streaming again; other terminal statuses
// stay.
func (p *Pipeline) Reconnect() {
	p.parser.Reset()
	p.received, p.length = 0, -1
	p.line = p.line[:0]
	p.tooLong = false
	p.truncated = false
	p.holding, p.pretty, p.whole, p.scanned, p.lineStart = false, false, nil, 0, 0
	if p.reopen && (p.answer.status == Incomplete || p.answer.status == Failed) {
		p.answer.status, p.answer.err = Streaming, nil
		if p.answer.events == 0 {
			p.answer.status = Waiting
		}
	}
	p.reopen = false
}

// Stop records that the user stopped the answer: it becomes Stopped (with
// ErrStopped) unless it had already ended.
func (p *Pipeline) Stop() {
	p.answer.end(Stopped, ErrStopped)
	p.reopen = false
}

// Cut records that the caller gave up on the byte stream (it went silent
// for too long): the answer becomes Incomplete with err, wrapped in
// ErrIncomplete, keeping its text, unless it had already ended.
func (p *Pipeline) Cut(err error) {
	if p.answer.status.Terminal() {
		return
	}
	p.answer.end(Incomplete, errtext.Wrap2(ErrIncomplete.Error()+": "+errtext.Text(err), ErrIncomplete, err))
	p.reopen = false
}

// Fail records a transport failure (network error, aborted body): the
// answer becomes Failed with err, keeping its text, unless it had already
// ended. Reconnect can take it back to streaming.
func (p *Pipeline) Fail(err error) {
	if p.answer.status.Terminal() {
		return
	}
	if err == nil {
		err = errors.New("unknown transport error")
	}
	p.answer.end(Failed, errtext.Wrap("stream: transport failed after "+strconv.Itoa(p.seq)+" events: "+errtext.Text(err), err))
	p.reopen = true
}

// hold keeps the bytes of a JSON body until its first line decides what
// it is. A first line that is JSON on its own is NDJSON (the lines are
// read as they come from then on), unless it is one JSON completion, the
// whole answer. A first line that is not JSON alone may begin a
// completion written over several lines: the body is held to its end
// (closeHeld). The decisions depend on the bytes, never on how they were
// cut, and the bound is the event size's: a body over it is read as
// lines, as it always was.
func (p *Pipeline) hold(b []byte) {
	p.whole = append(p.whole, b...)
	if p.pretty {
		if len(p.whole) > p.maxEvent {
			p.release()
		}
		return
	}
	line, ok := p.firstLine()
	switch {
	case !ok:
		if len(p.whole) > p.maxEvent {
			p.release() // a first line over the bound: lines drop it
		}
	case len(line) > p.maxEvent:
		p.release()
	case !jsonx.Valid(string(line)):
		p.pretty = true
		if len(p.whole) > p.maxEvent {
			p.release()
		}
	default:
		if !p.completion(string(line)) {
			p.release()
			return
		}
		rest := p.whole[p.scanned:]
		p.holding, p.whole = false, nil
		p.feed(rest) // after the end: skipped as after the end
	}
}

// release stops holding: what was held is read as NDJSON lines.
func (p *Pipeline) release() {
	held := p.whole
	p.holding, p.pretty, p.whole = false, false, nil
	p.feed(held)
}

// closeHeld reads a body held to its end: one JSON completion is the
// answer; another single JSON object, written over several lines, is
// read as one NDJSON line (Gemini's generateContent response and Ollama's
// done:true object are their chunks' shape); anything else as lines.
func (p *Pipeline) closeHeld() {
	all := stdlite.TrimSpaceBytes(bytes.TrimPrefix(stdlite.TrimLeft(p.whole, " \t\r\n"), []byte("\xEF\xBB\xBF")))
	if len(all) > 0 && all[0] == '{' && jsonx.Valid(string(all)) {
		p.holding, p.pretty, p.whole = false, false, nil
		if !p.completion(string(all)) {
			p.ndjsonLine(jsonx.AppendCompact(nil, string(all)))
		}
		return
	}
	p.release()
}

// firstLine is the held body's first line that is not blank, trimmed
// (and a BOM before it dropped); ok is false until its newline came. It
// looks for newlines only in the bytes it has not scanned yet, so a long
// line fed a few bytes at a time is not scanned again and again.
func (p *Pipeline) firstLine() (line []byte, ok bool) {
	for {
		i := bytes.IndexByte(p.whole[p.scanned:], '\n')
		if i < 0 {
			p.scanned = len(p.whole)
			return nil, false
		}
		end := p.scanned + i
		l := stdlite.TrimSpaceBytes(bytes.TrimPrefix(p.whole[p.lineStart:end], []byte("\xEF\xBB\xBF")))
		p.scanned = end + 1
		if len(l) > 0 {
			return l, true
		}
		p.lineStart = p.scanned
	}
}

// completion reads data as one JSON completion, the whole answer, and
// reports whether it was one.
func (p *Pipeline) completion(data string) bool {
	var evs []Event
	d, ok := completionEvents(data, func(ev Event) { evs = append(evs, ev) })
	if !ok {
		return false
	}
	p.seq++
	if p.dec == nil || p.dec.Dialect() != d {
		p.dec, _ = NewDecoder(d)
	}
	for _, ev := range evs {
		p.emit(ev)
	}
	p.accepted++
	return true
}
