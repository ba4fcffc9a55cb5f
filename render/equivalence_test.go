package render

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

// streamCheck feeds text to a fresh Document in the given cuts (prefix
// lengths, increasing) and checks the contracts at every step: settled HTML
// so far plus the tail equals Convert of the prefix (equivalence), and the
// settled HTML only ever grows by appending (write-once, checked against the
// final settled HTML). It returns a description of the first failure.
func streamCheck(text string, cuts []int, opts ...Option) string {
	return streamCheckSome(text, cuts, nil, opts...)
}

// streamCheckSome is streamCheck comparing with Convert only at the cuts
// where check(i) is true (all when check is nil); every cut is still fed.
func streamCheckSome(text string, cuts []int, check func(i int) bool, opts ...Option) string {
	d := must(NewDocument(opts...))
	var settled strings.Builder
	lastStart := -1
	blocksCheck := func(f Frame) string {
		// Write-once, block by block: each settled block lies after every
		// block settled in earlier frames (no block is settled twice), and
		// blocks come with their HTML. (Within one frame goldmark's AST
		// order may differ from source order: a table cut out of a
		// paragraph comes before the setext heading made of the rest.
		// Blocks are not rendered again here: goldmark's table renderer
		// adds its style attribute on each run.)
		frameMax := lastStart
		for _, b := range f.Settled {
			abs := b.Offset + blockStart(b.Node)
			if abs <= lastStart {
				return fmt.Sprintf("block at %d settled again or out of order (last at %d)", abs, lastStart)
			}
			frameMax = max(frameMax, abs)
		}
		lastStart = frameMax
		if (len(f.Settled) > 0) != (f.Append != "") {
			return fmt.Sprintf("%d settled blocks but Append %q", len(f.Settled), f.Append)
		}
		return ""
	}
	for i, n := range cuts {
		f := d.Update(text[:n])
		settled.WriteString(f.Append)
		if msg := blocksCheck(f); msg != "" {
			return "prefix " + quoteCut(text, n) + ": " + msg
		}
		if f.Final {
			return "Update returned a final frame"
		}
		if check != nil && !check(i) {
			continue
		}
		if got, want := settled.String()+f.Tail, must(Convert(text[:n], opts...)); got != want {
			return "prefix " + quoteCut(text, n) + ":\n got: " + got + "\nwant: " + want
		}
	}
	f := d.Finish()
	settled.WriteString(f.Append)
	if msg := blocksCheck(f); msg != "" {
		return "Finish: " + msg
	}
	if !f.Final || f.Tail != "" {
		return "Finish did not return a final frame with an empty tail"
	}
	final := must(Convert(text, opts...))
	if got := settled.String(); got != final {
		return "after Finish:\n got: " + got + "\nwant: " + final
	}
	return ""
}

func quoteCut(text string, n int) string {
	b, _ := json.Marshal(text[:n])
	return string(b)
}

func TestEveryPrefixOfEveryCommonMarkSpecExampleRendersLikeConvert(t *testing.T) {
	for _, ex := range rendertest.Spec(t) {
		cuts := rendertest.EveryByte(ex.Markdown)
		if testing.Short() && ex.Example%5 != 0 {
			cuts = rendertest.TokenCuts(ex.Markdown, uint32(ex.Example))
		}
		if msg := streamCheck(ex.Markdown, cuts); msg != "" {
			t.Errorf("spec example %d (%s): %s", ex.Example, ex.Section, msg)
		}
	}
}

func TestEveryPrefixOfGoldmarkExtraAndGFMCasesRendersLikeConvert(t *testing.T) {
	files := []string{"_test/extra.txt", "extension/_test/table.txt", "extension/_test/strikethrough.txt",
		"extension/_test/tasklist.txt", "extension/_test/linkify.txt", "extension/_test/footnote.txt",
		"extension/_test/definition_list.txt", "extension/_test/typographer.txt"}
	total := 0
	for _, f := range files {
		for i, md := range rendertest.GoldmarkCases(t, f) {
			total++
			cuts := rendertest.EveryByte(md)
			if testing.Short() && i%4 != 0 {
				cuts = rendertest.TokenCuts(md, uint32(i))
			}
			if msg := streamCheck(md, cuts); msg != "" {
				t.Errorf("%s case %d: %s", f, i+1, msg)
			}
			if msg := streamCheck(md, rendertest.TokenCuts(md, uint32(i)), WithDirAuto(true)); msg != "" {
				t.Errorf("%s case %d with dir=auto: %s", f, i+1, msg)
			}
		}
	}
	require.Greater(t, total, 100)
}

// sample is the path of one of the benchmark samples (sample-20k,
// sample-100k): their one copy is the simulated model's canned answers.
func sample(name string) string {
	return filepath.Join("..", "relay", "sim", "answers", name+".md")
}

// loadSample reads a file under testdata, or a benchmark sample by name.
func loadSample(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join("testdata", name)
	if strings.HasPrefix(name, "sample-") {
		path = sample(name)
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestRealisticAnswersStreamedInTokenCutsRenderLikeConvert(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "answers", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	files = append(files, sample("sample-20k"), sample("sample-100k"))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			text := string(b)
			seeds := []uint32{1, 7, 42}
			if testing.Short() || len(text) > 10000 {
				seeds = seeds[:1]
			}
			for _, seed := range seeds {
				cuts := rendertest.TokenCuts(text, seed)
				// Every cut is fed; Convert of every prefix of a long answer
				// is quadratic, so the 100 KB sample is compared at a sample
				// of cuts (every cut in its first 3 KB, a spread of the
				// rest), and the short run on Node samples more sparsely.
				every := 1
				if len(text) > 30000 {
					every = 37
				}
				if testing.Short() {
					every *= 5
				}
				check := func(i int) bool { return cuts[i] < 3000 || i%every == 0 || i == len(cuts)-1 }
				if msg := streamCheckSome(text, cuts, check); msg != "" {
					t.Errorf("seed %d: %s", seed, msg)
				}
			}
		})
	}
}
