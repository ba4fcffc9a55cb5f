package a11y

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

var fuzzSeeds = []string{
	"Dr. Smith paid $3.14 on Jan. 5. Then left… Really? Yes!",
	"etc. " + strings.Repeat("1 ", 200) + "Next.",
	"See https://go.dev/a?b=1. Then `a.b()` and e.g. Go vs. Rust.",
	"# Title\n\n- [x] done\n- [ ] todo\n\n> quote *open\n\n```go\ncode\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
	"Hello *wor\nld* [link](http://x) ![alt](y.png) <b>x</b> &amp; \\* ~~no~~",
	"字。它。Ünïcode “quoted.” (Paren.) …",
	strings.Repeat("word, ", 120) + "end.",
	"1986. A great year.\nText\n---\nMore\n===\n",
}

func FuzzSentenceEndsNeverRetract(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > 2000 {
			return
		}
		b := []byte(s)
		flags := make([]uint8, len(b))
		final := sentenceEnds(b, flags, true)
		prev := 0
		for _, e := range final {
			require.Greater(t, e, prev)
			prev = e
		}
		if len(b) > 0 {
			require.Equal(t, len(b), final[len(final)-1], "the final sentence ends at the end of the text")
		}
		step := 1 + len(b)/150
		for k := 0; k <= len(b); k += step {
			got := sentenceEnds(b[:k], flags[:k], false)
			require.LessOrEqual(t, len(got), len(final))
			require.True(t, equalInts(final[:len(got)], got), "cut %d: %v is not a prefix of %v", k, got, final)
		}
	})
}

func FuzzAnnouncerNeverRepeats(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		if !utf8.ValidString(s) || len(s) > 4000 {
			return
		}
		units := Units(parse(s))
		end := 0
		for _, u := range units {
			require.GreaterOrEqual(t, u.Pos, end)
			require.Greater(t, u.End, u.Pos)
			require.NotEmpty(t, u.Text)
			end = u.End
		}
		h := newHarness(t)
		d := document(render.WithRepair(cut%2 == 0))
		h.a.Start()
		step := 1 + int(cut)%17
		for i := step; i < len(s)+step; i += step {
			f := d.Update(s[:min(i, len(s))])
			h.a.Frame(f.Settled, f.TailBlocks, f.Final)
			h.a.Frame(f.Settled, f.TailBlocks, f.Final) // a repeated frame
			h.wait(time.Duration(cut) * 10 * time.Millisecond)
		}
		fin := d.Finish()
		h.a.Frame(fin.Settled, fin.TailBlocks, fin.Final)
		h.a.End(stream.Stopped, nil)
		h.drain()
		m := Measure(h.a.Transcript())
		require.Zero(t, m.Duplicates)
		require.Equal(t, 2, m.Statuses)
		require.Equal(t, StatusStopped, h.heard[len(h.heard)-1].Text)
		require.LessOrEqual(t, m.LongestWait, 2*time.Second)
	})
}
