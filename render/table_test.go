package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	gmtext "github.com/yuin/goldmark/text"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

// tableCases are tables in the shapes a model writes and the shapes that
// could break keeping finished rows: inline links, references defined
// after the table, before it, or never; escaped pipes and code spans with
// pipes; tables ended by a blank line, by another block or by the end of
// the text; rows with more or fewer cells than the header; alignments;
// definitions and text in the table's own paragraph.
var tableCases = map[string]string{
	"ended by a blank line": "Intro:\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |\n| 5 | 6 |\n\nAfter.\n",
	"with inline markup": "| Code | Notes |\n|---:|:---|\n| `a \\| b` | **bold** and [a link](https://ok.example/x) |\n" +
		"| `x|y` | *em* ~~del~~ www.ok.example |\n| 3 | ![img](/p.png) and <https://ok.example> |\n| 4 | plain |\n\ndone",
	"with a reference defined after it":                   "| a | b |\n| - | - |\n| [one][r] | 1 |\n| [r] | 2 |\n| [two][] | 3 |\n| x | 4 |\n\n[r]: /u \"T\"\n[two]: /t\n",
	"closed in the frame a definition arrives":            "000000000\n   |-  \n00000[r]0000000000000000\n\n[r]:0",
	"with a reference defined before it":                  "[r]: /before\n\n| a | b |\n| - | - |\n| [one][r] | 1 |\n| [r] | 2 |\n| x | 3 |\n| y | 4 |\n",
	"with a reference never defined":                      "| a | b |\n| - | - |\n| [fib] | 1 |\n| x | 2 |\n| y | 3 |\n\nend\n",
	"ended by a heading":                                  "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n## Next\n",
	"ended by a list":                                     "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n- item\n- item\n",
	"ended by a quote":                                    "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n> q\n",
	"ended by a fence":                                    "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n```\ncode\n```\n",
	"ended by a rule":                                     "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n---\nx\n",
	"followed by an equals line":                          "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n===\nx\n",
	"ended by the end of the text":                        "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n| 5 | 6",
	"ending with a newline":                               "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n",
	"with ragged rows":                                    "| a | b | c |\n|:-|:-:|-:|\n| 1 |\n| 1 | 2 | 3 | 4 | 5 |\n|\n| |\nplain line\n| 7 | 8 | 9 |\n|||\n\nz",
	"without outer pipes":                                 "a | b\n--- | ---\n1 | 2\n3 | 4\n5 | 6\n\nz",
	"after text in its paragraph":                         "intro line\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n| 5 | 6 |\n",
	"after a definition in its paragraph":                 "[x]: /u\n| a | b |\n|---|---|\n| [x] | 2 |\n| 3 | 4 |\n| 5 | 6 |\n",
	"inside a definition's title":                         "[x]: /u '| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n| 5 '\n\n[x]\n",
	"indented":                                            "  | a | b |\n   |---|---|\n | 1 | 2 |\n  | 3 | 4 |\n    | 5 | 6 |\n",
	"in a list item":                                      "- | a | b |\n  |---|---|\n  | 1 | 2 |\n  | 3 | 4 |\n- x\n",
	"in a quote":                                          "> | a | b |\n> |---|---|\n> | 1 | 2 |\n> | 3 | 4 |\nlazy | row\n",
	"with CRLF line ends":                                 "| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n| 3 | 4 |\r\n| 5 | 6 |\r\n\r\nz",
	"with rows that look like definitions and delimiters": "| a | b |\n|---|---|\n| 1 | 2 |\n[x]: /u\n|---|---|\n| [x] | 4 |\n",
	"back to back":                                        "| a |\n|---|\n| 1 |\n| 2 |\n| 3 |\n\n| b | c |\n|:-:|---|\n| 4 | 5 |\n| 6 | 7 |\n| 8 | 9 |\n",
	"with a second header inside":                         "| a |\n|---|\n| 1 |\n| 2 |\n| b | c |\n|---|---|\n| 3 | 4 |\n",
	"with trailing spaces and backslashes":                "| a | b |\n|---|---|\n| 1 | 2 |   \n| 3 | 4 \\\n| 5 | 6 |  \n\nz",
	"with a row starting a raw HTML block":                "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n<div>\n| 5 | 6 |\n</div>\n",
}

// TestTablesStreamedByteByByteRenderLikeConvert checks equivalence and
// write-once at every byte of every table case and in token cuts (a frame
// that takes several lines at once closes a table and brings what follows
// it in one parse), and that the cases a table streams in at the start of
// the live part really parse with kept rows (or the test would pass
// without testing them).
func TestTablesStreamedByteByByteRenderLikeConvert(t *testing.T) {
	for name, text := range tableCases {
		t.Run(name, func(t *testing.T) {
			if msg := streamCheck(text, rendertest.EveryByte(text)); msg != "" {
				t.Fatal(msg)
			}
			for seed := uint32(1); seed <= 40; seed++ {
				if msg := streamCheck(text, rendertest.TokenCuts(text, seed)); msg != "" {
					t.Fatalf("token cuts, seed %d: %s", seed, msg)
				}
			}
			d := newDocument(t)
			for _, n := range rendertest.EveryByte(text) {
				d.Update(text[:n])
			}
			switch name {
			case "after text in its paragraph", "after a definition in its paragraph", "inside a definition's title",
				"in a list item", "in a quote":
				require.Zero(t, d.rowHits, "no table at the start of the live part")
			default:
				require.Positive(t, d.rowHits, "the table parsed with kept rows")
			}
		})
	}
}

// cellTexts lists, for the first table among blocks, each row's cells as
// the text of their inline Text nodes read from the block's source: what
// the speech projection reads.
func cellTexts(nodes []ast.Node, src []byte) [][]string {
	for _, n := range nodes {
		tb, ok := n.(*extast.Table)
		if !ok {
			continue
		}
		var rows [][]string
		for r := tb.FirstChild(); r != nil; r = r.NextSibling() {
			var cells []string
			for c := r.FirstChild(); c != nil; c = c.NextSibling() {
				var b strings.Builder
				_ = ast.Walk(c, func(x ast.Node, entering bool) (ast.WalkStatus, error) {
					if tx, ok := x.(*ast.Text); ok && entering {
						b.Write(tx.Segment.Value(src))
					}
					return ast.WalkContinue, nil
				})
				cells = append(cells, b.String())
			}
			rows = append(rows, cells)
		}
		return rows
	}
	return nil
}

// TestAStreamingTableHandsOutTheWholeTableAsItsBlock checks the AST behind
// the HTML: while the table streams (and when it settles), the table block
// a frame hands out has every row, with the cell texts a one-shot parse of
// the same text has — kept rows were parsed in earlier frames, and a11y
// reads them.
func TestAStreamingTableHandsOutTheWholeTableAsItsBlock(t *testing.T) {
	text := "Intro.\n\n| a | b |\n|:-|-:|\n"
	for i := range 30 {
		text += fmt.Sprintf("| row %d [l](/x%d) | `c|%d` |\n", i, i, i)
	}
	text += "\nAfter.\n"
	md := markdownFor(config{})
	d := newDocument(t)
	sawSettled := false
	for _, n := range rendertest.TokenCuts(text, 3) {
		f := d.Update(text[:n])
		for _, bl := range append(append([]Block(nil), f.Settled...), f.TailBlocks...) {
			if _, ok := bl.Node.(*extast.Table); !ok {
				continue
			}
			src := []byte(text[:n])
			want := cellTexts(children(md.Parser().Parse(gmtext.NewReader(src))), src)
			got := cellTexts([]ast.Node{bl.Node}, bl.Source)
			require.Equal(t, want, got, "prefix of %d bytes", n)
			sawSettled = sawSettled || len(f.Settled) > 0
		}
	}
	require.True(t, sawSettled, "the table settled while streaming")
	require.Positive(t, d.rowHits)
}

// tableLines are the line shapes of the random table documents: headers,
// delimiter rows with every alignment, rows with links, references,
// escaped pipes and code spans, ragged rows, and the lines that end or
// reshape a table.
var tableLines = []string{
	"| a | b |", "| a | b |", "a | b", "| h1 | h2 | h3 |", "|---|---|", "| - | - |", "|:-|-:|", "|:-:|:--|", "---|---",
	"| 1 | 2 |", "| 1 | 2 |", "| 1 | 2 |", "| 3 |", "| 4 | 5 | 6 |", "|", "| |", "||", "x | y",
	"| [l](https://ok.example/a) | `c \\| d` |", "| `a|b` | **s** |", "| [r] | [s][r] |", "| [u][] | 2 |",
	"| ![i](/p.png) | www.ok.example |", "| *em | em* |", "| \\| | \\\\ |", "| &amp; | &#124; |",
	"[r]: /u", "[r]: /u 'ti", "tle'", "[u]: <> \"t\"", "", "", "  ", "text", "# h", "---", "===", "- item", "> q",
	"```", "    code", "<div>", "1. one", "| 7 | 8 |  ", "| 9 | 10 \\",
}

// TestRandomTableDocumentsRenderLikeConvertAtEveryByte builds documents
// from table line shapes and checks equivalence and write-once at every
// byte (kept rows on), then that the same documents with kept rows off
// give the same frames.
func TestRandomTableDocumentsRenderLikeConvertAtEveryByte(t *testing.T) {
	// A longer soak: RENDER_SOAK=20000 go test -run RandomTable ./render
	docs, next := soak(t, 200, 40, 88172645)
	hits := 0
	for i := 0; i < docs; i++ {
		var b strings.Builder
		eol := "\n"
		if next(6) == 0 {
			eol = "\r\n"
		}
		lines := 4 + next(14)
		for j := 0; j < lines; j++ {
			b.WriteString([]string{"", "", "", "", " ", "  "}[next(6)] + tableLines[next(len(tableLines))])
			if j < lines-1 || next(2) == 0 {
				b.WriteString(eol)
			}
		}
		text := b.String()
		if msg := streamCheck(text, rendertest.EveryByte(text)); msg != "" {
			t.Fatalf("document %d %q: %s", i, text, msg)
		}
		if msg := streamCheck(text, rendertest.TokenCuts(text, uint32(i))); msg != "" {
			t.Fatalf("document %d %q in token cuts: %s", i, text, msg)
		}
		kept, whole := newDocument(t), newDocument(t)
		whole.noRowCache = true
		for _, n := range rendertest.EveryByte(text) {
			fk, fw := kept.Update(text[:n]), whole.Update(text[:n])
			require.Equal(t, fw.Append+"\x00"+fw.Tail, fk.Append+"\x00"+fk.Tail, "document %d %q at %d", i, text, n)
		}
		hits += kept.rowHits
	}
	t.Logf("%d frames parsed with kept rows", hits)
	require.Positive(t, hits, "some documents streamed a table with kept rows")
}
