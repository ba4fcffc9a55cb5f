package stream

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/stdlite"
)

// ErrUnreadable: the response's body is none of the dialects' (an HTML
// page, a JSON object that is not a stream, text without its content
// type). The answer fails with it; the message says what arrived.
var ErrUnreadable = errors.New("stream: cannot read the response")

// headBytes is how much of the body's start an unreadable answer's error
// quotes.
const headBytes = 64

// keepHead keeps the body's first bytes, past its leading blanks: one
// more than the error quotes, to tell that it was cut.
func (p *Pipeline) keepHead(b []byte) {
	if len(p.head) == 0 {
		i := 0
		for i < len(b) && isLeadingBlank(b[i]) {
			i++
		}
		b = b[i:]
	}
	p.head = append(p.head, b[:min(len(b), headBytes+1-len(p.head))]...)
}

// unreadable reports whether the body, now closed, is one nothing could be
// read from, rather than an answer cut before its first event: no event was
// understood and either whole events or lines came (seen) and were all
// refused, or the body does not begin as an event stream does.
func (p *Pipeline) unreadable(seen int) bool {
	if p.accepted > 0 || p.answer.events > 0 || len(p.head) == 0 {
		return false
	}
	if seen > 0 {
		return true
	}
	return (p.framing == FramingSSE || p.framing == FramingUnknown) && !sseStart(string(p.head))
}

// sseStart reports whether s begins as an event stream begins: with a
// comment or a field the standard names (a field cut short included).
func sseStart(s string) bool {
	if strings.HasPrefix(s, ":") {
		return true
	}
	for _, f := range []string{"data", "event", "id", "retry"} {
		if len(s) < len(f) {
			if strings.HasPrefix(f, s) {
				return true
			}
			continue
		}
		if strings.HasPrefix(s, f) && (len(s) == len(f) || strings.ContainsRune(":\r\n", rune(s[len(f)]))) {
			return true
		}
	}
	return false
}

// unreadableError says what arrived: the content type and the body's
// first bytes, quoted (escaped, and cut at a character).
func (p *Pipeline) unreadableError() error {
	what := "with no content type"
	if ct := stdlite.TrimSpace(p.contentType); ct != "" {
		what = "of type " + quoteCut(ct, 100)
	}
	return errtext.Wrap(ErrUnreadable.Error()+": the body ("+what+", "+strconv.FormatInt(p.received, 10)+" bytes) is not a stream in any dialect Trickle reads; it begins "+quoteCut(string(p.head), headBytes), ErrUnreadable)
}

// quoteCut quotes s as Go does (escapes for what is not printable), cut
// at a character boundary within max bytes, with "…" after a cut.
func quoteCut(s string, max int) string {
	cut := len(s) > max
	if cut {
		s = s[:max]
	}
	// A character the cut split is dropped whole (at most 3 bytes).
	for k := 0; k < utf8.UTFMax-1 && len(s) > 0; k++ {
		if r, n := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || n != 1 || !cut {
			break
		}
		s = s[:len(s)-1]
	}
	q := strconv.Quote(s)
	if cut {
		q += "…"
	}
	return q
}
