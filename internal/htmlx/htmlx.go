// Package htmlx is the HTML text escaping and character-reference decoding
// the WebAssembly widget links instead of the standard library's html
// package, whose entity table and strings.Replacer cost the widget's
// download about 10 KB of brotli for two functions. The named character
// references come from goldmark's table (linked anyway: goldmark's parser
// decodes references with it), so the widget carries one table, not two.
//
// Its results are html.EscapeString's and html.UnescapeString's, byte for
// byte; the tests hold it to that with the html package as the oracle.
package htmlx

import (
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/util"

	"github.com/trickle-dev/trickle/internal/anyof"
)

// Escape is html.EscapeString: <, >, &, ' and " as &lt;, &gt;, &amp;,
// &#39; and &#34;, everything else as it is.
func Escape(s string) string {
	i := anyof.Index(s, `<>&'"`)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i >= 0 {
		b.WriteString(s[:i])
		switch s[i] {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\'':
			b.WriteString("&#39;")
		case '"':
			b.WriteString("&#34;")
		}
		s = s[i+1:]
		i = anyof.Index(s, `<>&'"`)
	}
	b.WriteString(s)
	return b.String()
}

// Unescape is html.UnescapeString: the character references of s (&amp;,
// &#233;, &#xE9;, and the legacy names an HTML parser accepts without
// their semicolon, &copy) decoded as in a text node, the rest as it is.
func Unescape(s string) string {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i >= 0 {
		b = append(b, s[:i]...)
		s = s[i:]
		n, r, text := reference(s)
		switch {
		case n == 0:
			b = append(b, '&')
			n = 1
		case text != nil:
			b = append(b, text...)
		default:
			b = utf8.AppendRune(b, r)
		}
		s = s[n:]
		i = strings.IndexByte(s, '&')
	}
	return string(append(b, s...))
}

// reference reads the character reference at the start of s (s[0] is
// '&'): how many bytes it takes, and what it stands for, a rune or text
// (a named reference). n is 0 when s holds none.
func reference(s string) (n int, r rune, text []byte) {
	if len(s) < 2 {
		return 0, 0, nil
	}
	if s[1] == '#' {
		return numeric(s)
	}
	// The longest run of ASCII letters and digits, with the ';' after it.
	i := 1
	for i < len(s) && isAlnum(s[i]) {
		i++
	}
	name := s[1:i]
	if i < len(s) && s[i] == ';' {
		if e, ok := util.LookUpHTML5EntityByName(name); ok && name != "" {
			return i + 1, 0, e.Characters
		}
		if name == "Abreve" { // the one name goldmark's table lacks
			return i + 1, 'Ă', nil
		}
	} else if legacy(name) {
		e, _ := util.LookUpHTML5EntityByName(name)
		return i, 0, e.Characters
	}
	// A legacy name that starts the run ("&notin" read as "&not" + "in").
	for j := min(len(name)-1, longestLegacy); j > 1; j-- {
		if legacy(name[:j]) {
			e, _ := util.LookUpHTML5EntityByName(name[:j])
			return j + 1, 0, e.Characters
		}
	}
	return 0, 0, nil
}

// numeric reads &#N; or &#xH; (the ';' optional): the code point, with
// those an HTML parser does not take (NUL, surrogates, past U+10FFFF) as
// U+FFFD and the C1 controls as the Windows-1252 characters they stand
// for. The value wraps around as a 32-bit integer, as the html package's
// does, so an overlong reference decodes as it does there.
func numeric(s string) (n int, r rune, text []byte) {
	if len(s) < 4 {
		return 0, 0, nil
	}
	i := 2
	hex := s[i] == 'x' || s[i] == 'X'
	if hex {
		i++
	}
	for i < len(s) {
		d := digit(s[i], hex)
		if d < 0 {
			break
		}
		r = r*base(hex) + d
		i++
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	if i <= 3 { // no digit, or one without its ';' (the html package's reading)
		return 0, 0, nil
	}
	switch {
	case 0x80 <= r && r <= 0x9F:
		r = windows1252[r-0x80]
	case r == 0 || (0xD800 <= r && r <= 0xDFFF) || r > 0x10FFFF:
		r = utf8.RuneError
	}
	return i, r, nil
}

func base(hex bool) rune {
	if hex {
		return 16
	}
	return 10
}

// digit is c's value as a decimal or hexadecimal digit, -1 when it is not one.
func digit(c byte, hex bool) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case hex && 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case hex && 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// legacyNames are the named references an HTML parser reads without their
// semicolon (the HTML standard's table of named character references, the
// entries listed both with and without ';'), each between spaces.
const legacyNames = " AElig AMP Aacute Acirc Agrave Aring Atilde Auml COPY Ccedil ETH Eacute Ecirc Egrave Euml GT" +
	" Iacute Icirc Igrave Iuml LT Ntilde Oacute Ocirc Ograve Oslash Otilde Ouml QUOT REG THORN Uacute Ucirc" +
	" Ugrave Uuml Yacute aacute acirc acute aelig agrave amp aring atilde auml brvbar ccedil cedil cent copy" +
	" curren deg divide eacute ecirc egrave eth euml frac12 frac14 frac34 gt iacute icirc iexcl igrave iquest" +
	" iuml laquo lt macr micro middot nbsp not ntilde oacute ocirc ograve ordf ordm oslash otilde ouml para" +
	" plusmn pound quot raquo reg sect shy sup1 sup2 sup3 szlig thorn times uacute ucirc ugrave uml uuml yacute" +
	" yen yuml "

// longestLegacy is the length of the longest of legacyNames.
const longestLegacy = 6

func legacy(name string) bool {
	if len(name) < 2 || len(name) > longestLegacy {
		return false
	}
	i := strings.Index(legacyNames, name)
	for i >= 0 {
		if legacyNames[i-1] == ' ' && legacyNames[i+len(name)] == ' ' {
			return true
		}
		j := strings.Index(legacyNames[i+1:], name)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// windows1252 are the characters the code points U+0080 to U+009F stand
// for in a numeric reference: Windows-1252's, where it has one.
var windows1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}
