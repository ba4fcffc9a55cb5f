package anyof

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The sets the widget looks for, each held to the standard library.
var asciiSets = []string{`/\?#`, "\r\n\x00", "\r\n", `<>&'"`, "\\&", `/\?#@`, "<>\n\r", ""}

var lastSets = []string{" (\"'“‘", "“‘", "a", ""}

func seeds(f *testing.F) {
	for _, s := range []string{"", "a", "héllo/wörld?x#y", "\r\n", "\xff<\xfe>", "“quoted” ‘x’ (y)", "a\xe2\x80", "\xe2\x80\x9c", "\x80\x9c“", "日本語 'x", "&amp;\\", "\xef\xbf\xbd("} {
		f.Add(s)
	}
}

func FuzzIndexIsStringsIndexAny(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, set := range asciiSets {
			require.Equal(t, strings.IndexAny(s, set), Index(s, set), "%q in %q", set, s)
			require.Equal(t, bytes.IndexAny([]byte(s), set), Index([]byte(s), set), "%q in %q", set, s)
			require.Equal(t, strings.ContainsAny(s, set), Contains(s, set), "%q in %q", set, s)
		}
	})
}

func FuzzLastIndexIsBytesLastIndexAny(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, set := range lastSets {
			require.Equal(t, bytes.LastIndexAny([]byte(s), set), LastIndex([]byte(s), set), "%q in %q", set, s)
		}
	})
}
