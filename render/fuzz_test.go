package render

import (
	"strings"
	"testing"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

// FuzzStreamEqualsConvert checks equivalence and write-once for arbitrary
// text fed in arbitrary token cuts (derived from the seed), with repair off
// and on, and that no frame ever carries executable HTML.
func FuzzStreamEqualsConvert(f *testing.F) {
	for _, s := range []string{
		"Hello\n\nWorld",
		"Title\n---\nx",
		"- a\n- b\n\n  c\n\nd",
		"> q\nlazy\n\n> r",
		"| a | b |\n| - | - |\n| 1 | 2 |\n\nx",
		"```go\nx\n```\n\ny",
		"    code\n\n    more\nz",
		"[x]\n\n[x]: /u \"t\"\n\nz",
		"[a]: /u\n\"title\ncont\"\n\n[a]",
		"<div>\n\nx\n<!--\n-->\ny",
		"*a **b** c*\n\n~~s~~ www.x.example",
		"1. a\n\n   b\n2) c\n\n- [ ] t",
		"[x](jav&#x61;script:1) ![i](https://e.example/p)",
		"para\n \t\n\tcode\n",
		"\r\nx\r\n\r\ny",
		"| a | b |\n|:-|-:|\n| [x][r] | `c \\| d` |\n| 2 |\n| 3 | 4 | 5 |\n---\n\n[r]: /u",
		"a | b\n-|-\n1 | 2\n[x]: /u\n| [x] |\n\n[x]",
		"| a |\n|---|\n| 1 |\n| 2 |\n===\n| 3 |",
		"x[^1]\n\n[^1]: note\n    more\n\n[^2]: unused\n\ny[^2]",
		"`[^a-z]` then [^a]\n\n```\n[^b]: code\n```\n[^a]: n",
		"مرحبا\n\n- שלום\n\n> نص",
		"$x$ and $750 and $300\n\n$$\na\\,b\n$$\n\n\\(c\\) \\[d\\] \\$5",
	} {
		f.Add(s, uint32(1))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint32) {
		if len(text) > 2000 {
			return
		}
		cuts := rendertest.TokenCuts(text, seed)
		if msg := streamCheck(text, cuts); msg != "" {
			t.Fatal(msg)
		}
		if msg := streamCheck(text, cuts, WithDirAuto(true)); msg != "" {
			t.Fatal("with dir=auto: " + msg)
		}
		plain, repaired := newDocument(t), newDocument(t, WithRepair(true))
		var settled strings.Builder
		for _, n := range cuts {
			fp, fr := plain.Update(text[:n]), repaired.Update(text[:n])
			if fp.Append != fr.Append {
				t.Fatalf("repair changed settled HTML at %d: %q vs %q", n, fr.Append, fp.Append)
			}
			settled.WriteString(fr.Append)
			if bad := unsafeHTML(fr.Append + fr.Tail); len(bad) > 0 {
				t.Fatalf("unsafe HTML at %d: %v", n, bad)
			}
		}
		settled.WriteString(repaired.Finish().Append)
		if got, want := settled.String(), convert(t, text); got != want {
			t.Fatalf("with repair, the end differs from Convert:\n got: %s\nwant: %s", got, want)
		}
	})
}
