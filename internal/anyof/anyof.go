// Package anyof finds the first or last of a set of characters in text,
// as strings.IndexAny and bytes.LastIndexAny do, for the widget: those
// functions are general (any set, Unicode), and their code costs the
// .wasm more than these loops (docs/notes/widget-size.md). Fuzz tests hold
// each function to the standard library's as its oracle. It never
// allocates.
package anyof

import (
	"strings"
	"unicode/utf8"
)

// Index is strings.IndexAny(s, set) (or bytes.IndexAny) for a set of
// ASCII characters: the byte index of the first byte of s in set, or -1.
// A byte of a multi-byte character is never ASCII, so no character is cut.
func Index[S ~string | ~[]byte](s S, set string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf && strings.IndexByte(set, s[i]) >= 0 {
			return i
		}
	}
	return -1
}

// Contains is strings.ContainsAny(s, set) for a set of ASCII characters.
func Contains(s, set string) bool { return Index(s, set) >= 0 }

// LastIndex is bytes.LastIndexAny(s, set) for a set of characters without
// U+FFFD: the byte index of the last character of s in set, or -1. Bytes
// that are not UTF-8 match nothing.
func LastIndex(s []byte, set string) int {
	for i := len(s); i > 0; {
		r, n := utf8.DecodeLastRune(s[:i])
		i -= n
		if (r != utf8.RuneError || n > 1) && strings.ContainsRune(set, r) {
			return i
		}
	}
	return -1
}
