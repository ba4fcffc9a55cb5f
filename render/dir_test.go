package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

func TestDirAutoMarksEveryTextBlockAndNoCode(t *testing.T) {
	text := "# عنوان\n\nפסקה ראשונה.\n\n- one\n- اثنان\n\n> quote\n\n| a |\n| - |\n| ب |\n\n```\ncode\n```\n\n    indented\n\ntext[^1]\n\n[^1]: note\n"
	got := convert(t, text, WithDirAuto(true))
	for _, want := range []string{`<h1 dir="auto">عنوان</h1>`, `<p dir="auto">פסקה ראשונה.</p>`, `<ul dir="auto">`,
		"<li>one</li>", "<blockquote dir=\"auto\"><p>quote</p>", `<blockquote dir="auto">`, `<table dir="auto">`, "<pre><code>code\n", "<pre><code>indented\n",
		`<div class="footnotes" role="doc-endnotes" dir="auto">`, `<li id="fn:1">`} {
		require.Contains(t, got, want)
	}
	require.NotContains(t, convert(t, text), "dir=", "off by default")
	require.Equal(t, 2, strings.Count(got, "<p>"), "every top-level paragraph has its direction; the quote's and the note's inherit theirs")
}

func TestDirAutoStreamsLikeConvert(t *testing.T) {
	for _, name := range []string{"answers/tables.md", "answers/code-review.md", "answers/footnotes.md", "answers/citations.md"} {
		text := loadSample(t, name)
		if msg := streamCheck(text, rendertest.TokenCuts(text, 5), WithDirAuto(true)); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
	}
	rtl := "## نظرة عامة\n\nهذا نص عربي مع `code` و**تأكيد**.\n\n- البند الأول\n- English item\n\n| العمود | col |\n| --- | --- |\n| ١ | 2 |\n\nשלום עולם.\n"
	if msg := streamCheck(rtl, rendertest.EveryByte(rtl), WithDirAuto(true)); msg != "" {
		t.Error(msg)
	}
}
