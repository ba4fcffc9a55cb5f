package a11y

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/render"
	extast "github.com/yuin/goldmark/extension/ast"
)

func TestProjectionSaysEachMarkdownConstructInWords(t *testing.T) {
	tests := []struct {
		name string
		md   string
		want []string
	}{
		{"a heading is announced as a heading with a full stop", "## Install", []string{"Heading: Install."}},
		{"a heading keeps its own punctuation", "# Why?", []string{"Heading: Why?"}},
		{"a numbered heading stays one unit", "## 1. Install Go", []string{"Heading: 1. Install Go."}},
		{"a setext heading is a heading", "Install\n=======", []string{"Heading: Install."}},
		{"a bullet item says Bullet", "- Install Go", []string{"Bullet: Install Go."}},
		{"an ordered item says its number", "1. Install\n2. Run", []string{"1. Install.", "2. Run."}},
		{"an ordered list keeps its start number", "3. Third\n4. Fourth", []string{"3. Third.", "4. Fourth."}},
		{"an item's own Step wording is kept as written", "- Step 2 Run the tests", []string{"Bullet: Step 2 Run the tests."}},
		{"the number prefix never splits a sentence", "1. Install Go. Then test.", []string{"1. Install Go.", "Then test."}},
		{"a nested list says each level's items", "- Outer\n  - Inner", []string{"Bullet: Outer.", "Bullet: Inner."}},
		{"a loose item's second paragraph has no prefix", "- First para.\n\n  Second para.", []string{"Bullet: First para.", "Second para."}},
		{"a checked task says Done", "- [x] Write tests", []string{"Done: Write tests."}},
		{"an open task says To do", "- [ ] Ship it", []string{"To do: Ship it."}},
		{"an ordered task keeps its number", "1. [x] Plan", []string{"1. Done: Plan."}},
		{"a block quote says Quote once", "> Simple is better. Really.", []string{"Quote: Simple is better.", "Really."}},
		{"a quote of a list says both", "> - item", []string{"Quote: Bullet: item."}},
		{"a fenced code block gives language and lines", "```go\npackage main\n\nfunc main() {}\n```", []string{"Code block, Go, 3 lines."}},
		{"the code itself is never read", "```sh\nrm -rf *.tmp # careful\n```", []string{"Code block, Shell, 1 line."}},
		{"a fence without info string has no language", "```\na\nb\nc\n```", []string{"Code block, 3 lines."}},
		{"common languages are capitalised as people write them", "```javascript\nx\n```\n\n```yml\ny\n```\n\n```cpp\nz\n```", []string{"Code block, JavaScript, 1 line.", "Code block, YAML, 1 line.", "Code block, C++, 1 line."}},
		{"an unknown language is capitalised", "```elm\nx\n```", []string{"Code block, Elm, 1 line."}},
		{"plain text fences say no language", "```text\nx\n```", []string{"Code block, 1 line."}},
		{"a hostile info string cannot smuggle markup", "```*evil*#|\nx\n```", []string{"Code block, Evil, 1 line."}},
		{"C sharp is said, not spelled with a hash", "```c#\nx\n```", []string{"Code block, C sharp, 1 line."}},
		{"an indented code block is a code block", "    a := 1\n    b := 2", []string{"Code block, 2 lines."}},
		{"a table gives rows, columns and header cells", "| Name | Price | Stock |\n|---|---|---|\n| A | 1 | 2 |\n| B | 3 | 4 |\n| C | 5 | 6 |\n| D | 7 | 8 |", []string{"Table, 4 rows, 3 columns: Name, Price, Stock."}},
		{"a one-row table is singular", "| *Name* | `Price` |\n|---|---|\n| A | 1 |", []string{"Table, 1 row, 2 columns: Name, Price."}},
		{"an image is its alt text", "![A tabby cat asleep](cat.png)", []string{"A tabby cat asleep."}},
		{"an image inside a sentence is its alt text", "See ![the diagram](d.png) below.", []string{"See the diagram below."}},
		{"a link is its text", "Read [the guide](https://example.com/guide) first.", []string{"Read the guide first."}},
		{"a reference link is its text", "Read [the guide][g].\n\n[g]: https://example.com", []string{"Read the guide."}},
		{"emphasis and strong are plain", "This is *very* **important** ***now***.", []string{"This is very important now."}},
		{"strikethrough is said as deleted", "It is ~~wrong~~ right.", []string{"It is (deleted: wrong) right."}},
		{"inline code is its text", "Run `go test ./...` now.", []string{"Run go test ./... now."}},
		{"entities are resolved", "Tom &amp; Jerry &copy; 2024 &#x263A;.", []string{"Tom & Jerry © 2024 ☺."}},
		{"an autolink is its URL", "Go to <https://go.dev>.", []string{"Go to https://go.dev."}},
		{"a bare URL is its text", "Go to https://go.dev/doc?x=1 now.", []string{"Go to https://go.dev/doc?x=1 now."}},
		{"a thematic break is silent", "One.\n\n---\n\nTwo.", []string{"One.", "Two."}},
		{"an HTML block is silent", "<div onclick=\"x()\">Hi <b>there</b></div>\n\nAfter.", []string{"After."}},
		{"inline HTML tags are not spoken", "A <b>bold</b> <script>move</script>.", []string{"A bold move."}},
		{"a hard line break is a space", "One  \nTwo", []string{"One Two."}},
		{"a soft line break is a space", "One\nTwo", []string{"One Two."}},
		{"an empty item says nothing", "-\n- x", []string{"Bullet: x."}},
		{"a paragraph without a stop gets one", "Here is how", []string{"Here is how."}},
		{"a trailing comma becomes a stop", "- apples,", []string{"Bullet: apples."}},
		{"an unmatched emphasis opener is not spoken", "Hello *wor", []string{"Hello wor."}},
		{"an unmatched strong closer is not spoken", "Hello wor**", []string{"Hello wor."}},
		{"an unclosed code span's backtick is not spoken", "Run `go test", []string{"Run go test."}},
		{"an unfinished link loses its seam", "See [the docs](https://exa", []string{"See [the docs(https://exa."}},
		{"an underscore inside a word is kept", "Set max_tokens now.", []string{"Set max_tokens now."}},
		{"pipes of a table that never formed are pauses", "a | b | c", []string{"a b c."}},
		{"a closing parenthesis is not a stop", "See below (details)", []string{"See below (details)."}},
		{"a formula is said as its TeX, marked", "The area is $\\pi r^2$. Next.", []string{"The area is (formula: \\pi r^2).", "Next."}},
		{"a display formula loses its delimiters and lines", "$$\n\\text{overshoot} \\le (n - 1)\\,b\n$$", []string{"(formula: \\text{overshoot} \\le (n - 1)\\,b)."}},
		{"a dot inside a formula ends no sentence", "So \\(a. b\\) holds.", []string{"So (formula: a. b) holds."}},
		{"prices are read as written", "It costs $750 and $300.", []string{"It costs $750 and $300."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			units := Units(parse(tt.md))
			require.Equal(t, tt.want, texts(units))
			for _, u := range units {
				require.Zero(t, MarkdownChars(u.Text), "markdown heard in %q", u.Text)
			}
		})
	}
}

func TestEscapedSyntaxIsContentAndIsKept(t *testing.T) {
	// An escaped star is a character the author wants shown, not syntax;
	// it is spoken like any other character.
	require.Equal(t, []string{"A *literal* star and a # sign."}, texts(Units(parse(`A \*literal\* star and a \# sign.`))))
	// A star between spaces cannot be emphasis: it is multiplication.
	require.Equal(t, []string{"It is 5 * 3."}, texts(Units(parse("It is 5 * 3."))))
}

func TestUnitsAreKeyedByIncreasingDisjointSourceSpans(t *testing.T) {
	src := "# Title\n\nOne. Two.\n\n- a\n- b\n\n```go\nx\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
	units := Units(parse(src))
	require.NotEmpty(t, units)
	end := 0
	for _, u := range units {
		require.GreaterOrEqual(t, u.Pos, end, "unit %q starts before the previous one ended", u.Text)
		require.Greater(t, u.End, u.Pos)
		require.LessOrEqual(t, u.End, len(src))
		end = u.End
	}
}

func TestUnitSpansPointAtTheirWordsInTheSource(t *testing.T) {
	src := "Intro line.\n\n- First *item* here. Second one.\n"
	units := Units(parse(src))
	require.Equal(t, []string{"Intro line.", "Bullet: First item here.", "Second one."}, texts(units))
	for _, u := range units {
		words := strings.Fields(strings.TrimPrefix(u.Text, "Bullet: "))
		first := strings.Trim(words[0], ".")
		require.Contains(t, src[u.Pos:u.End], first, "span of %q", u.Text)
	}
}

func TestBlockOffsetShiftsPositions(t *testing.T) {
	blocks := parse("Hello there.")
	for i := range blocks {
		blocks[i].Offset = 100
	}
	units := Units(blocks)
	require.Len(t, units, 1)
	require.Equal(t, 100, units[0].Pos)
	require.Equal(t, 112, units[0].End)
}

// TestATableSpanFromItsEndsEqualsTheSpanOfEveryCell: span takes a table's
// extent from its header and last rows instead of walking every cell (a
// streaming table is projected every frame); at every byte of table-heavy
// answers, for every table a frame hands out, it equals the full walk.
func TestATableSpanFromItsEndsEqualsTheSpanOfEveryCell(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "render", "testdata", "answers", "tables.md"))
	require.NoError(t, err)
	texts := []string{
		string(b),
		"| a | b |\n|---|---|\n|\n| |\n| 1 |\n|\n",
		"| | |\n|:-|-:|\n| x | `y|z` |\n||\n",
		"a | b\n-|-\n[l](/u) | ![i](/p.png)\n",
	}
	tables := 0
	for _, text := range texts {
		d := document()
		for n := 0; n <= len(text); n++ {
			f := d.Update(text[:n])
			for _, bl := range append(append([]render.Block(nil), f.Settled...), f.TailBlocks...) {
				tb, ok := bl.Node.(*extast.Table)
				if !ok {
					continue
				}
				tables++
				s1, e1, ok1 := span(tb)
				s2, e2, ok2 := spanOf(tb)
				require.Equal(t, []any{s2, e2, ok2}, []any{s1, e1, ok1}, "prefix %q", text[:n])
			}
		}
	}
	require.Greater(t, tables, 1000)
}
