package render

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

func TestFootnotesSettleAfterTheirMarkOnlyAtTheEnd(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		settled string
	}{
		{"blocks before the first footnote reference settle", "# Intro\n\nPlain.\n\nSee this.[^1]\n\nMore.\n\n[^1]: A note.\n\nEnd\n",
			"<h1>Intro</h1>\n<p>Plain.</p>\n"},
		{"a block with a reference waiting for its definition stays live", "Claim.[^a]\n\nNext\n", ""},
		{"a definition before any reference keeps itself and what follows live", "[^a]: Note.\n\nText.[^a]\n\nNext\n", ""},
		{"a regular expression in a code span is no footnote mark", "Split on `[^a-z]`.\n\nNext\n",
			"<p>Split on <code>[^a-z]</code>.</p>\n"},
		{"a regular expression in a code block is no footnote mark", "```\n[^a-z]+\n```\n\nNext\n",
			"<pre><code>[^a-z]+\n</code></pre>\n"},
		{"a mark in raw HTML is no footnote mark", "<span title=\"[^x]\">hi</span>\n\nNext\n",
			"<p><!-- raw HTML omitted -->hi<!-- raw HTML omitted --></p>\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			settled, tail := settledAfter(c.text)
			require.Equal(t, c.settled, settled)
			require.Equal(t, convert(t, c.text), settled+tail, "equivalence")
		})
	}
}

func TestTheFootnoteListIsInTheTailUntilTheEnd(t *testing.T) {
	text := loadSample(t, "answers/footnotes.md")
	d := newDocument(t)
	var settled strings.Builder
	sawList := false
	for _, n := range rendertest.TokenCuts(text, 3) {
		f := d.Update(text[:n])
		settled.WriteString(f.Append)
		require.NotContains(t, f.Append, "footnote", "no footnote reference or list settles before Finish")
		sawList = sawList || strings.Contains(f.Tail, `<div class="footnotes" role="doc-endnotes">`)
		require.Equal(t, convert(t, text[:n]), settled.String()+f.Tail)
	}
	require.True(t, sawList, "the list shows in the tail as soon as a referenced note is defined")
	require.Contains(t, settled.String(), "<h1>Why the build got slower</h1>", "the blocks before the first reference settled")
	settled.WriteString(d.Finish().Append)
	final := convert(t, text)
	require.Equal(t, final, settled.String())
	// goldmark numbers notes by first reference and drops unreferenced ones.
	require.Contains(t, final, `<sup id="fnref:1"><a href="#fn:1" class="footnote-ref" role="doc-noteref">1</a></sup>`)
	require.Contains(t, final, `<sup id="fnref1:1"><a href="#fn:1" class="footnote-ref" role="doc-noteref">1</a></sup>`, "the second reference to note 1")
	require.Contains(t, final, `<li id="fn:4">`)
	require.NotContains(t, final, "never referenced")
}

func TestFootnoteAnswersStreamLikeConvertAtEveryByte(t *testing.T) {
	for _, text := range []string{
		"a[^1]\n\n[^1]: b\n",
		"[^1]: first\n\nx[^1] y[^2]\n\n[^2]: second [^1]\n",
		"- item[^n]\n- two\n\n[^n]: note\n    indented more\n\nafter\n",
		"| a | b |\n| - | - |\n| 1[^t] | 2 |\n| 3 | 4 |\n[^t]: in a table\n",
		"> quoted[^q]\n>\n> [^q]: defined inside the quote\n\nout[^q]\n",
		"![^1] and [^1][^1]\n\n[^1]: twice\n",
	} {
		for _, opts := range [][]Option{nil, {WithDirAuto(true)}} {
			if msg := streamCheck(text, rendertest.EveryByte(text), opts...); msg != "" {
				t.Errorf("%q: %s", text, msg)
			}
		}
	}
}

// Two answers on one page must not share footnote ids: each renders with
// its own prefix, which goes before every id and into every link to it.
func TestAFootnotePrefixGoesBeforeEveryIDAndLinkOfTheNotes(t *testing.T) {
	text := "One[^1] and two[^b].\n\n[^1]: First.\n[^b]: Second.\n"
	plain := convert(t, text)
	a := convert(t, text, WithFootnotePrefix("trickle1-"))
	b := convert(t, text, WithFootnotePrefix("trickle2-"))
	require.Contains(t, plain, `<sup id="fnref:1"><a href="#fn:1" class="footnote-ref" role="doc-noteref">1</a></sup>`, "no prefix: goldmark's own ids")
	require.Contains(t, a, `<sup id="trickle1-fnref:1"><a href="#trickle1-fn:1" class="footnote-ref" role="doc-noteref">1</a></sup>`)
	require.Contains(t, a, `<li id="trickle1-fn:2">`)
	require.Contains(t, a, `<a href="#trickle1-fnref:2" class="footnote-backref" role="doc-backlink">`)
	require.Equal(t, strings.ReplaceAll(a, "trickle1-", "trickle2-"), b, "only the prefix differs")
	idOrRef := regexp.MustCompile(`(?:id="|href="#)([^"]*)"`)
	ids := map[string]bool{}
	for _, m := range idOrRef.FindAllStringSubmatch(a, -1) {
		require.True(t, strings.HasPrefix(m[1], "trickle1-"), "every footnote id and link is prefixed: %s", m[1])
		ids[m[1]] = true
	}
	for _, m := range idOrRef.FindAllStringSubmatch(b, -1) {
		require.False(t, ids[m[1]], "the other answer's id %s", m[1])
	}
	require.Equal(t, plain, convert(t, text, WithFootnotePrefix("")), "an empty prefix is none")
}

func TestAFootnotePrefixOfCharactersUnsafeInAnAttributeIsRefused(t *testing.T) {
	for _, prefix := range []string{`a"><script>`, "-_9é", "a b", "a:b"} {
		_, err := Convert("x[^1]\n\n[^1]: n\n", WithFootnotePrefix(prefix))
		require.ErrorIs(t, err, ErrBadOption, prefix)
	}
	got := convert(t, "x[^1]\n\n[^1]: n\n", WithFootnotePrefix("a-_9"))
	require.Contains(t, got, `<sup id="a-_9fnref:1"><a href="#a-_9fn:1"`)
}

func TestPrefixedFootnoteAnswersStreamLikeConvertAtEveryByte(t *testing.T) {
	for _, text := range []string{
		"a[^1]\n\n[^1]: b\n",
		"[^1]: first\n\nx[^1] y[^2]\n\n[^2]: second [^1]\n",
		"| a | b |\n| - | - |\n| 1[^t] | 2 |\n| 3 | 4 |\n[^t]: in a table\n",
		"> quoted[^q]\n>\n> [^q]: defined inside the quote\n\nout[^q]\n",
	} {
		for _, opts := range [][]Option{{WithFootnotePrefix("p7-")}, {WithFootnotePrefix("p7-"), WithDirAuto(true)}} {
			if msg := streamCheck(text, rendertest.EveryByte(text), opts...); msg != "" {
				t.Errorf("%q: %s", text, msg)
			}
		}
		require.Contains(t, convert(t, text, WithFootnotePrefix("p7-")), `id="p7-fn`, "the oracle itself is prefixed")
	}
	long := loadSample(t, "answers/footnotes.md")
	for seed := uint32(1); seed <= 3; seed++ {
		if msg := streamCheck(long, rendertest.TokenCuts(long, seed), WithFootnotePrefix("a2-"), WithDirAuto(true)); msg != "" {
			t.Errorf("footnotes.md, seed %d: %s", seed, msg)
		}
	}
}

// A Document reused for another answer (Reset) keeps its prefix.
func TestAResetDocumentKeepsItsFootnotePrefix(t *testing.T) {
	d := newDocument(t, WithFootnotePrefix("k-"))
	d.Update("a[^1]\n\n[^1]: b\n")
	d.Reset()
	d.Update("c[^1]\n\n[^1]: d\n")
	f := d.Finish()
	require.Equal(t, convert(t, "c[^1]\n\n[^1]: d\n", WithFootnotePrefix("k-")), f.Append)
	require.Contains(t, f.Append, `id="k-fn:1"`)
}
