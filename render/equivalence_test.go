package render

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
	d := NewDocument(opts...)
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
		if got, want := settled.String()+f.Tail, Convert(text[:n], opts...); got != want {
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
	final := Convert(text, opts...)
	if got := settled.String(); got != final {
		return "after Finish:\n got: " + got + "\nwant: " + final
	}
	return ""
}

func quoteCut(text string, n int) string {
	b, _ := json.Marshal(text[:n])
	return string(b)
}

// everyByte returns the cuts 0..len(text).
func everyByte(text string) []int {
	cuts := make([]int, 0, len(text)+1)
	for i := 0; i <= len(text); i++ {
		cuts = append(cuts, i)
	}
	return cuts
}

// tokenCuts cuts text like a model stream: tokens of 1..7 bytes, from a
// deterministic sequence so that failures reproduce.
func tokenCuts(text string, seed uint32) []int {
	var cuts []int
	x := seed | 1
	for i := 0; i < len(text); {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		i += 1 + int(x%7)
		if i > len(text) {
			i = len(text)
		}
		cuts = append(cuts, i)
	}
	return cuts
}

type specExample struct {
	Markdown string `json:"markdown"`
	Example  int    `json:"example"`
	Section  string `json:"section"`
}

// goldmarkDir finds the goldmark module, whose _test directory holds the
// CommonMark spec examples and goldmark's own extra cases.
func goldmarkDir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/goldmark").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		// js/wasm on Node cannot run the go command: look where it would
		// have looked (GOMODCACHE, else the first GOPATH entry, else
		// ~/go), with the version go.mod requires.
		const mod = "github.com/yuin/goldmark@v1.8.7"
		if dir := os.Getenv("GOMODCACHE"); dir != "" {
			return filepath.Join(dir, mod)
		}
		if gp := os.Getenv("GOPATH"); gp != "" {
			return filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod", mod)
		}
		home, _ := os.UserHomeDir()
		return filepath.Join(home, "go", "pkg", "mod", mod)
	}
	return strings.TrimSpace(string(out))
}

func loadSpec(t testing.TB) []specExample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldmarkDir(t), "_test", "spec.json"))
	require.NoError(t, err, "the CommonMark spec examples ship inside the goldmark module")
	var ex []specExample
	require.NoError(t, json.Unmarshal(b, &ex))
	require.Greater(t, len(ex), 600)
	return ex
}

// loadTxtCases reads goldmark's "//- - -//" test files: extra.txt and the
// extension cases (GFM tables, strikethrough, task lists, linkify...).
func loadTxtCases(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var cases []string
	for _, c := range strings.Split(string(b), "//= = = = = = = = = = = = = = = = = = = = = = = =//") {
		parts := strings.Split(c, "//- - - - - - - - -//")
		if len(parts) < 3 {
			continue
		}
		md := strings.TrimPrefix(parts[1], "\n")
		cases = append(cases, md)
	}
	return cases
}

func TestEveryPrefixOfEveryCommonMarkSpecExampleRendersLikeConvert(t *testing.T) {
	for _, ex := range loadSpec(t) {
		cuts := everyByte(ex.Markdown)
		if testing.Short() && ex.Example%5 != 0 {
			cuts = tokenCuts(ex.Markdown, uint32(ex.Example))
		}
		if msg := streamCheck(ex.Markdown, cuts); msg != "" {
			t.Errorf("spec example %d (%s): %s", ex.Example, ex.Section, msg)
		}
	}
}

func TestEveryPrefixOfGoldmarkExtraAndGFMCasesRendersLikeConvert(t *testing.T) {
	dir := goldmarkDir(t)
	files := []string{"_test/extra.txt", "extension/_test/table.txt", "extension/_test/strikethrough.txt",
		"extension/_test/tasklist.txt", "extension/_test/linkify.txt", "extension/_test/footnote.txt",
		"extension/_test/definition_list.txt", "extension/_test/typographer.txt"}
	total := 0
	for _, f := range files {
		for i, md := range loadTxtCases(t, filepath.Join(dir, f)) {
			total++
			cuts := everyByte(md)
			if testing.Short() && i%4 != 0 {
				cuts = tokenCuts(md, uint32(i))
			}
			if msg := streamCheck(md, cuts); msg != "" {
				t.Errorf("%s case %d: %s", f, i+1, msg)
			}
			if msg := streamCheck(md, tokenCuts(md, uint32(i)), WithDirAuto(true)); msg != "" {
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
				cuts := tokenCuts(text, seed)
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
