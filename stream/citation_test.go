package stream

import (
	"fmt"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

func TestThreeProvidersCiteTheSameSourcesAtTheSamePlaces(t *testing.T) {
	type cite struct{ Source, End int }
	var want []cite
	for i, file := range []string{"responses-citations.sse", "anthropic-citations.sse", "gemini-citations.sse", "openai-citations.sse"} {
		s := run(t, readRecording(t, file), nil)
		require.Equal(t, researchText, s.Text, file)
		require.Equal(t, researchSources, s.Sources, file)
		var got []cite
		for _, c := range s.Citations {
			got = append(got, cite{c.Source, c.End})
			require.True(t, c.End <= len(s.Text), file)
		}
		if i == 0 {
			want = got
			continue
		}
		require.Equal(t, want, got, file)
	}
}

func TestCitationsLandOnCharacterBoundariesAndAreKeptOnce(t *testing.T) {
	a := NewAnswer()
	a.Apply(Event{Kind: KindText, Text: "80 °C"})
	// Byte 4 is inside "°": the marker goes before the character.
	a.Apply(Event{Kind: KindCitation, URL: "https://a.example", Title: "A", Index: 4})
	a.Apply(Event{Kind: KindCitation, URL: "https://a.example", Index: 4})
	a.Apply(Event{Kind: KindCitation, URL: "https://b.example", Index: CiteHere})
	a.Apply(Event{Kind: KindCitation, URL: "https://b.example", Index: 99})
	a.Apply(Event{Kind: KindCitation, Index: 1}) // names no source
	require.Equal(t, []Source{{URL: "https://a.example", Title: "A"}, {URL: "https://b.example"}}, a.Sources())
	require.Equal(t, []Citation{{Source: 1, End: 3}, {Source: 2, End: len("80 °C")}}, a.Citations())
	require.Equal(t, 1, a.Skipped())
}

func TestSourcesAndCitationsShareOneNumbering(t *testing.T) {
	a := NewAnswer()
	a.Apply(Event{Kind: KindSource, ID: "s1", URL: "https://one.example"})
	a.Apply(Event{Kind: KindText, Text: "x"})
	a.Apply(Event{Kind: KindCitation, ID: "s2", URL: "https://two.example", Index: CiteHere})
	a.Apply(Event{Kind: KindCitation, ID: "s1", Index: CiteHere})
	a.Apply(Event{Kind: KindCitation, Title: "The tea guide", Name: "guide.pdf", Index: 0})
	a.Apply(Event{Kind: KindCitation, Title: "The tea guide", Name: "guide.pdf", Index: 1})
	require.Len(t, a.Sources(), 3)
	require.Equal(t, []Citation{{Source: 2, End: 1}, {Source: 1, End: 1}, {Source: 3, End: 0}, {Source: 3, End: 1}}, a.Citations())
}

func TestCitationsAreBounded(t *testing.T) {
	a := NewAnswer()
	a.Apply(Event{Kind: KindText, Text: "x"})
	for i := 0; i < maxCitations+10; i++ {
		a.Apply(Event{Kind: KindCitation, URL: fmt.Sprintf("https://%d.example", i), Index: CiteHere})
	}
	require.Len(t, a.Citations(), maxCitations)
	require.Equal(t, 10, a.Skipped())
}

func TestCharacterOffsetsBecomeByteOffsets(t *testing.T) {
	for _, s := range []string{"", "plain", "70–80 °C", "tea 🍵 time", "日本茶"} {
		runes := []rune(s)
		for n := 0; n <= len(runes)+1; n++ {
			want := len(string(runes[:min(n, len(runes))]))
			require.Equal(t, want, byteOffset(s, n), "%q code points %d", s, n)
		}
		units := utf16.Encode(runes)
		for n := 0; n <= len(units)+1; n++ {
			// The oracle: decode the first n units (a cut surrogate pair
			// counts whole) and measure the UTF-8.
			k := min(n, len(units))
			if k > 0 && k < len(units) && utf16.IsSurrogate(rune(units[k-1])) && units[k-1] < 0xdc00 {
				k++
			}
			want := len(string(utf16.Decode(units[:k])))
			require.Equal(t, want, utf16Offset(s, n), "%q UTF-16 units %d", s, n)
		}
	}
}
