package sse

import (
	"strings"

	"github.com/trickle-dev/trickle/internal/stdlite"
)

// IsEventStream reports whether a Content-Type header value is
// text/event-stream, as EventSource decides it: the value is parsed as a MIME
// type (WHATWG MIME Sniffing, "parse a MIME type") and its essence, compared
// without regard to ASCII case, must be "text/event-stream". Parameters,
// charset included, are ignored: an event stream is always UTF-8. A value
// that does not parse (such as "x bogus") is not an event stream.
func IsEventStream(contentType string) bool {
	s := stdlite.Trim(contentType, httpWhitespace)
	typ, rest, ok := strings.Cut(s, "/")
	if !ok || !isToken(typ) {
		return false
	}
	sub, _, _ := strings.Cut(rest, ";")
	sub = stdlite.TrimRight(sub, httpWhitespace)
	if !isToken(sub) {
		return false
	}
	return strings.EqualFold(typ, "text") && strings.EqualFold(sub, "event-stream")
}

const httpWhitespace = "\t\n\r "

// isToken reports whether s is a non-empty run of HTTP token code points.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
