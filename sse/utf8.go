package sse

import "unicode/utf8"

// appendWHATWG appends b decoded with the WHATWG Encoding standard's UTF-8
// decoder (error mode "replacement") and re-encoded as UTF-8: every maximal
// subpart of an ill-formed sequence becomes one U+FFFD, and a byte that
// breaks a sequence is then read again on its own. This differs from Go's
// range-over-string, which replaces each invalid byte separately (E2 82 41
// is "\uFFFDA" here, "\uFFFD\uFFFDA" there).
//
// b is always a whole line (or a part of one ended by ASCII), so a sequence
// left unfinished at the end of b is an error here exactly as it is at a line
// end in the stream: callers keep an unfinished line's bytes until its end
// arrives, which is what makes the decoding incremental.
func appendWHATWG(dst, b []byte) []byte {
	var (
		cp, needed, seen int
		lower, upper     byte = 0x80, 0xBF
	)
	for i := 0; i < len(b); {
		c := b[i]
		if needed == 0 {
			i++
			switch {
			case c < 0x80:
				dst = append(dst, c)
			case c >= 0xC2 && c <= 0xDF:
				needed, cp = 1, int(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					lower = 0xA0
				} else if c == 0xED {
					upper = 0x9F
				}
				needed, cp = 2, int(c&0x0F)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					lower = 0x90
				} else if c == 0xF4 {
					upper = 0x8F
				}
				needed, cp = 3, int(c&0x07)
			default:
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
			continue
		}
		if c < lower || c > upper {
			// The sequence so far is one error; c is read again (no i++).
			cp, needed, seen = 0, 0, 0
			lower, upper = 0x80, 0xBF
			dst = utf8.AppendRune(dst, utf8.RuneError)
			continue
		}
		i++
		lower, upper = 0x80, 0xBF
		cp = cp<<6 | int(c&0x3F)
		seen++
		if seen == needed {
			dst = utf8.AppendRune(dst, rune(cp))
			cp, needed, seen = 0, 0, 0
		}
	}
	if needed != 0 {
		dst = utf8.AppendRune(dst, utf8.RuneError)
	}
	return dst
}
