package stream

import (
	"strings"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/sse"
)

// DialectText is a body that is the answer's text itself, streamed as it
// is written (text/plain: the AI SDK's toTextStreamResponse, most small
// backends): no events, no end marker. The body's end is the answer's end;
// a body shorter than its Content-Length, or one cut by a transport error,
// is not complete.
const DialectText Dialect = "text"

// textDecoder reads DialectText. The Pipeline gives it the body as events
// of valid UTF-8 (feedText); a caller of NewDecoder gives it any text.
type textDecoder struct{}

func (textDecoder) Dialect() Dialect  { return DialectText }
func (textDecoder) EndMarker() string { return "the end of the body" }

func (textDecoder) Decode(ev sse.Event, emit func(Event)) error {
	if ev.Data != "" {
		emit(Event{Kind: KindText, Text: ev.Data})
	}
	return nil
}

// Close: the clean end of the body is the end of the answer.
func (textDecoder) Close(emit func(Event)) { emit(Event{Kind: KindEnd}) }

// textState is what a text body's reader holds between two chunks.
type textState struct {
	started bool   // the body's first bytes were past the BOM check
	held    []byte // a BOM's start, or a character cut by the chunk's end
}

// feedText gives the text decoder the chunk as text: a character cut by
// the chunk's end waits for the next chunk, and bytes that are not UTF-8
// are each U+FFFD (as utf8.DecodeRune reads them), so the text does not
// depend on the cut. A BOM at the start is dropped, as a browser's
// TextDecoder does.
func (p *Pipeline) feedText(b []byte) {
	t := &p.text
	if len(t.held) > 0 {
		b = append(t.held, b...)
		t.held = nil
	}
	if !t.started {
		bom := []byte("\xEF\xBB\xBF")
		if len(b) < len(bom) && strings.HasPrefix(string(bom), string(b)) {
			t.held = append(t.held[:0], b...)
			return
		}
		t.started = true
		if strings.HasPrefix(string(b), string(bom)) {
			b = b[len(bom):]
		}
	}
	// A possible character's start at the end waits: at most 3 bytes.
	end := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				end = i
			}
			break
		}
	}
	if end < len(b) {
		t.held = append([]byte(nil), b[end:]...)
	}
	p.textEvent(b[:end])
}

// textEvent hands one piece of the body, made valid UTF-8, to the decoder.
func (p *Pipeline) textEvent(b []byte) {
	if len(b) == 0 {
		return
	}
	p.seq++
	s := string(b)
	if !utf8.ValidString(s) {
		var v strings.Builder
		for len(s) > 0 {
			r, n := utf8.DecodeRuneInString(s)
			if r == utf8.RuneError && n == 1 {
				v.WriteString("\uFFFD")
			} else {
				v.WriteString(s[:n])
			}
			s = s[n:]
		}
		s = v.String()
	}
	if p.answer.status.Terminal() {
		return // stopped: the rest of the body is not news, and its pieces depend on the cut
	}
	if err := p.dec.Decode(sse.Event{Type: "message", Data: s}, p.emit); err != nil {
		p.skipped(sse.Event{Type: "message"}, p.seq, err)
	}
}

// closeText ends a text body. It reports whether the body is whole: not
// shorter than its Content-Length. What was held is text after all in a
// whole body (a BOM's start; a cut character, U+FFFD); a body cut short
// loses the start of a character the rest would have finished.
func (p *Pipeline) closeText() bool {
	held := p.text.held
	p.text.held = nil
	whole := p.length < 0 || p.received >= p.length
	if whole {
		p.textEvent(held)
	}
	return whole
}
