package htmlx

import (
	"html"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// entityNames are the names of the html package's own entity table, read
// from its source (the oracle's data, so that every name it knows is
// tried), with and without their semicolon as listed there. Nil when the
// toolchain's source cannot be found (js/wasm without GOROOT in the
// environment; make test-wasm passes it): the random inputs below still
// use the common names.
func entityNames(t *testing.T) []string {
	goroot := os.Getenv("GOROOT")
	if goroot == "" {
		if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
			goroot = strings.TrimSpace(string(out))
		}
	}
	src, err := os.ReadFile(filepath.Join(goroot, "src", "html", "entity.go"))
	if err != nil {
		t.Logf("the html package's entity table is not readable here (%v); random inputs only", err)
		return nil
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s*"([A-Za-z0-9]+;?)":`).FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	if len(names) < 2000 {
		t.Fatalf("read %d names from the html package's table; its layout changed", len(names))
	}
	return names
}

// Every name of the oracle's table, in the contexts that decide how it
// is read: alone, followed by letters, digits, a semicolon, a space, and
// at the end of the text.
func TestUnescapeEveryNameAsTheHTMLPackageDoes(t *testing.T) {
	names := entityNames(t)
	if names == nil {
		t.Skip("no entity table")
	}
	for _, n := range names {
		for _, in := range []string{
			"&" + n, "&" + n + " ", "&" + n + "x", "&" + n + "1;", "&" + n + ";", "a&" + n + "b&amp;",
			"&" + strings.TrimSuffix(n, ";") + "in;", "&" + strings.TrimSuffix(n, ";") + "&" + n,
		} {
			if got, want := Unescape(in), html.UnescapeString(in); got != want {
				t.Fatalf("Unescape(%q) = %q, the html package: %q", in, got, want)
			}
		}
	}
}

func TestUnescapeNumericReferencesAsTheHTMLPackageDoes(t *testing.T) {
	var ins []string
	for _, body := range []string{"", "0", "1", "9", "12", "65", "128", "130", "159", "160", "55296", "57343", "1114111", "1114112",
		"99999999999", "4294967361", "x", "x0", "x41", "X41", "xe9", "xE9", "x80", "x9f", "x9F", "xD800", "x10FFFF", "x110000",
		"xFFFFFFFF41", "xg", "a", ";", "-1", "+1", " 1"} {
		for _, after := range []string{"", ";", " ", "x", ";;", "&#65;"} {
			ins = append(ins, "&#"+body+after, "a&#"+body+after+"b")
		}
	}
	for c := range 0x100 {
		ins = append(ins, "&#"+itoa(c)+";", "&#x"+hexa(c)+";", "&#"+itoa(c))
	}
	for _, in := range ins {
		if got, want := Unescape(in), html.UnescapeString(in); got != want {
			t.Fatalf("Unescape(%q) = %q, the html package: %q", in, got, want)
		}
	}
}

// Random text from pieces that make references, broken references and
// their neighbours, against the oracle.
func TestUnescapeRandomTextAsTheHTMLPackageDoes(t *testing.T) {
	pieces := []string{"&", "#", "x", "X", ";", "a", "m", "p", "l", "t", "g", "n", "o", "i", "c", "y", "1", "2", "4", "9",
		"0", "F", " ", "é", "\xff", "amp", "lt", "not", "notin", "copy", "frac", "sup", "AElig", "nbsp", "NotEqualTilde",
		"acE", "fjlig", "&#", "&#x", "&amp;", "&not", "in;"}
	n := 20000
	if testing.Short() {
		n = 3000
	}
	rng := rand.New(rand.NewPCG(34, 1))
	for range n {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in := b.String()
		if got, want := Unescape(in), html.UnescapeString(in); got != want {
			t.Fatalf("Unescape(%q) = %q, the html package: %q", in, got, want)
		}
	}
}

func TestEscapeAsTheHTMLPackageDoes(t *testing.T) {
	pieces := []string{"<", ">", "&", "'", "\"", "a", " ", "é", "\xff", "&amp;", "<b>", "\x00"}
	rng := rand.New(rand.NewPCG(34, 2))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in := b.String()
		if got, want := Escape(in), html.EscapeString(in); got != want {
			t.Fatalf("Escape(%q) = %q, the html package: %q", in, got, want)
		}
	}
}

func FuzzUnescape(f *testing.F) {
	for _, s := range []string{"&amp;", "&notin", "&#x41", "&#128;", "a&b", "&#99999999999;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if got, want := Unescape(in), html.UnescapeString(in); got != want {
			t.Fatalf("Unescape(%q) = %q, the html package: %q", in, got, want)
		}
		if got, want := Escape(in), html.EscapeString(in); got != want {
			t.Fatalf("Escape(%q) = %q, the html package: %q", in, got, want)
		}
	})
}

func itoa(c int) string {
	if c < 10 {
		return string(rune('0' + c))
	}
	return itoa(c/10) + string(rune('0'+c%10))
}

func hexa(c int) string {
	const d = "0123456789abcdef"
	if c < 16 {
		return d[c : c+1]
	}
	return hexa(c/16) + d[c%16:c%16+1]
}
