package a11y

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
	"github.com/yuin/goldmark/ast"
)

// answers are realistic model answers in testdata; the *.units files next
// to the hand-written ones list the units a listener should hear, reviewed
// by a person.
var answers = []string{"install-go", "compare-databases", "debug-timeout", "history-answer", "sample-20k"}

// sample20k is the 20 KB benchmark sample; its one copy is the simulated
// model's canned answer.
var sample20k = filepath.Join("..", "relay", "sim", "answers", "sample-20k.md")

func readAnswer(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join("testdata", name+".md")
	if name == "sample-20k" {
		path = sample20k
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestRealisticAnswersProjectToTheirReviewedUnits(t *testing.T) {
	for _, name := range answers {
		want, err := os.ReadFile(filepath.Join("testdata", name+".units"))
		if os.IsNotExist(err) {
			continue // sample-20k is checked by the streaming criteria only
		}
		require.NoError(t, err)
		got := texts(Units(parse(readAnswer(t, name))))
		require.Equal(t, strings.Split(strings.TrimSuffix(string(want), "\n"), "\n"), got, name)
	}
}

// codeSpans returns the texts of the inline code spans of src: code is
// content, so a '|' or '*' inside it is not markdown heard.
func codeSpans(src string) []string {
	source := []byte(src)
	doc := gfm.Parser().Parse(textReader(source))
	var out []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if c, ok := n.(*ast.CodeSpan); ok && entering {
			var b strings.Builder
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				b.Write(t.(*ast.Text).Segment.Value(source))
			}
			out = append(out, b.String())
		}
		return ast.WalkContinue, nil
	})
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func markdownOutsideCode(s string, code []string) int {
	for _, c := range code {
		if MarkdownChars(c) > 0 {
			s = strings.ReplaceAll(s, c, "")
		}
	}
	return MarkdownChars(s)
}

// streamAnswer streams text to a fresh announcer in random token cuts with
// random gaps between frames, through render.Document exactly as the
// widget's frame loop does.
func streamAnswer(t *testing.T, text string, rng *rand.Rand, maxToken int, gap func() time.Duration, opts ...render.Option) (*harness, Transcript) {
	h := newHarness(t)
	d := document(opts...)
	h.a.Start()
	for i := 0; i < len(text); {
		i = min(len(text), i+1+rng.IntN(maxToken))
		f := d.Update(text[:i])
		h.a.Frame(f.Settled, f.TailBlocks, f.Final)
		h.wait(gap())
	}
	f := d.Finish()
	h.a.Frame(f.Settled, f.TailBlocks, f.Final)
	h.a.End(stream.Complete, nil)
	h.drain()
	return h, h.a.Transcript()
}

func TestStreamedRealisticAnswersMeetTheListeningCriteria(t *testing.T) {
	runs := 4
	if testing.Short() {
		runs = 1
	}
	for _, name := range answers {
		text := readAnswer(t, name)
		want := Units(parse(text))
		code := codeSpans(text)
		for seed := range runs {
			rng := rand.New(rand.NewPCG(uint64(seed), 42))
			// Odd seeds stream with render's tail repair on.
			h, tr := streamAnswer(t, text, rng, 12, func() time.Duration {
				return time.Duration(10+rng.IntN(140)) * time.Millisecond
			}, render.WithRepair(seed%2 == 1))
			// Announcements equal the expected units, in order, keyed
			// by the same positions, whatever the cuts.
			require.Len(t, tr.Units, len(want), "%s seed %d", name, seed)
			for i := range want {
				require.Equal(t, want[i].Text, tr.Units[i].Text, "%s seed %d unit %d", name, seed, i)
				require.Equal(t, [2]int{want[i].Pos, want[i].End}, [2]int{tr.Units[i].Pos, tr.Units[i].End}, "%s unit %d", name, i)
			}
			// Each content announcement is exactly its units, merged.
			var joined []string
			for _, u := range tr.Units {
				joined = append(joined, u.Text)
			}
			require.Equal(t, strings.Join(joined, " "), strings.Join(contentOf(h.heard), " "))
			m := Measure(tr)
			require.Zero(t, m.Duplicates, name)
			require.Zero(t, m.Fragments, name)
			for _, a := range tr.Announcements {
				require.Zero(t, markdownOutsideCode(a.Text, code), "%s: markdown heard in %q", name, a.Text)
			}
			require.LessOrEqual(t, m.LongestWait, 2*time.Second, name)
			require.Equal(t, 2, m.Statuses)
			endFollowsTheLastWordsByMinGap(t, tr.Announcements)
			if seed == 0 {
				t.Logf("%s: %d bytes, %d units in %d announcements, longest wait %v, markdown chars %d (all inside code spans)",
					name, len(text), m.Units, m.Announcements, m.LongestWait, m.MarkdownChars)
			}
		}
	}
}

func TestStreamingOneByteAtATimeGivesTheOneShotUnits(t *testing.T) {
	for _, name := range answers {
		text := readAnswer(t, name)
		if testing.Short() {
			text = text[:len(text)/3]
		}
		for _, repair := range []bool{false, true} {
			h := newHarness(t)
			d := document(render.WithRepair(repair))
			h.a.Start()
			for i := 1; i <= len(text); i++ {
				f := d.Update(text[:i])
				h.a.Frame(f.Settled, f.TailBlocks, f.Final)
				h.wait(16 * time.Millisecond)
			}
			f := d.Finish()
			h.a.Frame(f.Settled, f.TailBlocks, f.Final)
			h.a.End(stream.Complete, nil)
			h.drain()
			require.Equal(t, texts(Units(parse(text))), texts(h.a.Transcript().Units), "%s repair %v", name, repair)
		}
	}
}

func TestAllTailFramesGiveTheOneShotUnitsToo(t *testing.T) {
	// A renderer that settles nothing until the end is also valid input:
	// every tail run followed by another one counts as ended.
	for _, name := range answers[:4] {
		text := readAnswer(t, name)
		h := newHarness(t)
		h.a.Start()
		for i := 1; i <= len(text); i += 3 {
			h.tail(text[:i])
			h.wait(16 * time.Millisecond)
		}
		h.finish(text)
		h.a.End(stream.Complete, nil)
		h.drain()
		require.Equal(t, texts(Units(parse(text))), texts(h.a.Transcript().Units), name)
	}
}

func TestStallsNeverRepeatOrLeakMarkdownAndNoUnitWaitsOverTwoSeconds(t *testing.T) {
	runs := 12
	if testing.Short() {
		runs = 2
	}
	var longest time.Duration
	defer func() { t.Logf("longest wait with stalls: %v", longest) }()
	for _, name := range answers[:4] {
		text := readAnswer(t, name)
		code := codeSpans(text)
		for seed := range runs {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			_, tr := streamAnswer(t, text, rng, 10, func() time.Duration {
				if rng.IntN(25) == 0 {
					return time.Duration(1500+rng.IntN(3000)) * time.Millisecond
				}
				return time.Duration(20+rng.IntN(100)) * time.Millisecond
			})
			m := Measure(tr)
			require.Zero(t, m.Duplicates, "%s seed %d", name, seed)
			require.LessOrEqual(t, m.LongestWait, 2*time.Second, "%s seed %d", name, seed)
			longest = max(longest, m.LongestWait)
			for _, a := range tr.Announcements {
				require.Zero(t, markdownOutsideCode(a.Text, code), "%s: %q", name, a.Text)
			}
			// Everything is said, in order: the stream's words all arrive.
			var said []string
			for _, u := range tr.Units {
				said = append(said, u.Text)
			}
			require.Equal(t, strings.Fields(strings.Join(texts(Units(parse(text))), " ")), strings.Fields(strings.Join(said, " ")), "%s seed %d", name, seed)
		}
	}
}

func TestMeasureCountsDuplicatesFragmentsMarkdownAndWaits(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr := Transcript{
		Announcements: []Announcement{
			{Text: StatusResponding, Status: true},
			{Text: "One. **Two** and"},
			{Text: "[link](x) `code` # | done."},
			{Text: StatusComplete, Status: true},
		},
		Units: []Unit{
			{Pos: 0, End: 4, Text: "One.", Ready: t0, Said: t0.Add(300 * time.Millisecond)},
			{Pos: 5, End: 15, Text: "Two and", Ready: t0, Said: t0.Add(time.Second)},
			{Pos: 3, End: 8, Text: "again.", Ready: t0, Said: t0.Add(1500 * time.Millisecond)},
			{Pos: 15, End: 20, Text: "(quoted.)", Ready: t0, Said: t0},
		},
	}
	m := Measure(tr)
	require.Equal(t, Metrics{
		Announcements: 2, Statuses: 2, Units: 4,
		Duplicates:    1, // "again." overlaps both earlier spans: counted once
		Fragments:     1, // "Two and"
		MarkdownChars: 4 + 1 + 2 + 1 + 1,
		LongestWait:   1500 * time.Millisecond,
	}, m)
}

// endFollowsTheLastWordsByMinGap checks the end of a transcript: the final
// status is the last announcement, after the last content announcement and
// at least MinGap after it, never in the same instant (a screen reader
// could speak it first).
func endFollowsTheLastWordsByMinGap(t *testing.T, as []Announcement) {
	t.Helper()
	require.NotEmpty(t, as)
	end := as[len(as)-1]
	require.True(t, end.Status, "the final status is the last announcement")
	for i := len(as) - 2; i >= 0; i-- {
		if !as[i].Status {
			require.GreaterOrEqual(t, end.At.Sub(as[i].At), MinGap,
				"the end status %q follows the last words %q by at least MinGap", end.Text, as[i].Text)
			return
		}
	}
}
