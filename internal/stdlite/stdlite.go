// Package stdlite has small stand-ins for standard library functions the
// widget calls in a few places, written for the cases it has: each links
// less code into the .wasm than the general function (issue 34,
// "Lighter"), and a fuzz target holds it to the original as its oracle.
package stdlite

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fields is strings.Fields: s split around each run of white space
// (unicode.IsSpace), an empty slice when s has none.
func Fields(s string) []string {
	out := []string{}
	start := -1
	for i, r := range s {
		switch {
		case !unicode.IsSpace(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// JoinFields is strings.Join(strings.Fields(s), " "): s with each run of
// white space made one space, and none at either end.
func JoinFields(s string) string {
	b := make([]byte, 0, len(s))
	for _, f := range Fields(s) {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, f...)
	}
	return string(b)
}

// ReplaceAll is strings.ReplaceAll for an old that is not empty: s with
// each non-overlapping old, from the left, replaced by new.
func ReplaceAll(s, old, new string) string {
	var b []byte
	for {
		i := index(s, old)
		if i < 0 {
			break
		}
		b = append(append(b, s[:i]...), new...)
		s = s[i+len(old):]
	}
	if b == nil {
		return s
	}
	return string(append(b, s...))
}

// index is strings.Index, by a plain search: the widget's olds are a few
// bytes long.
func index(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TrimSpace is strings.TrimSpace: s without the white space
// (unicode.IsSpace) at either end.
func TrimSpace(s string) string {
	start, stop := spaceBounds(s)
	return s[start:stop]
}

// TrimSpaceBytes is bytes.TrimSpace: b without the white space at either
// end, and nil when nothing is left.
func TrimSpaceBytes(b []byte) []byte {
	start, stop := spaceBounds(b)
	if start == stop {
		return nil
	}
	return b[start:stop]
}

// spaceBounds are the start of s's first character that is not white
// space and the end of its last (equal when there is none). A byte that
// is no UTF-8 reads as U+FFFD, which is not white space.
func spaceBounds[S ~string | ~[]byte](s S) (start, stop int) {
	stop = len(s)
	for start < stop {
		c := s[start]
		w := 1
		if c >= utf8.RuneSelf {
			var r rune
			r, w = utf8.DecodeRuneInString(string(s[start:min(start+utf8.UTFMax, stop)]))
			c = 'x'
			if unicode.IsSpace(r) {
				c = ' '
			}
		}
		if !isSpace(c) {
			break
		}
		start += w
	}
	for stop > start {
		c := s[stop-1]
		w := 1
		if c >= utf8.RuneSelf {
			var r rune
			r, w = utf8.DecodeLastRuneInString(string(s[max(stop-utf8.UTFMax, start):stop]))
			c = 'x'
			if unicode.IsSpace(r) {
				c = ' '
			}
		}
		if !isSpace(c) {
			break
		}
		stop -= w
	}
	return start, stop
}

// isSpace says whether the ASCII byte c is white space.
func isSpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r'
}

// Trim is strings.Trim (and bytes.Trim) for a set of ASCII characters:
// s without the bytes in set at either end (bytes.Trim's nil when nothing
// is left).
func Trim[S ~string | ~[]byte](s S, set string) S {
	return TrimLeft(s[:trimRight(s, set)], set)
}

// TrimLeft is strings.TrimLeft (and bytes.TrimLeft) for a set of ASCII
// characters.
func TrimLeft[S ~string | ~[]byte](s S, set string) S {
	if s = s[trimLeft(s, set):]; len(s) == 0 {
		var none S // bytes.TrimLeft's nil
		return none
	}
	return s
}

// TrimRight is strings.TrimRight (and bytes.TrimRight) for a set of
// ASCII characters.
func TrimRight[S ~string | ~[]byte](s S, set string) S {
	return s[:trimRight(s, set)]
}

// trimLeft is the index of s's first byte not in set (len(s) for none).
func trimLeft[S ~string | ~[]byte](s S, set string) int {
	i := 0
	for i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
		i++
	}
	return i
}

// trimRight is the end of s's last byte not in set (0 for none).
func trimRight[S ~string | ~[]byte](s S, set string) int {
	i := len(s)
	for i > 0 && strings.IndexByte(set, s[i-1]) >= 0 {
		i--
	}
	return i
}

// LastIndex is strings.LastIndex (and bytes.LastIndex): the index of the
// last sub in s, -1 when there is none, by a plain search (the widget's
// subs are a few bytes long).
func LastIndex[S ~string | ~[]byte](s S, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if string(s[i:i+len(sub)]) == sub {
			return i
		}
	}
	return -1
}
