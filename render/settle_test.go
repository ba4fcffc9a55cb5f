package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// settledAfter feeds text in one Update and returns the settled HTML.
func settledAfter(text string) (settled, tail string) {
	d := must(NewDocument())
	f := d.Update(text)
	return f.Append, f.Tail
}

func TestSettlingRules(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		settled string
	}{
		{"a paragraph followed by a blank line and another block settles", "Hello\n\nWorld", "<p>Hello</p>\n"},
		{"a paragraph without a blank line after it may still become a setext heading", "Title\n", ""},
		{"a paragraph whose next line is unfinished may still become a heading or a table", "Title\n--", ""},
		{"a setext heading settles once its underline line is complete", "Title\n---\n", "<h2>Title</h2>\n"},
		{"an ATX heading settles as soon as its line is complete", "# Title\n", "<h1>Title</h1>\n"},
		{"an unfinished ATX heading line does not settle", "# Tit", ""},
		{"a thematic break settles at the end of its line", "***\n", "<hr>\n"},
		{"an open fenced code block does not settle", "```go\nx := 1\n", ""},
		{"a closed fenced code block settles after its closing line", "```go\nx := 1\n```\n", "<pre><code class=\"language-go\">x := 1\n</code></pre>\n"},
		{"a closing fence without its newline may still become content", "```go\nx := 1\n```", ""},
		{"a longer fence is not closed by a shorter one", "````\nx\n```\n", ""},
		{"a list followed by blank lines may still gain items or turn loose", "- a\n- b\n\n", ""},
		{"a list closed by an unindented paragraph settles", "- a\n- b\n\nNext\n", "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"},
		{"a list is closed by an unindented letter starting the unfinished line", "- a\n\nN", "<ul>\n<li>a</li>\n</ul>\n"},
		{"a list followed by an unfinished line that may be its next item is not closed", "- a\n\n-", ""},
		{"an ordered list followed by a digit that may start its next item is not closed", "1. a\n\n2", ""},
		{"a list followed by an unfinished indented line is not closed", "- a\n\n  b", ""},
		{"a block quote is closed by an unindented letter after a blank line", "> q\n\nNext", "<blockquote>\n<p>q</p>\n</blockquote>\n"},
		{"a block quote with a lazy continuation line is still open", "> quote\nlazy\n", ""},
		{"a block quote closed by a blank line and a paragraph settles", "> quote\n\nafter\n", "<blockquote>\n<p>quote</p>\n</blockquote>\n"},
		{"a table header waits for its delimiter row", "| a | b |\n", ""},
		{"a table gains rows until a blank line", "| a | b |\n| - | - |\n| 1 | 2 |\n", ""},
		{"a table closed by a blank line settles", "| a |\n| - |\n| 1 |\n\nx\n", "<table>\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n</tr>\n</tbody>\n</table>\n"},
		{"a paragraph before an unfinished delimiter row stays open", "**x**\n| a | b |\n| :-: | :-", ""},
		{"indented code may continue after blank lines", "    code\n\n", ""},
		{"indented code closed by an unindented line settles", "    code\n\n    more\n\nx\n", "<pre><code>code\n\nmore\n</code></pre>\n"},
		{"an HTML block is omitted and settles once closed", "<div>\nhi\n\nx\n", "<!-- raw HTML omitted -->\n"},
		{"an HTML comment block settles after its closing line", "<!--\nhidden\n-->\n", "<!-- raw HTML omitted -->\n<!-- raw HTML omitted -->\n"},
		{"a literal bracket reference does not settle (its definition may come)", "See [docs].\n\nMore\n", ""},
		{"a reference resolved by an earlier definition settles", "[docs]: https://x.test\n\nSee [docs].\n\nMore\n", "<p>See <a href=\"https://x.test\" rel=\"noopener noreferrer nofollow ugc\">docs</a>.</p>\n"},
		{"a reference resolved by a later, closed definition settles", "See [docs].\n\n[docs]: https://x.test\n\nMore\n", "<p>See <a href=\"https://x.test\" rel=\"noopener noreferrer nofollow ugc\">docs</a>.</p>\n"},
		{"a reference resolved by a definition still being written does not settle", "See [docs].\n\n[docs]: https://x.test\n", ""},
		{"a definition whose title may continue on the next line does not settle", "[a]: /u\n\"title\n", ""},
		{"inline links do not hold a block back", "A [link](https://x.test).\n\nB\n", "<p>A <a href=\"https://x.test\" rel=\"noopener noreferrer nofollow ugc\">link</a>.</p>\n"},
		{"brackets inside code spans do not hold a block back", "Use `a[0]`.\n\nB\n", "<p>Use <code>a[0]</code>.</p>\n"},
		{"a blank line holding only spaces separates blocks", "para\n   \nnext\n", "<p>para</p>\n"},
		{"a tab after a list marker is handled like the one-shot parse", "-\ta\n\nb\n", "<ul>\n<li>a</li>\n</ul>\n"},
		{"the last line is never settled, even when it looks complete", "Hello", ""},
		{"a table cut out of a paragraph is never split from the rest of it", "x\n     indented\n| - |\n# h\n", "<p>x</p>\n<table>\n<thead>\n<tr>\n<th>indented</th>\n</tr>\n</thead>\n</table>\n<h1>h</h1>\n"},
		{"task lists settle like lists", "- [x] done\n- [ ] todo\n\nok\n", "<ul>\n<li><input checked=\"\" disabled=\"\" type=\"checkbox\"> done</li>\n<li><input disabled=\"\" type=\"checkbox\"> todo</li>\n</ul>\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			settled, tail := settledAfter(c.text)
			require.Equal(t, c.settled, settled)
			require.Equal(t, convert(t, c.text), settled+tail, "equivalence")
		})
	}
}

func TestSettledPartIsNotParsedAgain(t *testing.T) {
	// A long answer of closed paragraphs: the tail stays one block however
	// long the answer gets.
	d := newDocument(t)
	var text strings.Builder
	maxTail := 0
	for i := 0; i < 500; i++ {
		text.WriteString("Paragraph number with some words in it.\n\n")
		f := d.Update(text.String() + "Unfinished")
		maxTail = max(maxTail, len(f.Tail))
	}
	require.Less(t, maxTail, 200, "the tail holds the open paragraph only")
	// The blank line before the open paragraph stays with it.
	require.Equal(t, len(text.String())-1, d.settled, "everything before the last line settled")
}

func TestLongAnswersKeepTheUnsettledTailSmall(t *testing.T) {
	// Settling is what keeps a frame's cost independent of the answer's
	// length: streaming the 100 KB sample, the unsettled text never grows
	// beyond its largest block (a long list or code block).
	text := loadSample(t, "sample-100k")
	d := newDocument(t)
	lag := 0
	for n := 0; n < len(text); n += 160 {
		d.Update(text[:n])
		lag = max(lag, n-d.settled)
	}
	require.Less(t, lag, 4096)
}

func TestCitationsWithoutDefinitionsWaitForTheEnd(t *testing.T) {
	// "[1]" may still become a link when "[1]: url" arrives, so a block
	// with it cannot settle; with the definitions present it can.
	d := newDocument(t)
	f := d.Update("Sleep matters [1].\n\nMore.\n\nEven more.\n")
	require.Empty(t, f.Append)
	f = d.Update("Sleep matters [1].\n\nMore.\n\nEven more.\n\n[1]: https://ok.example/paper\n\nEnd")
	require.Contains(t, f.Append, `<a href="https://ok.example/paper" rel="noopener noreferrer nofollow ugc">1</a>`)
}

func TestAnUnresolvedReferenceKeepsBlocksPendingButFramesSmall(t *testing.T) {
	// "[1]" holds back everything after it (settled HTML is a prefix), but
	// the blocks after it are closed: they wait, rendered, at the start of
	// the tail, and only the live part is parsed per frame.
	text := "Sleep matters [1].\n\n" + loadSample(t, "sample-20k") + "\n\n[1]: https://ok.example/paper\n\nEnd.\n"
	d := newDocument(t)
	var settled strings.Builder
	live := 0
	for n := 160; n < len(text); n += 160 {
		f := d.Update(text[:n])
		settled.WriteString(f.Append)
		live = max(live, n-d.pendingEnd)
		if n < len(text)-200 {
			require.Zero(t, d.settled, "nothing settles before the definition")
		}
		require.Equal(t, convert(t, text[:n]), settled.String()+f.Tail)
	}
	require.Less(t, live, 4096, "the live part stays one block long")
	f := d.Update(text)
	settled.WriteString(f.Append)
	require.Contains(t, settled.String(), `Sleep matters <a href="https://ok.example/paper" rel="noopener noreferrer nofollow ugc">1</a>.`,
		"once the definition is final, everything before it settles")
	settled.WriteString(d.Finish().Append)
	require.Equal(t, convert(t, text), settled.String())
}

func TestLifecycle(t *testing.T) {
	t.Run("the same text again gives the same tail and appends nothing", func(t *testing.T) {
		d := newDocument(t)
		first := d.Update("# A\n\nsome text")
		again := d.Update("# A\n\nsome text")
		require.Equal(t, "<h1>A</h1>\n", first.Append)
		require.Empty(t, again.Append)
		require.Equal(t, first.Tail, again.Tail)
	})
	t.Run("Finish settles everything and later frames are empty and final", func(t *testing.T) {
		d := newDocument(t)
		d.Update("- a\n- b")
		f := d.Finish()
		require.True(t, f.Final)
		require.Equal(t, "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n", f.Append)
		require.Empty(t, f.Tail)
		require.Len(t, f.Settled, 1)
		require.Equal(t, Frame{Final: true}, d.Update("- a\n- b\n- c"))
		require.Equal(t, Frame{Final: true}, d.Finish())
	})
	t.Run("Reset starts a new answer with the same options", func(t *testing.T) {
		d := newDocument(t, WithPolicy(Policy{SameOrigin: "https://app.example"}))
		d.Update("[x]: /old\n\n# First\n\nbody")
		d.Finish()
		d.Reset()
		var settled strings.Builder
		text := "[x]\n\n![i](https://app.example/i.png)\n"
		for _, n := range []int{3, 9, 20, 31, len(text)} {
			f := d.Update(text[:n])
			settled.WriteString(f.Append)
			require.Equal(t, convert(t, text[:n], WithPolicy(Policy{SameOrigin: "https://app.example"})), settled.String()+f.Tail)
		}
		require.Contains(t, settled.String()+d.Finish().Append, `<img src="https://app.example/i.png"`, "the policy survives Reset")
	})
	t.Run("a text that shrinks below what was closed keeps the frame", func(t *testing.T) {
		d := newDocument(t)
		f := d.Update("# A\n\nB\n\nC")
		require.Equal(t, Frame{Tail: f.Tail, TailBlocks: f.TailBlocks}, d.Update("# A"))
	})
	t.Run("an empty document finishes empty", func(t *testing.T) {
		f := newDocument(t).Finish()
		require.Equal(t, Frame{Final: true}, f)
	})
}
