package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The oracle is golang.org/x/net/html, an implementation of the HTML
// standard's parsing algorithm: the tail as a browser holds it is the parse
// of its HTML in a <div>, and applying a TailPatch to the parse of the old
// tail must give exactly the parse of the new one — the same nodes, text
// nodes split the same way, the same attributes.

func parseTail(t testing.TB, s string) *html.Node {
	t.Helper()
	div := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(s), div)
	require.NoError(t, err)
	for _, n := range nodes {
		div.AppendChild(n)
	}
	return div
}

// applyPatch does to a parsed tree what trickle.js does to the DOM.
func applyPatch(t testing.TB, root *html.Node, p TailPatch) error {
	t.Helper()
	el := root
	for _, i := range p.Path {
		c := childAt(el, i)
		if c == nil || c.Type != html.ElementNode {
			return fmt.Errorf("path %v: no element at %d", p.Path, i)
		}
		el = c
	}
	if p.Keep > 0 && childAt(el, p.Keep-1) == nil {
		return fmt.Errorf("keep %d of fewer children", p.Keep)
	}
	for c := childAt(el, p.Keep); c != nil; {
		next := c.NextSibling
		el.RemoveChild(c)
		c = next
	}
	if p.Text != "" || p.Trim != 0 {
		last := el.LastChild
		if last == nil || last.Type != html.TextNode {
			return fmt.Errorf("text %q (trim %d) for a child that is not a text node", p.Text, p.Trim)
		}
		// The DOM's deleteData counts UTF-16 code units.
		units := utf16.Encode([]rune(last.Data))
		if p.Trim < 0 || p.Trim > len(units) {
			return fmt.Errorf("trim %d of a text node of %d code units", p.Trim, len(units))
		}
		last.Data = string(utf16.Decode(units[:len(units)-p.Trim])) + p.Text
	}
	if p.HTML != "" {
		nodes, err := html.ParseFragment(strings.NewReader(p.HTML), &html.Node{Type: html.ElementNode, Data: el.Data, DataAtom: el.DataAtom})
		require.NoError(t, err)
		for _, n := range nodes {
			el.AppendChild(n)
		}
	}
	return nil
}

func childAt(n *html.Node, i int) *html.Node {
	c := n.FirstChild
	for ; c != nil && i > 0; i-- {
		c = c.NextSibling
	}
	return c
}

// sameTree compares two trees node by node (html.Render would hide two
// adjacent text nodes that should have been one).
func sameTree(a, b *html.Node) string {
	if a.Type != b.Type || a.Data != b.Data {
		return fmt.Sprintf("node %d %q is %d %q", b.Type, b.Data, a.Type, a.Data)
	}
	if fmt.Sprint(a.Attr) != fmt.Sprint(b.Attr) {
		return fmt.Sprintf("<%s> has attributes %v, want %v", a.Data, a.Attr, b.Attr)
	}
	ac, bc := a.FirstChild, b.FirstChild
	for ac != nil && bc != nil {
		if msg := sameTree(ac, bc); msg != "" {
			return msg
		}
		ac, bc = ac.NextSibling, bc.NextSibling
	}
	if ac != nil || bc != nil {
		return fmt.Sprintf("<%s> has a different number of children", a.Data)
	}
	return ""
}

// checkPatch applies DiffTail(old, next) to the parse of old and compares
// with the parse of next; it returns the patch and a failure description.
func checkPatch(t testing.TB, old, next string) (TailPatch, string) {
	t.Helper()
	p := DiffTail(old, next)
	got := parseTail(t, old)
	if err := applyPatch(t, got, p); err != nil {
		return p, err.Error()
	}
	if msg := sameTree(got, parseTail(t, next)); msg != "" {
		return p, fmt.Sprintf("patch %+v: %s", p, msg)
	}
	return p, ""
}

func TestTailPatches(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, next string
		want      TailPatch
	}{
		{
			name: "a growing paragraph gets its new words appended to its text node",
			old:  "<p>Hello</p>\n", next: "<p>Hello, world</p>\n",
			want: TailPatch{Path: []int{0}, Keep: 1, Text: ", world"},
		},
		{
			name: "text is compared decoded, so an entity may end the old text",
			old:  "<p>fish &amp;</p>\n", next: "<p>fish &amp; chips &lt;3</p>\n",
			want: TailPatch{Path: []int{0}, Keep: 1, Text: " chips <3"},
		},
		{
			name: "new inline markup after the text is inserted after it",
			old:  "<p>a</p>\n", next: "<p>a <em>b</em></p>\n",
			want: TailPatch{Path: []int{0}, Keep: 1, Text: " ", HTML: "<em>b</em>"},
		},
		{
			name: "text inside the last inline element grows in place",
			old:  "<p>a <strong>bo</strong></p>\n", next: "<p>a <strong>bold</strong></p>\n",
			want: TailPatch{Path: []int{0, 1}, Keep: 1, Text: "ld"},
		},
		{
			name: "a new list item is inserted into the list, the others stay",
			old:  "<ul>\n<li>one</li>\n<li>tw</li>\n</ul>\n", next: "<ul>\n<li>one</li>\n<li>two</li>\n<li>th</li>\n</ul>\n",
			want: TailPatch{Path: []int{0}, Keep: 3, HTML: "<li>two</li>\n<li>th</li>\n"},
		},
		{
			name: "a code block grows inside its code element",
			old:  "<pre><code class=\"language-go\">func main() {\n</code></pre>\n", next: "<pre><code class=\"language-go\">func main() {\n\tfmt.Println()\n</code></pre>\n",
			want: TailPatch{Path: []int{0, 0}, Keep: 1, Text: "\tfmt.Println()\n"},
		},
		{
			name: "text that changed at its end keeps what stayed, trims the rest",
			old:  "<p>a *b</p>\n", next: "<p>a <em>b</em></p>\n",
			want: TailPatch{Path: []int{0}, Keep: 1, Trim: 2, HTML: "<em>b</em>"},
		},
		{
			name: "an open fence's last line, closed by a line break until it goes on, is continued in place",
			old:  "<pre><code class=\"language-ts\">let a = 1;\nif (a &lt; \n</code></pre>\n", next: "<pre><code class=\"language-ts\">let a = 1;\nif (a &lt; 2) {\n</code></pre>\n",
			want: TailPatch{Path: []int{0, 0}, Keep: 1, Trim: 1, Text: "2) {\n"},
		},
		{
			name: "trim counts UTF-16 code units, as the DOM does, and cuts between runes",
			old:  "<p>x 😀</p>\n", next: "<p>x 🙂</p>\n", // F0 9F 98 80, F0 9F 99 82
			want: TailPatch{Path: []int{0}, Keep: 1, Trim: 2, Text: "🙂"},
		},
		{
			name: "a rune that changed is trimmed whole",
			old:  "<p>x é</p>\n", next: "<p>x è</p>\n",
			want: TailPatch{Path: []int{0}, Keep: 1, Trim: 1, Text: "è"},
		},
		{
			name: "text with nothing in common is replaced",
			old:  "<p>ab</p>\n", next: "<p><em>ab</em></p>\n",
			want: TailPatch{Path: []int{0}, Keep: 0, HTML: "<em>ab</em>"},
		},
		{
			name: "a paragraph that became a heading replaces the tail",
			old:  "<p>Title</p>\n", next: "<h2>Title</h2>\n",
			want: TailPatch{HTML: "<h2>Title</h2>\n"},
		},
		{
			name: "a changed attribute replaces the element, not the text before it",
			old:  "<p>see <a href=\"/a\">x</a></p>\n", next: "<p>see <a href=\"/ab\">x</a></p>\n",
			want: TailPatch{Path: []int{0}, Keep: 1, HTML: "<a href=\"/ab\">x</a>"},
		},
		{
			name: "a new block after the live one is appended to the tail",
			old:  "<p>a</p>\n", next: "<p>a</p>\n<p>b</p>\n",
			want: TailPatch{Keep: 2, HTML: "<p>b</p>\n"},
		},
		{
			name: "a table gains a cell in its last row",
			old:  "<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n</tr>\n</tbody>\n</table>\n",
			next: "<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n</tr>\n<tr>\n<td>2</td>\n</tr>\n</tbody>\n</table>\n",
			want: TailPatch{Path: []int{0, 3}, Keep: 3, HTML: "<tr>\n<td>2</td>\n</tr>\n"},
		},
		{
			name: "HTML the browser would parse differently from its markup is replaced whole",
			old:  "<pre>\nx</pre>", next: "<pre>\nxy</pre>",
			want: TailPatch{HTML: "<pre>\nxy</pre>"},
		},
		{
			name: "unclosed elements are replaced whole",
			old:  "<p>a", next: "<p>ab",
			want: TailPatch{HTML: "<p>ab"},
		},
		{
			name: "from an empty tail, everything is inserted",
			old:  "", next: "<p>a</p>\n",
			want: TailPatch{HTML: "<p>a</p>\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, DiffTail(tc.old, tc.next))
			_, msg := checkPatch(t, tc.old, tc.next)
			require.Empty(t, msg)
		})
	}
}

// tailsOf streams text into a Document in cuts of the given sizes (in runes,
// cycling) and returns the tail after every Update.
func tailsOf(text string, steps []int) []string {
	d := must(NewDocument())
	var tails []string
	n, k := 0, 0
	for n < len(text) {
		for r := 0; r < steps[k%len(steps)] && n < len(text); r++ {
			_, size := utf8.DecodeRuneInString(text[n:])
			n += size
		}
		k++
		tails = append(tails, d.Update(text[:n]).Tail)
	}
	return tails
}

func TestTailPatchesTurnEveryStreamedTailIntoTheNext(t *testing.T) {
	files := []string{sample("sample-20k"), "testdata/xss/corpus.md"}
	answers, _ := filepath.Glob("testdata/answers/*.md")
	files = append(files, answers...)
	if !testing.Short() {
		files = append(files, sample("sample-100k"))
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		// Frames of a few tokens, and every single rune.
		for _, steps := range [][]int{{4, 12, 7, 30, 1, 16}, {1}} {
			if steps[0] == 1 && (len(b) > 25_000 || testing.Short() && len(b) > 4_000) {
				continue // -short: keeps the js/wasm run on Node short
			}
			t.Run(fmt.Sprintf("%s in cuts of %v runes", filepath.Base(file), steps), func(t *testing.T) {
				tails := tailsOf(string(b), steps)
				patches, full := 0, 0
				for i := 1; i < len(tails); i++ {
					if tails[i] == tails[i-1] {
						continue
					}
					p, msg := checkPatch(t, tails[i-1], tails[i])
					require.Empty(t, msg, "from tail %q\nto tail %q", tails[i-1], tails[i])
					patches++
					if p.Full() {
						full++
					}
				}
				t.Logf("%d patches, %d of them replace the whole tail", patches, full)
			})
		}
	}
}

// FuzzDiffTail checks the patch against the parser on any pair of
// fragments: goldmark's renders of a text and of a longer text (what the
// widget meets), and the raw strings themselves as HTML (whatever DiffTail
// accepts instead of falling back must be right too).
func FuzzDiffTail(f *testing.F) {
	f.Add("Hello *wor", "ld* and more\n\n- a\n- b")
	f.Add("| a | b |\n|---|---|\n| 1 |", " 2 |\n| 3 | 4 |")
	f.Add("<p>a <b>x</b></p>", "<p>a <b>xy</b>z</p>")
	f.Add("```go\nfunc", " main() {}\n```\n")
	f.Add("<table><tbody><tr><td>a</td></tr>", "<tr><td>b</td></tr></tbody></table>")
	f.Add("<p>x &amp", "; y</p><pre>\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		if _, msg := checkPatch(t, convert(t, a), convert(t, a+b)); msg != "" {
			t.Fatalf("markdown %q then %q: %s", a, b, msg)
		}
		if _, msg := checkPatch(t, a, b); msg != "" {
			t.Fatalf("HTML %q to %q: %s", a, b, msg)
		}
		requireResumeParsesAsFresh(t, convert(t, a), convert(t, a+b))
		requireResumeParsesAsFresh(t, a, a+b)
		requireResumeParsesAsFresh(t, a, b)
	})
}

// requireResumeParsesAsFresh checks that parsing next from the parse of
// old gives exactly the nodes of parsing next on its own.
func requireResumeParsesAsFresh(t testing.TB, old, next string) {
	t.Helper()
	of, ok := parseFragment(old)
	if !ok || old == "" {
		return
	}
	want, wok := parseFragment(next)
	got, gok := resumeFragment(of, next)
	require.Equal(t, wok, gok, "from %q to %q", old, next)
	if wok {
		require.Equal(t, want.nodes, got.nodes, "from %q to %q", old, next)
	}
}

// TestATailParsedFromThePreviousOneEqualsItsFreshParse: TailDiffer parses
// each tail from where it differs from the previous one; for every frame
// of the samples (tables, lists, code, quotes), in cuts of a few runes and
// of single runes, the nodes are those of a parse from scratch.
func TestATailParsedFromThePreviousOneEqualsItsFreshParse(t *testing.T) {
	files, _ := filepath.Glob("testdata/answers/*.md")
	files = append(files, sample("sample-20k"), "testdata/xss/corpus.md")
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, steps := range [][]int{{4, 12, 7, 30, 1, 16}, {1}} {
			if steps[0] == 1 && (len(b) > 8_000 || testing.Short()) {
				continue
			}
			tails := tailsOf(string(b), steps)
			for i := 1; i < len(tails); i++ {
				requireResumeParsesAsFresh(t, tails[i-1], tails[i])
			}
		}
	}
}

func TestATailDifferGivesDiffTailsPatchesFrameAfterFrame(t *testing.T) {
	files, _ := filepath.Glob("testdata/answers/*.md")
	files = append(files, sample("sample-20k"), "testdata/xss/corpus.md")
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		tails := tailsOf(string(b), []int{4, 12, 7, 30, 1, 16})
		// Tails as the widget meets them: one per frame, including an
		// emptied tail (a block settled) and the same tail twice.
		tails = append([]string{"", ""}, tails...)
		tails = append(tails, "", "<p>again</p>\n")
		var d TailDiffer
		prev := ""
		for i, next := range tails {
			require.Equal(t, DiffTail(prev, next), d.Diff(next), "%s: frame %d, from %q to %q", filepath.Base(file), i, prev, next)
			prev = next
		}
		d.Reset()
		require.Equal(t, DiffTail("", "<p>x</p>\n"), d.Diff("<p>x</p>\n"), "after Reset the previous tail is empty")
	}
}
