package a11y

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

const uaxModule = "github.com/clipperhouse/uax29/v2"

// uaxDir finds the uax29 module in the module cache: `go list` natively,
// the environment under js/wasm (which cannot run the go command).
func uaxDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "js" {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", uaxModule).Output()
		if err == nil && strings.TrimSpace(string(out)) != "" {
			return strings.TrimSpace(string(out))
		}
	}
	version := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == uaxModule {
				version = d.Version
			}
		}
	}
	if version == "" {
		// Test binaries may carry no dependency list: read go.mod.
		mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
		require.NoError(t, err)
		for _, line := range strings.Split(string(mod), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == uaxModule {
				version = f[1]
			} else if len(f) >= 3 && f[0] == "require" && f[1] == uaxModule {
				version = f[2]
			}
		}
	}
	require.NotEmpty(t, version, "uax29's version is neither in the build info nor in go.mod")
	var roots []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		roots = append(roots, c)
	}
	if p := os.Getenv("GOPATH"); p != "" {
		roots = append(roots, filepath.Join(strings.Split(p, string(os.PathListSeparator))[0], "pkg", "mod"))
	}
	if h := os.Getenv("HOME"); h != "" {
		roots = append(roots, filepath.Join(h, "go", "pkg", "mod"))
	}
	for _, r := range roots {
		dir := filepath.Join(r, "github.com", "clipperhouse", "uax29", "v2@"+version)
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
	}
	t.Fatalf("uax29 %s not found in the module cache (looked in %v); run go mod download", version, roots)
	return ""
}

// breakCase is one line of Unicode's SentenceBreakTest.txt.
type breakCase struct {
	input   []byte
	ends    []int
	comment string
}

// sentenceBreakTests reads the SentenceBreakTest table the uax29 module
// ships as Go source, parsing the literal rather than trusting its code.
func sentenceBreakTests(t *testing.T) []breakCase {
	t.Helper()
	path := filepath.Join(uaxDir(t), "sentences", "unicode_test.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	require.NoError(t, err)
	bytesOf := func(e ast.Expr) []byte {
		lit := e.(*ast.CompositeLit)
		out := make([]byte, 0, len(lit.Elts))
		for _, el := range lit.Elts {
			v, err := strconv.ParseUint(el.(*ast.BasicLit).Value, 0, 8)
			require.NoError(t, err)
			out = append(out, byte(v))
		}
		return out
	}
	var cases []breakCase
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "unicodeTests" {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			var c breakCase
			for _, kv := range el.(*ast.CompositeLit).Elts {
				kv := kv.(*ast.KeyValueExpr)
				switch kv.Key.(*ast.Ident).Name {
				case "input":
					c.input = bytesOf(kv.Value)
				case "expected":
					end := 0
					for _, s := range kv.Value.(*ast.CompositeLit).Elts {
						end += len(bytesOf(s))
						c.ends = append(c.ends, end)
					}
				case "comment":
					c.comment, _ = strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
				}
			}
			cases = append(cases, c)
		}
		return false
	})
	require.Greater(t, len(cases), 400, "the SentenceBreakTest table was not found in %s", path)
	return cases
}

func TestSegmenterConformsToUnicodeSentenceBreakTest(t *testing.T) {
	for i, c := range sentenceBreakTests(t) {
		require.Equal(t, c.ends, uaxEnds(c.input, true), "case %d: %s", i, c.comment)
	}
}

func TestStreamingSegmenterConfirmsOnlyFinalBoundariesOnEveryPrefix(t *testing.T) {
	// A boundary confirmed on a prefix is a boundary of the whole text:
	// streaming never announces a sentence end that more text would undo.
	for i, c := range sentenceBreakTests(t) {
		for k := 0; k <= len(c.input); k++ {
			got := uaxEnds(c.input[:k], false)
			require.LessOrEqual(t, len(got), len(c.ends))
			require.True(t, equalInts(c.ends[:len(got)], got), "case %d cut at %d: %s: got %v want a prefix of %v", i, k, c.comment, got, c.ends)
			for _, e := range got {
				require.Less(t, e, k, "case %d: a boundary at the end of the text so far is not confirmed", i)
			}
		}
	}
}

// deviation explains why Trickle's layered segmenter differs from UAX #29
// at boundary b of input, or returns "" when no documented layer applies.
func deviation(input []byte, b int, missing bool) string {
	if missing && b > 0 && b < len(input) && strings.IndexByte(".?!", input[b-1]) >= 0 && isAlnum(input[b]) {
		return "no space after an ASCII terminator joins (URLs, file names)"
	}
	if !missing && strings.HasSuffix(strings.TrimRight(string(input[:b]), " "), "…") {
		return "an ellipsis before a capital ends a sentence"
	}
	return ""
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func TestLayeredSegmenterDiffersFromUnicodeOnlyByDocumentedDeviations(t *testing.T) {
	same, deviated := 0, 0
	for i, c := range sentenceBreakTests(t) {
		got := sentenceEnds(c.input, make([]uint8, len(c.input)), true)
		if equalInts(got, c.ends) {
			same++
			continue
		}
		deviated++
		in := func(xs []int, x int) bool {
			for _, y := range xs {
				if y == x {
					return true
				}
			}
			return false
		}
		for _, b := range c.ends {
			if !in(got, b) {
				require.NotEmpty(t, deviation(c.input, b, true), "case %d: boundary %d dropped without a documented reason: %s", i, b, c.comment)
			}
		}
		for _, b := range got {
			if !in(c.ends, b) {
				require.NotEmpty(t, deviation(c.input, b, false), "case %d: boundary %d added without a documented reason: %s", i, b, c.comment)
			}
		}
	}
	require.Greater(t, same, 450)
	t.Logf("layered segmenter: %d cases as Unicode, %d documented deviations", same, deviated)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// splitPlain splits plain text into units the way a complete run is.
func splitPlain(s string) []string {
	r := run{text: []byte(s), pos: make([]int, len(s)), flags: make([]uint8, len(s))}
	for i := range r.pos {
		r.pos[i] = i
	}
	r.end = len(s)
	return texts(r.units(true, 0))
}

func TestSegmenterLayers(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"titles do not end a sentence", "Mr. Smith met Mrs. Jones and Ms. Lee. Dr. Who agreed.", []string{"Mr. Smith met Mrs. Jones and Ms. Lee.", "Dr. Who agreed."}},
		{"Prof. and St. introduce names", "Ask Prof. Knuth about St. Louis. He knows.", []string{"Ask Prof. Knuth about St. Louis.", "He knows."}},
		{"e.g. and i.e. before a capital do not end a sentence", "Use a language, e.g. Go. Or pick one, i.e. Rust.", []string{"Use a language, e.g. Go.", "Or pick one, i.e. Rust."}},
		{"E.g. at a sentence start is an abbreviation too", "E.g. Python works. So does Go.", []string{"E.g. Python works.", "So does Go."}},
		{"vs. joins its sides", "It is Go vs. Rust today. Fun.", []string{"It is Go vs. Rust today.", "Fun."}},
		{"etc. before a lowercase word continues", "Use grep, sed, etc. to search.", []string{"Use grep, sed, etc. to search."}},
		{"etc. before a capital ends the sentence", "Use grep, sed, etc. Then commit.", []string{"Use grep, sed, etc.", "Then commit."}},
		{"Fig. introduces a number", "See Fig. 3 for details. Then go on.", []string{"See Fig. 3 for details.", "Then go on."}},
		{"No. before a number continues", "Ticket No. 42 is open. Fix it.", []string{"Ticket No. 42 is open.", "Fix it."}},
		{"No. before a word ends the sentence", "Is it done? No. It is not.", []string{"Is it done?", "No.", "It is not."}},
		{"a month before a day continues", "It shipped on Jan. 12, 2024. Great.", []string{"It shipped on Jan. 12, 2024.", "Great."}},
		{"a.m. before lowercase continues", "We meet at 9 a.m. tomorrow. Be there.", []string{"We meet at 9 a.m. tomorrow.", "Be there."}},
		{"p.m. before a capital ends the sentence", "It ends at 5 p.m. Then we leave.", []string{"It ends at 5 p.m.", "Then we leave."}},
		{"OK. is a sentence end, unlike ICU", "Click OK. Then restart.", []string{"Click OK.", "Then restart."}},
		{"Go. is a sentence end, unlike ICU", "It is written in Go. It compiles fast.", []string{"It is written in Go.", "It compiles fast."}},
		{"a decimal is not a sentence end", "Pi is 3.14 roughly. Yes.", []string{"Pi is 3.14 roughly.", "Yes."}},
		{"a version number is not a sentence end", "Use Go 1.26.1 today. Yes.", []string{"Use Go 1.26.1 today.", "Yes."}},
		{"a URL's question mark is not a sentence end", "Open example.com/a?b=1 now. Done.", []string{"Open example.com/a?b=1 now.", "Done."}},
		{"a file name's dot before a capital is not a sentence end", "Edit main.Go files. Done.", []string{"Edit main.Go files.", "Done."}},
		{"three dots before lowercase continue", "Well... maybe not. Sure.", []string{"Well... maybe not.", "Sure."}},
		{"three dots before a capital end the sentence", "It failed... Then it worked.", []string{"It failed...", "Then it worked."}},
		{"an ellipsis character before a capital ends the sentence", "It failed… Then it worked.", []string{"It failed…", "Then it worked."}},
		{"an ellipsis character before lowercase continues", "It failed… then it worked.", []string{"It failed… then it worked."}},
		{"a question and an exclamation end sentences", "Really? Yes! Good.", []string{"Really?", "Yes!", "Good."}},
		{"a closing quote stays with its sentence", `He said "stop." Then left.`, []string{`He said "stop."`, "Then left."}},
		{"ideographic full stops end sentences", "字。它。", []string{"字。", "它。"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, splitPlain(tt.in))
		})
	}
}

func TestLongSentencesAreSplitAtClauseBoundaries(t *testing.T) {
	clause := "this clause keeps going with plenty of ordinary words in it"
	long := strings.Repeat(clause+", ", 3) + clause + "; " + strings.Repeat(clause+", ", 3) + clause + "."
	units := splitPlain(long)
	require.Greater(t, len(units), 1)
	require.Equal(t, long, strings.Join(units, " "))
	for _, u := range units {
		require.LessOrEqual(t, utf8.RuneCountInString(u), MaxUnitRunes)
	}
	require.True(t, strings.HasSuffix(units[0], ";"), "the semicolon is preferred over commas: %q", units[0])

	noMarks := strings.Repeat("word ", 200) + "end."
	for _, u := range splitPlain(noMarks) {
		require.LessOrEqual(t, utf8.RuneCountInString(u), MaxUnitRunes)
	}
	unbroken := strings.Repeat("x", 700) + "."
	pieces := splitPlain(unbroken)
	require.Equal(t, unbroken, strings.Join(pieces, ""))
	require.Len(t, pieces, 3)
}

func TestStreamingSplitNeverRetractsABoundary(t *testing.T) {
	clause := "a clause with words, "
	texts := []string{
		"Dr. Smith said 3.14 is pi. Mr. Jones agreed, e.g. Alice. See example.com/a?b=1. It failed… Then it worked... OK. Done!",
		"Is it? No. 5 is. Jan. 3 came. It ends at 5 p.m. Then home.",
		strings.Repeat(clause, 40) + "end. " + strings.Repeat("word ", 90) + "stop.",
		"字。它。Ünïcode “quoted.” (Parenthetical.) Next.",
	}
	for _, s := range texts {
		b := []byte(s)
		flags := make([]uint8, len(b))
		final := sentenceEnds(b, flags, true)
		for k := 0; k <= len(b); k++ {
			got := sentenceEnds(b[:k], flags[:k], false)
			require.LessOrEqual(t, len(got), len(final), "cut %d of %q", k, s)
			require.True(t, equalInts(final[:len(got)], got), "cut %d of %q: got %v want a prefix of %v", k, s, got, final)
		}
	}
}

func TestDecimalWaitsForItsDigits(t *testing.T) {
	text := []byte("It costs 3.")
	flags := make([]uint8, 64)
	require.Empty(t, sentenceEnds(text, flags, false), "'3.' may be a decimal: not confirmed")
	require.Empty(t, sentenceEnds([]byte("It costs 3. "), flags, false), "a space alone does not confirm")
	require.Empty(t, sentenceEnds([]byte("It costs 3.14"), flags, false))
	require.Equal(t, []int{15}, sentenceEnds([]byte("It costs 3.14. Next"), flags, false))
}
