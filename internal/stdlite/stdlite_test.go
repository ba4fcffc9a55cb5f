package stdlite

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The ASCII sets the widget trims.
var trimSets = []string{" ", " \t", " \t\r\n", "-.", "/\\", " \t\n\r\f", "\t\n\r ", ctl, ""}

const ctl = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "

var olds = []string{"\r\n", "\r", "{error}", "{status}", "{count}", "a", "aa", "é"}

func check(t *testing.T, s string) {
	t.Helper()
	require.Equal(t, strings.Fields(s), Fields(s), "Fields(%q)", s)
	require.Equal(t, strings.Join(strings.Fields(s), " "), JoinFields(s), "JoinFields(%q)", s)
	require.Equal(t, strings.TrimSpace(s), TrimSpace(s), "TrimSpace(%q)", s)
	require.Equal(t, bytes.TrimSpace([]byte(s)), TrimSpaceBytes([]byte(s)), "TrimSpaceBytes(%q)", s)
	require.Equal(t, bytes.TrimSpace([]byte(s)) == nil, TrimSpaceBytes([]byte(s)) == nil, "TrimSpaceBytes(%q)", s)
	for _, set := range trimSets {
		require.Equal(t, strings.Trim(s, set), Trim(s, set), "Trim(%q, %q)", s, set)
		require.Equal(t, strings.TrimLeft(s, set), TrimLeft(s, set), "TrimLeft(%q, %q)", s, set)
		require.Equal(t, strings.TrimRight(s, set), TrimRight(s, set), "TrimRight(%q, %q)", s, set)
		b := []byte(s)
		require.Equal(t, bytes.Trim(b, set), Trim(b, set), "bytes.Trim(%q, %q)", s, set)
		require.Equal(t, bytes.Trim(b, set) == nil, Trim(b, set) == nil, "bytes.Trim(%q, %q)", s, set)
		require.Equal(t, bytes.TrimLeft(b, set), TrimLeft(b, set), "bytes.TrimLeft(%q, %q)", s, set)
		require.Equal(t, bytes.TrimLeft(b, set) == nil, TrimLeft(b, set) == nil, "bytes.TrimLeft(%q, %q)", s, set)
		require.Equal(t, bytes.TrimRight(b, set), TrimRight(b, set), "bytes.TrimRight(%q, %q)", s, set)
		require.Equal(t, bytes.TrimRight(b, set) == nil, TrimRight(b, set) == nil, "bytes.TrimRight(%q, %q)", s, set)
	}
	for _, old := range append(olds, "", "/v1/", ". ", "? ") {
		require.Equal(t, strings.LastIndex(s, old), LastIndex(s, old), "LastIndex(%q, %q)", s, old)
		require.Equal(t, bytes.LastIndex([]byte(s), []byte(old)), LastIndex([]byte(s), old), "bytes.LastIndex(%q, %q)", s, old)
	}
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
