package sim_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// all drains a generator.
func all(t *testing.T, p sim.Params) []sim.Message {
	t.Helper()
	g, err := sim.New(p)
	require.NoError(t, err)
	var out []sim.Message
	for {
		m, ok := g.Next()
		if !ok {
			return out
		}
		out = append(out, m)
		require.Less(t, len(out), 1_000_000, "generator does not end")
	}
}

// wire encodes messages as the SSE bytes the relay would send.
func wire(msgs []sim.Message) []byte {
	var b []byte
	for i, m := range msgs {
		b = sse.AppendMessage(b, sse.Message{ID: fmt.Sprint("s:", i+1), Event: m.Event, Data: m.Data})
	}
	return b
}

// decode runs the bytes through the stream package's pipeline: the same
// decoder the widget runs, an oracle written by someone else.
func decode(t *testing.T, dialect stream.Dialect, b []byte) *stream.Answer {
	t.Helper()
	p, err := stream.NewPipeline(stream.WithDialect(dialect), stream.WithContentType("text/event-stream"))
	require.NoError(t, err)
	_, err = p.Write(b)
	require.NoError(t, err)
	p.Close()
	return p.Answer()
}

func TestEveryDialectDecodesToTheCannedAnswer(t *testing.T) {
	for _, d := range sim.Dialects() {
		for _, name := range []string{"short", "thinking", "tool-call", "xss", "sample-20k"} {
			t.Run(d.String()+"/"+name, func(t *testing.T) {
				want, ok := sim.Lookup(name)
				require.True(t, ok)
				sizes := []int{1, 4, 13}
				if len(want.Text) > 5000 {
					sizes = []int{64} // long answers: one size keeps the test fast
				}
				for _, chars := range sizes {
					msgs := all(t, sim.Params{Dialect: d, Answer: name, TokenChars: chars, Seed: 7, Tools: []sim.Tool{sim.Weather}})
					for _, dialect := range []stream.Dialect{d, stream.DialectAuto} {
						a := decode(t, dialect, wire(msgs))
						require.Equal(t, stream.Complete, a.Status(), "dialect %s read as %s: %v", d, dialect, a.Err())
						require.Equal(t, want.Text, a.Text())
						if d != "plain" || want.Thinking == "" {
							require.Equal(t, want.Thinking, a.Thinking())
						}
						if want.Tool != nil && d != "plain" {
							calls := a.ToolCalls()
							require.Len(t, calls, 1)
							require.Equal(t, want.Tool.Name, calls[0].Name)
							require.JSONEq(t, want.Tool.Arguments, calls[0].Arguments)
						}
					}
				}
			})
		}
	}
}

func TestEveryEventIsOneLineOfValidJSONOrTheDoneMarker(t *testing.T) {
	for _, d := range sim.Dialects() {
		for _, name := range sim.Names() {
			for _, m := range all(t, sim.Params{Dialect: d, Answer: name, TokenChars: 7}) {
				require.NotContains(t, m.Data, "\n", "%s/%s", d, name)
				if m.Data != "[DONE]" {
					require.True(t, json.Valid([]byte(m.Data)), "%s/%s: %s", d, name, m.Data)
				}
			}
		}
	}
}

func TestTheSameParamsGiveTheSameEventsAndDelays(t *testing.T) {
	p := sim.Params{Dialect: "anthropic", TTFT: 300 * time.Millisecond, Gap: 20 * time.Millisecond, Jitter: 10 * time.Millisecond, Seed: 42}
	a, b := all(t, p), all(t, p)
	require.Equal(t, a, b)
	p.Seed = 43
	c := all(t, p)
	require.NotEqual(t, a, c, "another seed picks another answer or other delays")
}

func TestSeedPicksTheAnswerWhenNoneIsNamed(t *testing.T) {
	seen := map[string]bool{}
	for seed := range uint64(8) {
		g, err := sim.New(sim.Params{Seed: seed, Tools: []sim.Tool{sim.Weather}})
		require.NoError(t, err)
		require.Equal(t, sim.Pick(seed).Name, g.Answer().Name)
		seen[g.Answer().Name] = true
	}
	require.Greater(t, len(seen), 2)
}

func TestDelaysFollowTTFTGapAndJitter(t *testing.T) {
	ttft, gap, jitter := 500*time.Millisecond, 40*time.Millisecond, 10*time.Millisecond
	msgs := all(t, sim.Params{Dialect: "plain", Answer: "short", TTFT: ttft, Gap: gap, Jitter: jitter, Seed: 1})
	require.InDelta(t, float64(ttft), float64(msgs[0].Delay), float64(jitter))
	varied := false
	for _, m := range msgs[1 : len(msgs)-1] {
		require.InDelta(t, float64(gap), float64(m.Delay), float64(jitter))
		varied = varied || m.Delay != gap
	}
	require.True(t, varied, "jitter varies the gaps")
	require.Zero(t, msgs[len(msgs)-1].Delay, "the end marker follows the last token at once")
}

func TestTokensHaveTheConfiguredSizeAndNeverSplitACharacter(t *testing.T) {
	for _, chars := range []int{1, 2, 4, 9} {
		msgs := all(t, sim.Params{Dialect: "plain", Answer: "short", TokenChars: chars})
		for _, m := range msgs[:len(msgs)-2] { // the last token may be shorter
			var v struct{ Delta string }
			require.NoError(t, json.Unmarshal([]byte(m.Data), &v))
			require.Equal(t, chars, len([]rune(v.Delta)), "%q", v.Delta)
		}
	}
}

func TestErrorAfterEndsWithTheDialectsErrorShape(t *testing.T) {
	for _, d := range sim.Dialects() {
		t.Run(d.String(), func(t *testing.T) {
			msgs := all(t, sim.Params{Dialect: d, Answer: "short", ErrorAfter: 5})
			require.Greater(t, len(msgs), 5)
			tail := msgs[5:]
			require.LessOrEqual(t, len(tail), 2, "error, then the end marker at most")
			require.Contains(t, tail[0].Data, "error")
			a := decode(t, d, wire(msgs))
			require.Equal(t, stream.Failed, a.Status(), "%v", a.Err())
			require.ErrorContains(t, a.Err(), "simulated upstream failure")
		})
	}
}

func TestNoEndLeavesTheAnswerIncomplete(t *testing.T) {
	for _, d := range sim.Dialects() {
		msgs := all(t, sim.Params{Dialect: d, Answer: "short", NoEnd: true})
		a := decode(t, d, wire(msgs))
		require.Equal(t, stream.Incomplete, a.Status(), "%s", d)
	}
}

func TestStallAddsItsDelayAfterTheNthEvent(t *testing.T) {
	base := all(t, sim.Params{Dialect: "plain", Answer: "short", Gap: time.Millisecond})
	stalled := all(t, sim.Params{Dialect: "plain", Answer: "short", Gap: time.Millisecond, StallAfter: 3, Stall: time.Second})
	require.Len(t, stalled, len(base))
	for i := range base {
		want := base[i].Delay
		if i == 3 {
			want += time.Second
		}
		require.Equal(t, want, stalled[i].Delay, "event %d", i+1)
	}
}

func TestMaxTokensCutsTheAnswerWithReasonLength(t *testing.T) {
	msgs := all(t, sim.Params{Dialect: "openai", Answer: "sample-20k", MaxTokens: 10})
	a := decode(t, "openai", wire(msgs))
	require.Equal(t, stream.Complete, a.Status())
	require.Equal(t, "length", a.FinishReason())
	require.Len(t, []rune(a.Text()), 40)
}

func TestUnknownDialectAndAnswerAreRefused(t *testing.T) {
	_, err := sim.New(sim.Params{Dialect: "smoke-signals"})
	require.ErrorIs(t, err, sim.ErrUnknownDialect)
	_, err = sim.New(sim.Params{Answer: "nope"})
	require.ErrorIs(t, err, sim.ErrUnknownAnswer)
}

func TestFailureHasAnErrorEventInEveryDialect(t *testing.T) {
	for _, d := range sim.Dialects() {
		msgs := sim.Failure(d, "upstream said no")
		require.NotEmpty(t, msgs)
		require.Contains(t, msgs[0].Data, "upstream said no")
		a := decode(t, d, wire(msgs))
		require.Equal(t, stream.Failed, a.Status(), d)
	}
}

func TestXSSCorpusArrivesByteForByte(t *testing.T) {
	want, _ := sim.Lookup("xss")
	require.Contains(t, want.Text, "<script>")
	require.Contains(t, want.Text, "javascript:")
	msgs := all(t, sim.Params{Dialect: "openai", Answer: "xss", TokenChars: 3})
	require.Equal(t, want.Text, decode(t, "openai", wire(msgs)).Text())
}

func ExampleNew() {
	g, _ := sim.New(sim.Params{Dialect: "plain", Answer: "code", TokenChars: 8})
	for range 3 {
		m, _ := g.Next()
		fmt.Println(m.Data)
	}
	// Output:
	// {"delta":"Sure! He"}
	// {"delta":"re is a "}
	// {"delta":"**quick*"}
}
