package stdlite

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var olds = []string{"\r\n", "\r", "{error}", "{status}", "{count}", "a", "aa", "é"}

func check(t *testing.T, s string) {
	t.Helper()
	require.Equal(t, strings.Fields(s), Fields(s), "Fields(%q)", s)
	require.Equal(t, strings.Join(strings.Fields(s), " "), JoinFields(s), "JoinFields(%q)", s)
	require.Equal(t, strings.TrimSpace(s), TrimSpace(s), "TrimSpace(%q)", s)
	require.Equal(t, bytes.TrimSpace([]byte(s)), TrimSpaceBytes([]byte(s)), "TrimSpaceBytes(%q)", s)
	require.Equal(t, bytes.TrimSpace([]byte(s)) == nil, TrimSpaceBytes([]byte(s)) == nil, "TrimSpaceBytes(%q)", s)
	for _, old := range olds {
		for _, new := range []string{"", "\n", "x", "{error}", "aaa"} {
			require.Equal(t, strings.ReplaceAll(s, old, new), ReplaceAll(s, old, new), "ReplaceAll(%q, %q, %q)", s, old, new)
		}
	}
}

func TestStandInsAreTheStandardLibrarys(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a  b\t\nc ", "\u00a0x\u2003y\u3000", "\u0085z\u200b", "\xff \xfe", " \u00a0", "\u2003", "\u00a0x\xe2\x80", "\xe2\x80\x83 ", " \x85", "\xc2\x85", "\r\n\r\r\n", "aaaa", "{error}{error}", "é\u1680é", "a\x85b"} {
		check(t, s)
	}
}

func FuzzStandIns(f *testing.F) {
	for _, s := range []string{"", " a  b ", "\u00a0x\u2003y", "\xff\xfe ", "\r\n\r", "aaa", "{status} {count}"} {
		f.Add(s)
	}
	f.Fuzz(check)
}
