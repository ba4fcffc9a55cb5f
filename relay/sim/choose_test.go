package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/relay/sim"
)

func TestChooseFitsTheAnswerToTheQuestion(t *testing.T) {
	cases := []struct{ prompt, want string }{
		// code questions
		{"How do I reverse a string in Go?", "code"},
		{"write a Python function that sorts a list", "code"},
		{"Fix this regex: ^a+$", "code"},
		{"how do I use goroutines", "code"},
		{"What does this C++ snippet print?", "code"},
		// comparisons
		{"SSE vs WebSocket?", "table"},
		{"Compare Postgres and MySQL for a small app", "table"},
		{"What are the differences between TCP and UDP?", "table"},
		{"Which is better for streaming, SSE or polling?", "table"},
		// reasoning
		{"Why is the sky blue?", "thinking"},
		{"Think it through: can one VM take 1,000 requests per second?", "thinking"},
		{"Why does my Go code panic?", "thinking"},
		// a tool call
		{"What's the weather in Lyon?", "tool-call"},
		{"Will it rain tomorrow?", "tool-call"},
		{"forecast for Paris", "tool-call"},
		// the long sample only when asked for
		{"Write a long essay about distributed rate limiters", "sample-20k"},
		{"Explain consensus in detail", "sample-20k"},
		{"a detailed answer on rate limiting, please", "sample-20k"},
		// otherwise the short answer
		{"hi", "short"},
		{"", "short"},
		{"Explain how streaming answers reach the browser.", "short"},
		{"Where should I go for lunch?", "short"},
		{"How long is a piece of string", "code"}, // "string" is code talk; "how long" asks for no essay
	}
	for _, c := range cases {
		t.Run(c.prompt, func(t *testing.T) {
			got := sim.Choose(c.prompt)
			require.Equal(t, c.want, got)
			_, ok := sim.Lookup(got)
			require.True(t, ok, "Choose names a canned answer")
		})
	}
}

// At the relay's default timing (400 ms to the first token, 30 ms ± 15 ms
// between tokens of 4 characters) every answer Choose gives an everyday
// question streams in well under 10 s; only the 20 KB sample, which a
// prompt must ask for, takes minutes.
func TestChosenEverydayAnswersStreamInUnderTenSeconds(t *testing.T) {
	for _, name := range []string{"short", "code", "table", "thinking", "tool-call"} {
		t.Run(name, func(t *testing.T) {
			var total time.Duration
			for _, m := range all(t, sim.Params{Answer: name, TTFT: 400 * time.Millisecond, Gap: 30 * time.Millisecond,
				Jitter: 15 * time.Millisecond, TokenChars: 4, Seed: 7}) {
				total += m.Delay
			}
			t.Logf("%s: %v", name, total)
			require.Less(t, total, 10*time.Second)
		})
	}
	var total time.Duration
	for _, m := range all(t, sim.Params{Answer: "sample-20k", TTFT: 400 * time.Millisecond, Gap: 30 * time.Millisecond, TokenChars: 4}) {
		total += m.Delay
	}
	require.Greater(t, total, time.Minute, "the long sample is long: it must be asked for")
}
