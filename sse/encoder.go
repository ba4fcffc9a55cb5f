package sse

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/internal/errtext"
)

// ErrInvalidMessage is wrapped by Encode's error for a message that cannot
// be written faithfully: an ID or event name containing CR or LF (they would
// end the field early and inject other fields), or an ID containing NUL
// (every receiver ignores such an id).
var ErrInvalidMessage = errors.New("sse: invalid message")

// Message is one event to write.
type Message struct {
	// ID, when not empty, is written as the "id" field.
	ID string
	// Event, when not empty, is written as the "event" field; receivers
	// default it to "message".
	Event string
	// Data is the payload; every line of it (split at CRLF, LF or CR) becomes
	// one "data" field, so receivers get it back with line ends as "\n".
	// It should be UTF-8: receivers replace invalid bytes with U+FFFD.
	Data string
	// Retry, when positive, is written as the "retry" field, in whole
	// milliseconds.
	Retry time.Duration
}

// Validate reports whether m can be written as it is (see ErrInvalidMessage).
func (m Message) Validate() error {
	if i := strings.IndexAny(m.ID, "\r\n\x00"); i >= 0 {
		return errtext.Wrap(ErrInvalidMessage.Error()+": id "+strconv.Quote(m.ID)+" has "+strconv.QuoteRune(rune(m.ID[i]))+" at byte "+strconv.Itoa(i), ErrInvalidMessage)
	}
	if i := strings.IndexAny(m.Event, "\r\n"); i >= 0 {
		return errtext.Wrap(ErrInvalidMessage.Error()+": event name "+strconv.Quote(m.Event)+" has "+strconv.QuoteRune(rune(m.Event[i]))+" at byte "+strconv.Itoa(i), ErrInvalidMessage)
	}
	return nil
}

// AppendMessage appends the exact bytes of one event to dst, ending with the
// blank line that dispatches it. It always writes at least one data line, so
// every message is one event on the receiving side (an empty Data arrives as
// an event with empty data).
//
// It cannot fail, so it never writes a field that would break the stream: CR
// and LF are removed from ID and Event, and NUL from ID (a field left empty
// by that is not written). Use Encode (or Validate) to have such a message
// refused instead.
func AppendMessage(dst []byte, m Message) []byte {
	// A field that is empty once stripped is left out: an empty "id" line
	// would reset the receiver's last event ID.
	if start := len(dst); m.Event != "" {
		dst = append(dst, "event: "...)
		if dst = appendWithout(dst, m.Event, "\r\n"); len(dst) == start+len("event: ") {
			dst = dst[:start]
		} else {
			dst = append(dst, '\n')
		}
	}
	if start := len(dst); m.ID != "" {
		dst = append(dst, "id: "...)
		if dst = appendWithout(dst, m.ID, "\r\n\x00"); len(dst) == start+len("id: ") {
			dst = dst[:start]
		} else {
			dst = append(dst, '\n')
		}
	}
	if m.Retry > 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, m.Retry.Milliseconds(), 10)
		dst = append(dst, '\n')
	}
	dst = appendLines(dst, "data", m.Data)
	return append(dst, '\n')
}

// AppendComment appends a comment (ignored by receivers; useful as a
// keep-alive). Each line of text becomes one comment line.
func AppendComment(dst []byte, text string) []byte {
	return appendLines(dst, "", text)
}

// appendLines writes one "<name>: <line>\n" per line of s, splitting at CRLF,
// LF and CR exactly as the decoder does. An empty name writes comments.
func appendLines(dst []byte, name, s string) []byte {
	for {
		i := strings.IndexAny(s, "\r\n")
		line := s
		if i >= 0 {
			line = s[:i]
		}
		dst = append(dst, name...)
		dst = append(dst, ':')
		// The space is always written for data so that a line starting with
		// a space keeps it (the decoder removes exactly one).
		if name != "" || line != "" {
			dst = append(dst, ' ')
		}
		dst = append(dst, line...)
		dst = append(dst, '\n')
		if i < 0 {
			return dst
		}
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
}

func appendWithout(dst []byte, s, drop string) []byte {
	for {
		i := strings.IndexAny(s, drop)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		s = s[i+1:]
	}
}

// Encoder writes events to an io.Writer and flushes after each one, so that
// nothing waits in a buffer between the model and the reader.
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an Encoder writing to w. When w is an http.Flusher or
// has a Flush() error method, it is flushed after every write.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode validates m (see Message.Validate), writes it as one event and
// flushes.
func (e *Encoder) Encode(m Message) error {
	if err := m.Validate(); err != nil {
		return err
	}
	e.buf = AppendMessage(e.buf[:0], m)
	return e.write("event")
}

// Comment writes a comment line per line of text and flushes.
func (e *Encoder) Comment(text string) error {
	e.buf = AppendComment(e.buf[:0], text)
	return e.write("comment")
}

func (e *Encoder) write(what string) error {
	if _, err := e.w.Write(e.buf); err != nil {
		return errtext.Wrap("sse: writing "+what+": "+errtext.Text(err), err)
	}
	switch f := e.w.(type) {
	case interface{ Flush() error }:
		if err := f.Flush(); err != nil {
			return errtext.Wrap("sse: flushing "+what+": "+errtext.Text(err), err)
		}
	case interface{ Flush() }:
		// http.Flusher, matched by shape: importing net/http would weigh on
		// the browser build, which only decodes.
		f.Flush()
	}
	return nil
}
