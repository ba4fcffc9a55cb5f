package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

func TestRepairHoldsBackWhatTheNextCharactersWouldTakeBack(t *testing.T) {
	cases := []struct {
		name string
		text string
		tail string
	}{
		{"a lone dash that may become a setext underline or a list is held back", "Title\n-", "<p>Title</p>\n"},
		{"a lone equals sign that may become a setext underline is held back", "Title\n=", "<p>Title</p>\n"},
		{"a half rule is held back", "Text\n\n--", "<p>Text</p>\n"},
		{"a half fence is held back", "Text\n\n``", "<p>Text</p>\n"},
		{"a table header without its delimiter row is held back", "| a | b |\n", ""},
		{"a table header and half a delimiter row are held back", "Intro:\n| a | b |\n| --", "<p>Intro:</p>\n"},
		{"a table shows once its delimiter row is complete", "| a |\n| - |\n", "<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n</table>\n"},
		{"a link whose destination is being typed is hidden", "See [the docs](htt", "<p>See</p>\n"},
		{"an image whose destination is being typed is hidden", "See ![chart](https://ex", "<p>See</p>\n"},
		{"a link whose text is being typed is hidden", "See [the do", "<p>See</p>\n"},
		{"a finished link is shown", "See [the docs](/docs) and", `<p>See <a href="/docs" rel="noopener noreferrer nofollow ugc">the docs</a> and</p>` + "\n"},
		{"brackets in code blocks are code", "```\nx = a[", "<pre><code>x = a[\n</code></pre>\n"},
		{"brackets in a code span are code", "Use `a[0", "<p>Use <code>a[0</code></p>\n"},
		{"a complete line is never held back", "Title\n", "<p>Title</p>\n"},
		{"strong emphasis being typed shows as strong", "This is **bold te", "<p>This is <strong>bold te</strong></p>\n"},
		{"strikethrough being typed shows as struck", "It is ~~gone", "<p>It is <del>gone</del></p>\n"},
		{"nested markers close innermost first", "A **b ~~c", "<p>A <strong>b <del>c</del></strong></p>\n"},
		{"a code span being typed shows as code", "Call `fmt.Prin", "<p>Call <code>fmt.Prin</code></p>\n"},
		{"markers inside a code span are code", "Use `a ** b", "<p>Use <code>a ** b</code></p>\n"},
		{"closed emphasis is left alone", "**done** and", "<p><strong>done</strong> and</p>\n"},
		{"a marker followed by a space is not an opener", "2 ** 3 is", "<p>2 ** 3 is</p>\n"},
		{"emphasis is not closed on a trailing space", "A **bold ", "<p>A **bold</p>\n"},
		{"a fence line is not touched", "```go", "<pre><code class=\"language-go\"></code></pre>\n"},
		{"code blocks are not touched", "```\nx = **y", "<pre><code>x = **y\n</code></pre>\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newDocument(t, WithRepair(true)).Update(c.text)
			require.Equal(t, c.tail, f.Append+f.Tail)
		})
	}
}

func TestRepairOnlyChangesTheTail(t *testing.T) {
	for _, name := range []string{"sample-20k", "answers/migration-guide.md", "answers/citations.md"} {
		text := loadSample(t, name)
		plain, repaired := newDocument(t), newDocument(t, WithRepair(true))
		var settled strings.Builder
		for _, n := range rendertest.TokenCuts(text, 5) {
			a, b := plain.Update(text[:n]), repaired.Update(text[:n])
			require.Equal(t, a.Append, b.Append, "%s at %d: settled HTML must not depend on repair", name, n)
			settled.WriteString(b.Append)
		}
		settled.WriteString(repaired.Finish().Append)
		require.Equal(t, convert(t, text), settled.String(), "%s: Finish always equals Convert", name)
	}
}

func TestWithRepairATableNeverShowsRawPipes(t *testing.T) {
	text := "Compare:\n\n| engine | speed |\n| :--- | ---: |\n| ours | fast |\n| theirs | slow |\n\nDone.\n"
	d := newDocument(t, WithRepair(true))
	var settled string
	for n := 0; n <= len(text); n++ {
		f := d.Update(text[:n])
		settled += f.Append
		shown := settled + f.Tail
		require.NotContains(t, shown, "| engine", "prefix %q shows the header as text", text[:n])
		require.NotContains(t, shown, "| :--", "prefix %q shows the delimiter row as text", text[:n])
	}
}

func TestWithRepairALinkNeverShowsItsMarkup(t *testing.T) {
	text := "Read [the guide](https://ok.example/guide) and ![a chart](/c.png) today.\n"
	d := newDocument(t, WithRepair(true))
	for n := 0; n <= len(text); n++ {
		f := d.Update(text[:n])
		require.NotContains(t, f.Tail, "[", "prefix %q", text[:n])
		require.NotContains(t, f.Tail, "](", "prefix %q", text[:n])
	}
}
