package wasm

import (
	"bytes"
	"time"
)

// retryScanner watches raw SSE bytes for the "retry:" field (WHATWG HTML,
// "Interpreting an event stream": a value of ASCII digits sets the
// reconnection time) without a second full parse: it keeps only the start of
// the current line. stream.Pipeline does the real parsing and does not
// expose the value.
type retryScanner struct {
	line    [24]byte // the start of the current line, enough for "retry: " + digits
	n       int
	long    bool // the current line is longer than line
	afterCR bool
	retry   time.Duration
}

// Write scans chunk; it never fails.
func (s *retryScanner) Write(chunk []byte) {
	for len(chunk) > 0 {
		if s.afterCR && chunk[0] == '\n' { // CRLF is one line end
			chunk = chunk[1:]
			s.afterCR = false
			continue
		}
		s.afterCR = false
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			s.keep(chunk)
			return
		}
		s.keep(chunk[:i])
		s.endLine()
		s.afterCR = chunk[i] == '\r'
		chunk = chunk[i+1:]
	}
}

func (s *retryScanner) keep(b []byte) {
	if s.long {
		return
	}
	if s.n+len(b) > len(s.line) {
		s.long = true
		return
	}
	s.n += copy(s.line[s.n:], b)
}

func (s *retryScanner) endLine() {
	line := s.line[:s.n]
	long := s.long
	s.n, s.long = 0, false
	if long || !bytes.HasPrefix(line, []byte("retry:")) {
		return
	}
	v := bytes.TrimPrefix(line[len("retry:"):], []byte(" "))
	if len(v) == 0 {
		return
	}
	ms := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return
		}
		ms = ms*10 + int(c-'0')
	}
	s.retry = time.Duration(ms) * time.Millisecond
}

// Retry is the last reconnection time the server set (0 when none).
func (s *retryScanner) Retry() time.Duration { return s.retry }
