package element

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// toValidUTF8 is strings.ToValidUTF8 with U+FFFD, the original as the
// oracle: over the cases below and, with -fuzz, any bytes.
func FuzzToValidUTF8(f *testing.F) {
	for _, s := range []string{
		"", "plain", "héllo", "\xff", "a\xffb", "a\xff\xfe\xfdb", "\xef\xbf\xbd", "\xef\xbf\xbd\xff", "\xff\xef\xbf\xbd\xff",
		"\xe2\x82", "\xe2\x82a", "\xf0\x9f\x98", "\xf0\x9f\x98\x80", "\xed\xa0\x80", "\xc0\x80", "\xf4\x90\x80\x80", "日本\x80語",
		"{\"error\":\"bad \xc3\"}", "\x80\x80\x80", "a\xc3", "\xc3a\xc3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, strings.ToValidUTF8(s, "\uFFFD"), toValidUTF8(s), "%q", s)
	})
}
