package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

func inlineMath(tex string) string  { return `<span data-trickle-math="inline">` + tex + `</span>` }
func displayMath(tex string) string { return `<span data-trickle-math="display">` + tex + `</span>` }

func TestFormulasKeepTheirTeXExactAndPricesStayText(t *testing.T) {
	for _, tc := range []struct{ name, md, want string }{
		{"inline dollars", "$x^2$", "<p>" + inlineMath("x^2") + "</p>\n"},
		{"inline parentheses keep their backslash escapes", `\(a\,b\)`, "<p>" + inlineMath(`a\,b`) + "</p>\n"},
		{"display brackets", `\[c \le d\]`, "<p>" + displayMath(`c \le d`) + "</p>\n"},
		{"display dollars mid-sentence", "a $$x^2$$ b", "<p>a " + displayMath("x^2") + " b</p>\n"},
		{"the 20 KB sample's formula", "$$\n\\text{overshoot} \\le (n - 1)\\,b + n \\cdot r_{\\text{node}} \\cdot \\Delta\n$$",
			"<p>" + displayMath("\n\\text{overshoot} \\le (n - 1)\\,b + n \\cdot r_{\\text{node}} \\cdot \\Delta\n") + "</p>\n"},
		{"markup inside is TeX, escaped as text", "$a<b & *c*_d_$", "<p>" + inlineMath("a&lt;b &amp; *c*_d_") + "</p>\n"},
		{"a TeX dollar escape does not close", `$\$40 = 40$`, "<p>" + inlineMath(`\$40 = 40`) + "</p>\n"},
		{"a TeX escaped backslash does not close", `\(a \\\)`, "<p>" + inlineMath(`a \\`) + "</p>\n"},
		{"display across a quote's lines drops the markers", "> $$a\n> b$$", "<blockquote>\n<p>" + displayMath("a\nb") + "</p>\n</blockquote>\n"},
		{"in list items", "- $x$\n- \\(y\\)", "<ul>\n<li>" + inlineMath("x") + "</li>\n<li>" + inlineMath("y") + "</li>\n</ul>\n"},
		{"in a table cell", "| f |\n| - |\n| $\\pi r^2$ |", "<table>\n<thead>\n<tr>\n<th>f</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>" + inlineMath(`\pi r^2`) + "</td>\n</tr>\n</tbody>\n</table>\n"},
		{"in a link's text", "[$x$](/u)", `<p><a href="/u" rel="noopener noreferrer nofollow ugc">` + inlineMath("x") + "</a></p>\n"},

		// Prices (streamdown #134 and its neighbours) are not math.
		{"two prices", "$750 and $300", "<p>$750 and $300</p>\n"},
		{"one price", "costs $5", "<p>costs $5</p>\n"},
		{"a price range", "$5-$10", "<p>$5-$10</p>\n"},
		{"a slash", "$5/$10 a month", "<p>$5/$10 a month</p>\n"},
		{"prices with cents", "$19.99, or $24.50 with tax", "<p>$19.99, or $24.50 with tax</p>\n"},
		{"prefixed currency", "US$12 and US$15", "<p>US$12 and US$15</p>\n"},
		{"a price list", "prices: $5, $6, and $7.", "<p>prices: $5, $6, and $7.</p>\n"},
		{"a price then a formula", "It costs $5, while $x$ is free", "<p>It costs $5, while " + inlineMath("x") + " is free</p>\n"},
		{"a formula may start with a digit", "$1 + 2 = 3$", "<p>" + inlineMath("1 + 2 = 3") + "</p>\n"},
		{"a dollar at the end", "pay in $", "<p>pay in $</p>\n"},
		{"space after the opener", "$ x$", "<p>$ x$</p>\n"},
		{"space before the closer", "$x $", "<p>$x $</p>\n"},
		{"a digit after the closer", "$x$5", "<p>$x$5</p>\n"},
		{"single dollars stay on one line", "$a\nb$", "<p>$a\nb$</p>\n"},
		{"escaped dollars are literal", `\$5 and \$6`, "<p>$5 and $6</p>\n"},
		{"an escaped backslash before a parenthesis", `\\(x\\)`, `<p>\(x\)</p>` + "\n"},
		{"empty delimiters", `$$ $$ and \(\)`, `<p>$$ $$ and ()</p>` + "\n"},
		{"unclosed display is its source", "$$x^2$", "<p>$$x^2$</p>\n"},
		{"unclosed brackets are markdown escapes", `\[x`, "<p>[x</p>\n"},
		{"code is never math", "`$x$`", "<p><code>$x$</code></p>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, convert(t, tc.md))
		})
	}
}

// mathCases are formulas and prices in the places where they meet
// markdown: paragraphs, lists, quotes, tables, emphasis, code, and
// formulas whose closer arrives late.
var mathCases = []string{
	"After $n$ years, $B_n = P(1 + r)^n$.",
	"$$\n\\text{overshoot} \\le (n - 1)\\,b + n \\cdot r_{\\text{node}} \\cdot \\Delta\n$$\n\nKeep it small.",
	"so that \\(\\frac{dB}{dt} = rB\\) and \\[ 2 = e^{r T} \\] hold.",
	"$750 and $300, costs $5, $5-$10, while $x$ is free.",
	"- $a$\n- $$b\n  c$$\n- \\(d\\)\n\ntext",
	"> $$\\sum_k x_k\n> = 1$$\n\nafter",
	"| q | f |\n| - | - |\n| area | $\\pi r^2$ |\n| price | $19.99 |\n\nend",
	"*em $a*b$ em* and **$x$**",
	"`$x$` and\n\n```tex\n$$ x $$\n```\n",
	"$$\n- x\n$$\n",
	"$$\n# not a heading?\n$$",
	"Setext $x$\n===\n\n$$a\n---\n$$",
	"[$x$](/u) and [\\(y\\)][r]\n\n[r]: /v",
	"a $$x^2$ b $$ c",
	"\\$5 and $\\$5$ and \\\\(x\\\\)",
	"1. $x$\n2. \\[y\n   z\\]\n",
}

func TestEveryPrefixOfMathAnswersRendersLikeConvert(t *testing.T) {
	for i, md := range mathCases {
		if msg := streamCheck(md, rendertest.EveryByte(md)); msg != "" {
			t.Errorf("case %d %q: %s", i, md, msg)
		}
		if msg := streamCheck(md, rendertest.TokenCuts(md, uint32(i+1)), WithDirAuto(true)); msg != "" {
			t.Errorf("case %d %q with dir=auto: %s", i, md, msg)
		}
	}
}

// mathLines are line shapes of formulas and prices, mixed with some of
// trickyLines' block starts, so formulas meet every way a line can
// continue or end a block.
var mathLines = []string{
	"", "", "text $x$ and", "$$", "$$x", "y$$", "\\[", "\\]", "\\(a", "b\\)", "$750 and $300", "costs $5",
	"- $a$", "> $$b", "> c$$", "| $x$ | y |", "| - | - |", "---", "===", "```", "`$x$`", "$5-$10",
	"\\text{o} \\le (n-1)\\,b", "*em $a*b$*", "[x]: /u", "[$x$][x]", "    $$", "1. \\(x", "   y\\)",
}

func TestRandomDocumentsOfMathLinesRenderLikeConvertAtEveryByte(t *testing.T) {
	docs, next := soak(t, 300, 40, 3141592653)
	for i := 0; i < docs; i++ {
		var b strings.Builder
		lines := 3 + next(8)
		for j := 0; j < lines; j++ {
			b.WriteString([]string{"", "", " ", "  "}[next(4)] + mathLines[next(len(mathLines))])
			if j < lines-1 || next(2) == 0 {
				b.WriteString("\n")
			}
		}
		text := b.String()
		if msg := streamCheck(text, rendertest.EveryByte(text)); msg != "" {
			t.Fatalf("document %d %q: %s", i, text, msg)
		}
	}
}

func TestAFormulaShowsAsItsSourceUntilItsCloserArrives(t *testing.T) {
	text := "The bound is $$(n - 1)\\,b$$ here."
	open, close := strings.Index(text, "$$"), strings.Index(text, "b$$")+3
	d := newDocument(t)
	for n := 1; n <= len(text); n++ {
		f := d.Update(text[:n])
		if n < open+2 {
			continue
		}
		if n < close {
			require.NotContains(t, f.Tail, "data-trickle-math", "prefix %q", text[:n])
			require.Contains(t, f.Tail, "is $$", "prefix %q: the source shows, delimiter included", text[:n])
		} else {
			require.Contains(t, f.Tail, displayMath(`(n - 1)\,b`), "prefix %q", text[:n])
		}
	}
}
