package stream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/sse"
)

// A decoder keeps at most maxCitable bytes of text to place citations
// given as character offsets (the relay reads every upstream event with a
// decoder: a 300 MB answer must not be kept there a second time); a
// citation past that is placed where the text is.
func TestADecoderKeepsBoundedTextToPlaceCitations(t *testing.T) {
	var c citable
	c.add("héllo ")
	require.Equal(t, len("hé"), c.at(2, byteOffset), "within the kept text: exact")
	chunk := strings.Repeat("x", 64<<10)
	for range 2 * maxCitable / len(chunk) {
		c.add(chunk)
	}
	require.True(t, c.full)
	require.Zero(t, c.b.Cap(), "past the bound nothing is kept")
	require.Equal(t, CiteHere, c.at(3, byteOffset), "past the bound: where the text is")

	// Through the OpenAI decoder: more than the bound of content, then an
	// annotation.
	dec, err := NewDecoder(DialectOpenAI)
	require.NoError(t, err)
	var got []Event
	emit := func(e Event) { got = append(got, e) }
	delta := `{"choices":[{"index":0,"delta":{"content":"` + chunk + `"}}]}`
	for range 2 * maxCitable / len(chunk) {
		dec.Decode(sse.Event{Type: "message", Data: delta}, emit)
	}
	dec.Decode(sse.Event{Type: "message", Data: `{"choices":[{"index":0,"delta":{"annotations":[{"type":"url_citation","url_citation":{"url":"https://example.com/a","title":"A","start_index":0,"end_index":5}}]}}]}`}, emit)
	last := got[len(got)-1]
	require.Equal(t, KindCitation, last.Kind)
	require.Equal(t, CiteHere, last.Index)
}
