package holdback

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Normalize is the text a checker matches words in: NFKC (fullwidth
// letters, ligatures and compatibility forms become their plain letters),
// without the format characters that render as nothing (zero-width
// spaces and joiners, soft hyphens, bidi controls, the byte order mark),
// so that "f\u200borbidden" or "ｆｏｒｂｉｄｄｅｎ" reads "forbidden".
func Normalize(s string) string {
	drop := func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}
	// Dropped before and after: NFKC may compose across a dropped
	// character, and never makes one.
	return strings.Map(drop, norm.NFKC.String(strings.Map(drop, s)))
}
