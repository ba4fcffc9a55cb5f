package jsonx

import (
	"math"
	"strconv"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as encoding/json.Marshal
// writes it: besides quotes, backslashes and control characters it escapes
// <, > and & and U+2028/U+2029, so the text is safe inside HTML <script>
// and JavaScript source, and each byte that is not UTF-8 becomes \ufffd.
//
// Not inlined: the widget quotes at many call sites, and a call at each
// keeps its .wasm smaller than appendString inlined with its flag (make
// size; docs/notes/widget-size.md).
//
//go:noinline
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, true) }

// AppendStringKeepHTML appends s as a JSON string as encoding/json's
// Encoder writes it after SetEscapeHTML(false): as AppendString, but <, >
// and & stay as they are (text that must arrive byte for byte, as a
// provider sends it). Both come from one function, the tree's one JSON
// string quoter.
func AppendStringKeepHTML(dst []byte, s string) []byte { return appendString(dst, s, false) }

func appendString(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendCompact appends the JSON value raw (which must be valid) without
// the whitespace between tokens and with <, >, &, U+2028 and U+2029
// escaped, as encoding/json.Marshal writes a json.RawMessage.
func AppendCompact(dst []byte, raw string) []byte {
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString && c == '\\':
			dst = append(dst, c, raw[i+1])
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString && isSpace(c):
			continue
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			continue
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
			i += 2
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// AppendFloat appends f as encoding/json.Marshal writes a float64: the
// shortest decimal that reads back the same, in exponent form only below
// 1e-6 or from 1e21 on. It reports false, appending nothing, for NaN and
// the infinities, which JSON cannot hold.
func AppendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9, as encoding/json does.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}
