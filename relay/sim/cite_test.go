package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// The research answer, read back by the widget's own decoders in every
// dialect that carries citations, cites the same sources at the same
// places: the simulated model speaks each provider's citations honestly.
func TestTheResearchAnswerCitesTheSameInEveryDialectThatCan(t *testing.T) {
	a, ok := Lookup("research")
	require.True(t, ok)
	var want []stream.Citation
	for i := range a.Cites {
		want = append(want, stream.Citation{Source: a.Cites[i].Source + 1, End: a.Cites[i].End})
	}
	for _, d := range []stream.Dialect{stream.DialectOpenAI, stream.DialectResponses, stream.DialectAnthropic, stream.DialectGemini, stream.DialectAISDK} {
		for _, chars := range []int{1, 4, 9} {
			g, err := New(Params{Answer: "research", Dialect: d, TokenChars: chars})
			require.NoError(t, err)
			var data []byte
			for {
				m, ok := g.Next()
				if !ok {
					break
				}
				data = sse.AppendMessage(data, sse.Message{Event: m.Event, Data: m.Data})
			}
			p, err := stream.NewPipeline(stream.WithDialect(d))
			require.NoError(t, err)
			_, err = p.Write(data)
			require.NoError(t, err)
			require.NoError(t, p.Close())
			ans := p.Answer()
			require.Equal(t, stream.Complete, ans.Status(), "%s %d", d, chars)
			require.Zero(t, ans.Skipped(), "%s %d: %v", d, chars, ans.Problems())
			require.Equal(t, a.Text, ans.Text(), "%s %d", d, chars)
			require.Len(t, ans.Sources(), 3, "%s %d", d, chars)
			for k, s := range ans.Sources() {
				require.Equal(t, a.Sources[k].URL, s.URL)
				require.Equal(t, a.Sources[k].Title, s.Title)
			}
			var got []stream.Citation
			for _, c := range ans.Citations() {
				got = append(got, stream.Citation{Source: c.Source, End: c.End})
			}
			require.Equal(t, want, got, "%s %d", d, chars)
		}
	}
}

func TestAPromptThatAsksForSourcesGetsTheResearchAnswer(t *testing.T) {
	require.Equal(t, "research", Choose("How should I brew green tea? Cite your sources."))
}
