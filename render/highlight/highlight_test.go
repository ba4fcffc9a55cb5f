package highlight_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/render/highlight"
)

// unwrapped parses fragment as a browser would (inside a <div>) and returns
// its DOM serialized with every highlighting span removed (its text kept)
// and adjacent text nodes merged: what is left when highlighting "only
// wraps text in spans".
func unwrapped(t testing.TB, fragment string) string {
	t.Helper()
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(fragment), ctx)
	require.NoError(t, err)
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(html.EscapeString(n.Data))
			return
		case html.CommentNode:
			b.WriteString("<!--" + n.Data + "-->")
			return
		}
		hl := n.Data == "span" && len(n.Attr) == 1 && n.Attr[0].Key == "class" && strings.HasPrefix(n.Attr[0].Val, highlight.ClassPrefix)
		if !hl {
			b.WriteString("<" + n.Data)
			for _, a := range n.Attr {
				fmt.Fprintf(&b, " %s=%q", a.Key, a.Val)
			}
			b.WriteString(">")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if !hl {
			b.WriteString("</" + n.Data + ">")
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return b.String()
}

// streamCheck feeds text to a highlighting Document at every cut and checks:
// the settled HTML so far is a prefix of the one-shot highlighted
// rendering of the prefix (settled blocks are highlighted when they settle,
// and never again); settled HTML plus the tail, with highlighting spans
// unwrapped, is the DOM of the plain rendering (text and structure never
// change); the live part holds no highlighting; and after Finish the
// settled HTML equals the one-shot highlighted rendering.
func streamCheck(t testing.TB, text string, cuts []int, opts ...render.Option) string {
	hl := append([]render.Option{highlight.Option()}, opts...)
	d := newDocument(t, hl...)
	var settled strings.Builder
	for _, n := range cuts {
		f := d.Update(text[:n])
		settled.WriteString(f.Append)
		one := convert(t, text[:n], hl...)
		if !strings.HasPrefix(one, settled.String()) {
			return fmt.Sprintf("prefix %q: settled HTML is not a prefix of the one-shot rendering:\n got: %s\nwant: %s", text[:n], settled.String(), one)
		}
		if got, want := unwrapped(t, settled.String()+f.Tail), unwrapped(t, convert(t, text[:n], opts...)); got != want {
			return fmt.Sprintf("prefix %q: highlighting changed more than spans:\n got: %s\nwant: %s", text[:n], got, want)
		}
	}
	settled.WriteString(d.Finish().Append)
	if got, want := settled.String(), convert(t, text, hl...); got != want {
		return fmt.Sprintf("after Finish:\n got: %s\nwant: %s", got, want)
	}
	return ""
}

func TestHighlightedBlocksOnlyGainSpans(t *testing.T) {
	text := "```go\nfunc main() {\n\tx := \"a<b\" // c\n}\n```\n"
	got := convert(t, text, highlight.Option())
	require.True(t, strings.HasPrefix(got, `<pre><code class="language-go"><span class="hl-kd">func</span>`), got)
	require.Contains(t, got, "\t", "tabs are kept")
	require.Equal(t, unwrapped(t, convert(t, text)), unwrapped(t, got))
}

func TestBlocksChromaCannotHighlightRenderAsWithoutHighlighting(t *testing.T) {
	for _, text := range []string{"```\nno language\n```\n", "```nosuchlanguage\nx\n```\n", "    indented code\n", "`inline`\n"} {
		require.Equal(t, convert(t, text), convert(t, text, highlight.Option()), text)
	}
}

func TestTheInfoStringCannotTurnOnLineNumbersOrLineSpans(t *testing.T) {
	text := "```go {linenos=table,hl_lines=[1],linenostart=5}\nx := 1\ny := 2\n```\n"
	got := convert(t, text, highlight.Option())
	require.NotContains(t, got, "<table")
	require.NotContains(t, got, "hl-ln")
	require.NotContains(t, got, "hl-hl")
	require.NotContains(t, got, "hl-line")
	require.Equal(t, unwrapped(t, convert(t, text)), unwrapped(t, got))
}

func TestAnOpenCodeBlockStreamsPlainAndIsHighlightedWhenItSettles(t *testing.T) {
	text := "Intro.\n\n```python\ndef f(x):\n    return x * 2\n```\n\nAfter.\n"
	d := newDocument(t, highlight.Option())
	sawPlainTail, appended := false, 0
	for _, n := range rendertest.EveryByte(text) {
		f := d.Update(text[:n])
		if strings.Contains(f.Tail, `<code class="language-python">def`) {
			sawPlainTail = true
		}
		require.NotContains(t, f.Tail, `class="hl-`, "the live code block is plain")
		if strings.Contains(f.Append, "<pre>") {
			appended++
			require.Contains(t, f.Append, `<span class="hl-k">def</span>`, "settled highlighted, in the frame that settles it")
		}
	}
	require.True(t, sawPlainTail)
	require.Equal(t, 1, appended, "the block is written once")
}

func TestStreamedHighlightingMatchesTheOneShotRenderingAtEveryByte(t *testing.T) {
	for _, text := range []string{
		"```go\npackage main\n\nfunc main() {}\n```\n\ntext\n",
		"- item\n\n  ```js\n  let a = 1;\n  ```\n- two\n\n> ```sh\n> ls -la\n> ```\n\nend",
		"```python\n# unclosed at the end\nx = 1",
		"See [x].\n\n```go\nx := 1\n```\n\n[x]: /u\n\nlast",
		"~~~ruby\nputs 'hi'\n~~~\n```go\nvar s = `raw`\n```\n",
		"```go\r\nx := 1\r\n```\r\n\r\nafter",
	} {
		if msg := streamCheck(t, text, rendertest.EveryByte(text)); msg != "" {
			t.Errorf("%q: %s", text, msg)
		}
		if msg := streamCheck(t, text, rendertest.EveryByte(text), render.WithDirAuto(true)); msg != "" {
			t.Errorf("%q with dir=auto: %s", text, msg)
		}
	}
}

func TestSpecExamplesAndAnswersStreamWithHighlighting(t *testing.T) {
	if runtime.GOOS == "js" && testing.Short() {
		// Chroma over every example takes minutes on Node; the native run
		// and render's own spec tests on Node cover it.
		t.Skip("the highlighted spec examples run natively, or on Node without -short")
	}
	spec := rendertest.Spec(t)
	for _, ex := range spec {
		if msg := streamCheck(t, ex.Markdown, rendertest.TokenCuts(ex.Markdown, uint32(ex.Example))); msg != "" {
			t.Errorf("spec example %d: %s", ex.Example, msg)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "answers", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if msg := streamCheck(t, string(b), rendertest.TokenCuts(string(b), 9)); msg != "" {
			t.Errorf("%s: %s", f, msg)
		}
	}
}

func TestTheStylesheetHasBothThemesAndNothingThatMovesText(t *testing.T) {
	css, err := highlight.CSS()
	require.NoError(t, err)
	require.Contains(t, css, "trickle-answer pre code .hl-k { color: light-dark(#cf222e, #ff7b72) }")
	for _, bad := range []string{"display", "padding", "margin", "background", "hl-line", "hl-chroma", "white-space"} {
		require.NotContains(t, css, bad)
	}
	// Every class highlighting writes for common languages has a rule.
	got := convert(t, "```go\n// c\nfunc f() string { return \"s\" + 1 }\n```\n", highlight.Option())
	for _, cls := range []string{"hl-c1", "hl-kd", "hl-nf", "hl-s", "hl-mi"} {
		require.Contains(t, got, `class="`+cls+`"`)
		require.Contains(t, css, "."+cls+" {")
	}
}

// newDocument is render.NewDocument for options the test knows are good.
func newDocument(tb testing.TB, opts ...render.Option) *render.Document {
	tb.Helper()
	d, err := render.NewDocument(opts...)
	require.NoError(tb, err)
	return d
}

// convert is render.Convert for options the test knows are good.
func convert(tb testing.TB, text string, opts ...render.Option) string {
	tb.Helper()
	html, err := render.Convert(text, opts...)
	require.NoError(tb, err)
	return html
}
