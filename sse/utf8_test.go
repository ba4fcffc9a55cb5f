package sse

import (
	"encoding/hex"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// Expected strings were produced by Node's TextDecoder("utf-8",
// {ignoreBOM: true}), an implementation of the WHATWG Encoding standard's
// decoder, which is what "Interpreting an event stream" refers to.
var whatwgVectors = []struct{ hex, want string }{
	{"61F18080E180C262806380BF64", "a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd"},
	{"F08080", "\uFFFD\uFFFD\uFFFD"},
	{"F4908080", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"E182", "\uFFFD"},
	{"E18241", "\uFFFDA"},
	{"EDA080", "\uFFFD\uFFFD\uFFFD"},
	{"C0AF", "\uFFFD\uFFFD"},
	{"F0908080", "\U00010000"},
	{"EFBBBF41", "\uFEFFA"},
	{"FF", "\uFFFD"},
	{"C2", "\uFFFD"},
	{"E0A0", "\uFFFD"},
	{"F09F98", "\uFFFD"},
	{"F09F9880", "😀"},
	{"80", "\uFFFD"},
	{"EDBFBF", "\uFFFD\uFFFD\uFFFD"},
	{"F48FBFBF", "\U0010FFFF"},
	{"F5808080", "\uFFFD\uFFFD\uFFFD\uFFFD"},
}

func TestUTF8DecodingMatchesTheEncodingStandard(t *testing.T) {
	for _, v := range whatwgVectors {
		t.Run(v.hex, func(t *testing.T) {
			b, err := hex.DecodeString(v.hex)
			require.NoError(t, err)
			require.Equal(t, v.want, string(appendWHATWG(nil, b)))
			require.Equal(t, v.want, string(referenceDecode(b)), "reference decoder")
		})
	}
}

// Each vector inside a data line, cut at every offset, decodes the same: a
// character cut across writes is never a replacement character, and an
// invalid one is the same number of them whatever the cut.
func TestUTF8InDataIsCutInvariant(t *testing.T) {
	for _, v := range whatwgVectors {
		t.Run(v.hex, func(t *testing.T) {
			b, _ := hex.DecodeString(v.hex)
			input := "data: " + string(b) + "\n\n"
			for i := 0; i <= len(input); i++ {
				var got []Event
				p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
				_, _ = p.Write([]byte(input[:i]))
				_, _ = p.Write([]byte(input[i:]))
				require.NoError(t, p.Close())
				require.Equal(t, []Event{msg(v.want, "")}, got, "cut at %d", i)
			}
		})
	}
}

// referenceDecode is a second, independent WHATWG UTF-8 decoder written from
// the Unicode Standard's table of well-formed byte sequences (Table 3-7) and
// its "maximal subpart" rule, used as an oracle in property tests.
func referenceDecode(b []byte) []byte {
	type rng struct{ lo, hi byte }
	cont := rng{0x80, 0xBF}
	var out []byte
	for i := 0; i < len(b); {
		c := b[i]
		var want []rng
		switch {
		case c < 0x80:
			out = append(out, c)
			i++
			continue
		case c >= 0xC2 && c <= 0xDF:
			want = []rng{cont}
		case c == 0xE0:
			want = []rng{{0xA0, 0xBF}, cont}
		case c == 0xED:
			want = []rng{{0x80, 0x9F}, cont}
		case c >= 0xE1 && c <= 0xEF:
			want = []rng{cont, cont}
		case c == 0xF0:
			want = []rng{{0x90, 0xBF}, cont, cont}
		case c == 0xF4:
			want = []rng{{0x80, 0x8F}, cont, cont}
		case c >= 0xF1 && c <= 0xF3:
			want = []rng{cont, cont, cont}
		default:
			out = utf8.AppendRune(out, utf8.RuneError)
			i++
			continue
		}
		matched := 0
		for matched < len(want) && i+1+matched < len(b) {
			x := b[i+1+matched]
			if x < want[matched].lo || x > want[matched].hi {
				break
			}
			matched++
		}
		if matched == len(want) {
			out = append(out, b[i:i+1+matched]...)
		} else {
			out = utf8.AppendRune(out, utf8.RuneError)
		}
		i += 1 + matched
	}
	return out
}

func FuzzUTF8DecoderAgreesWithReference(f *testing.F) {
	for _, v := range whatwgVectors {
		b, _ := hex.DecodeString(v.hex)
		f.Add(b)
	}
	f.Add([]byte(strings.Repeat("\xE2\x82", 5)))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := appendWHATWG(nil, b)
		if want := referenceDecode(b); string(got) != string(want) {
			t.Fatalf("decode(%x) = %q, reference %q", b, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("decode(%x) is not valid UTF-8: %q", b, got)
		}
	})
}
