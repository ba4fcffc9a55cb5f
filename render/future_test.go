package render

import (
	"strings"
	"testing"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

// continuations are adversarial futures: setext underlines, table delimiter
// rows, list items and indents, lazy lines, definitions (also for labels
// used earlier), fence and HTML closers, titles on the next line, blank
// lines, tabs, CRLF.
var continuations = []string{
	"", "\n", "x", "x\n", "\n\n", "\n---\n", "\n===\n", "-\n", "=\n", "\n| - |\n", "|\n| - |\n", "| - | - |\n",
	"\n  - item\n", "\n- item\n", "\n1. one\n", "\n2. two\n", "\n    code\n", "\n\n    code\n", "\n> q\n",
	"\nlazy\n", "\n[x]: /u\n", "\n\n[x]: /u\n", "\n[foo]: /url\n", "\n\n[foo]: /other\n", "\n\n[1]: https://x.example\n",
	"\n\n[bar]: /bar\n", "\"title\"\n", "\n\"title\"\n", "\n'title'\n", "\n```\n", "```\n", "\n~~~\n", "~~~\n",
	"\n-->\n", "-->\n", "\n</div>\n", "\n</script>\n", "</pre>\n", "?>\n", "]]>\n", "\n\n  continued\n",
	"\n\n   continued\n", "\n\n      deep\n", "]: /url\n", "*\n", "**\n", "`\n", "\n#\n", " # x\n", "\t\n\tx\n",
	"\n\n\n", "\r\n", "\n* * *\n", "\n<div>\n", "\n<!--\n", "\n\n> - q\n", "\n  > q\n", "\n:-:|\n",
}

// settledSurvives feeds text byte by byte; after each byte it checks that
// the HTML settled so far starts the one-shot render of that prefix
// followed by several continuations the text does not contain: no
// continuation may change a settled block. (The streamed text itself is
// only one future; this explores others.)
func settledSurvives(text string, salt int) string {
	d := must(NewDocument())
	var settled strings.Builder
	for n := 0; n <= len(text); n++ {
		settled.WriteString(d.Update(text[:n]).Append)
		if settled.Len() == 0 {
			continue
		}
		for k := 0; k < 3; k++ {
			c := continuations[(n*3+k+salt)%len(continuations)]
			if got := must(Convert(text[:n] + c)); !strings.HasPrefix(got, settled.String()) {
				return "prefix " + quoteCut(text, n) + " + " + quoteCut(c, len(c)) +
					":\nsettled: " + settled.String() + "\nbut the one-shot render is: " + got
			}
		}
	}
	return ""
}

func TestSettledHTMLSurvivesAdversarialContinuations(t *testing.T) {
	for _, ex := range rendertest.Spec(t) {
		if testing.Short() && ex.Example%4 != 0 {
			continue
		}
		if msg := settledSurvives(ex.Markdown, ex.Example); msg != "" {
			t.Errorf("spec example %d (%s): %s", ex.Example, ex.Section, msg)
		}
	}
	// A longer soak: RENDER_SOAK=20000 go test -run Adversarial ./render
	docs, next := soak(t, 300, 40, 99991)
	for i := 0; i < docs; i++ {
		var b strings.Builder
		for j, lines := 0, 2+next(8); j < lines; j++ {
			b.WriteString(trickyLines[next(len(trickyLines))])
			b.WriteString("\n")
		}
		if msg := settledSurvives(b.String(), i); msg != "" {
			t.Fatalf("document %q: %s", b.String(), msg)
		}
	}
}
