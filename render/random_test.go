package render

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

// trickyLines are line shapes whose meaning depends on their neighbours:
// setext underlines, lazy continuations, list markers and indents, fences,
// table rows, definitions, HTML starts and ends, blank lines with spaces.
var trickyLines = []string{
	"", "", "  ", "\t", "text", "more text *em", "em* and **strong**", "---", "===", "-", "- item", "  - nested",
	"    indented", "\tcode", "1. one", "2) two", "10. ten", "* star", "+ plus", "> quote", ">", "> - q item",
	"```", "```go", "~~~", "````", "| a | b |", "| - | - |", "|:-:|--:|", "a | b", "[x]: /url", "[x]: /url \"title",
	"\"title\"", "[x] and [y][x] and [z]", "![i](/p.png)", "[l](https://ok.example)", "<div>", "</div>",
	"<!--", "-->", "<script>", "</script>", "# head", "## head ##", "***", "- [ ] task", "- [x] done",
	"www.ok.example", "<https://ok.example>", "~~del~~", "`code", "code`", "\\", "  \\", "text  ",
	"   - three", "     five", "&amp; &#x61;", "[x]:", "/url",
	"  1. x", "   > q", "<!-- c -->", "<pre>", "</pre>", "  ```", "[y]: <>", "[Y]: /other 'single'", "> ```",
	"- ```", "  code in item", "    - deep", "> > nested", "* * *", "_ _ _", "Setext", "  ===", "|x|", "x|y|z",
	"<?php", "?>", "<![CDATA[", "]]>", "<a href=\"x\">", "</a>", "<textarea>", "![img][x]", "[x][]", "[*em*]",
	"[^1]: note", "[^x]:", "text[^1] and [^x]", "![^1] [^2]", "`[^a-z]`", "[^a-z]", "مرحبا بالعالم", "שלום [^1]",
}

// TestRandomDocumentsOfTrickyLinesRenderLikeConvertAtEveryByte builds
// documents from lines whose meaning depends on their neighbours, and checks
// equivalence and write-once at every byte.
func TestRandomDocumentsOfTrickyLinesRenderLikeConvertAtEveryByte(t *testing.T) {
	// A longer soak: RENDER_SOAK=20000 go test -run RandomDocuments ./render
	docs, next := soak(t, 400, 60, 2463534242)
	for i := 0; i < docs; i++ {
		var b strings.Builder
		eol := "\n"
		if next(4) == 0 {
			eol = "\r\n" // and sometimes a lone CR, which is not a line end
		}
		lines := 3 + next(10)
		for j := 0; j < lines; j++ {
			indent := []string{"", "", "", " ", "  ", "   "}[next(6)]
			b.WriteString(indent + trickyLines[next(len(trickyLines))])
			if j < lines-1 || next(2) == 0 {
				b.WriteString(eol)
			}
		}
		text := b.String()
		// Every other document with dir="auto" on its blocks.
		var opts []Option
		if i%2 == 1 {
			opts = append(opts, WithDirAuto(true))
		}
		if msg := streamCheck(text, rendertest.EveryByte(text), opts...); msg != "" {
			t.Fatalf("document %d %q: %s", i, text, msg)
		}
	}
}

// soak sets up a random-documents test: how many documents (docs, or
// short under -short) and next(n), a deterministic xorshift draw in [0, n)
// from seed, so failures reproduce. RENDER_SOAK=N runs N documents from a
// clock seed instead, logged.
func soak(t *testing.T, docs, short int, seed uint32) (int, func(n int) int) {
	if testing.Short() {
		docs = short
	}
	x := seed
	if n, err := strconv.Atoi(os.Getenv("RENDER_SOAK")); err == nil && n > 0 {
		docs, x = n, uint32(time.Now().UnixNano())|1
		t.Logf("soak: %d documents, seed %d", docs, x)
	}
	return docs, func(n int) int {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
}
