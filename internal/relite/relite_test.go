package relite

import (
	"bytes"
	"go/ast"
	goparser "go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

// goldmarkPatterns reads every pattern goldmark's packages the widget
// links compile (regexp.MustCompile at package level, its argument a
// concatenation of string literals and package-level string variables),
// from goldmark's own source: a goldmark upgrade brings its new patterns
// here without anyone copying them.
func goldmarkPatterns(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pkg := range []string{"util", "text", "parser", "extension"} {
		dir := filepath.Join(rendertest.GoldmarkDir(t), pkg)
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		vars := map[string]ast.Expr{}
		var calls []*ast.CallExpr
		var names []string
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := goparser.ParseFile(fset, f, nil, 0)
			require.NoError(t, err)
			for _, d := range file.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					for i, v := range vs.Values {
						vars[vs.Names[i].Name] = v
						if c, ok := v.(*ast.CallExpr); ok {
							if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "MustCompile" {
								calls = append(calls, c)
								names = append(names, pkg+"."+vs.Names[i].Name)
							}
						}
					}
				}
			}
		}
		var eval func(e ast.Expr) string
		eval = func(e ast.Expr) string {
			switch e := e.(type) {
			case *ast.BasicLit:
				s, err := strconv.Unquote(e.Value)
				require.NoError(t, err)
				return s
			case *ast.Ident:
				v, ok := vars[e.Name]
				require.True(t, ok, "goldmark's pattern uses %s, not a package variable", e.Name)
				return eval(v)
			case *ast.BinaryExpr:
				require.Equal(t, token.ADD, e.Op)
				return eval(e.X) + eval(e.Y)
			case *ast.ParenExpr:
				return eval(e.X)
			}
			require.Failf(t, "goldmark's pattern", "an expression of type %T", e)
			return ""
		}
		for i, c := range calls {
			out[names[i]] = eval(c.Args[0])
		}
	}
	require.GreaterOrEqual(t, len(out), 18, "goldmark's patterns (8 HTML blocks, 2 raw HTML tags, 4 table delimiters, 2 linkify, the task list, e-mail domains)")
	return out
}

// lines is every line of the CommonMark spec examples and of goldmark's
// extension cases, with its line ending, each also cut after each of its
// first bytes: the inputs goldmark gives these patterns.
func lines(t *testing.T) [][]byte {
	t.Helper()
	var docs []string
	for _, ex := range rendertest.Spec(t) {
		docs = append(docs, ex.Markdown)
	}
	for _, f := range []string{"extension/_test/linkify.txt", "extension/_test/table.txt", "extension/_test/tasklist.txt", "_test/extra.txt"} {
		docs = append(docs, rendertest.GoldmarkCases(t, f)...)
	}
	seen := map[string]bool{}
	var out [][]byte
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, []byte(s))
		}
	}
	for _, d := range docs {
		for _, l := range strings.SplitAfter(d, "\n") {
			add(l)
			// A line without its start: linkify and autolinks match
			// from the middle of one.
			for i := 1; i < len(l); i++ {
				if l[i-1] == ' ' || l[i-1] == '<' || l[i-1] == '(' {
					add(l[i:])
				}
			}
		}
		add(d) // raw HTML tags span lines
	}
	return out
}

// same checks that re and std agree on b: whether it matches, the match
// and submatch positions, and the same through a rune reader.
func same(t *testing.T, re *Regexp, std *regexp.Regexp, b []byte) {
	t.Helper()
	require.Equal(t, std.Match(b), re.Match(b), "Match(%q) of %q", b, std)
	require.Equal(t, std.FindSubmatchIndex(b), re.FindSubmatchIndex(b), "FindSubmatchIndex(%q) of %q", b, std)
	require.Equal(t, std.FindIndex(b), re.FindIndex(b), "FindIndex(%q) of %q", b, std)
	require.Equal(t, std.FindStringSubmatchIndex(string(b)), re.FindStringSubmatchIndex(string(b)), "FindStringSubmatchIndex(%q) of %q", b, std)
	require.Equal(t, std.MatchString(string(b)), re.MatchString(string(b)))
	require.Equal(t, std.FindAllStringSubmatchIndex(string(b), -1), re.FindAllStringSubmatchIndex(string(b), -1), "FindAllStringSubmatchIndex(%q) of %q", b, std)
	require.Equal(t, std.FindAllStringSubmatch(string(b), 2), re.FindAllStringSubmatch(string(b), 2), "FindAllStringSubmatch(%q, 2) of %q", b, std)
	require.Equal(t, std.FindReaderSubmatchIndex(bytes.NewReader(b)), re.FindReaderSubmatchIndex(bytes.NewReader(b)), "FindReaderSubmatchIndex(%q) of %q", b, std)
}

func TestEveryGoldmarkPatternMatchesAsTheStandardLibraryOnTheSpecsLines(t *testing.T) {
	pats := goldmarkPatterns(t)
	in := lines(t)
	matched := 0
	for name, pat := range pats {
		re, err := Compile(pat)
		require.NoError(t, err, "%s: %s", name, pat)
		std := regexp.MustCompile(pat)
		require.Equal(t, std.NumSubexp(), re.NumSubexp(), name)
		require.Equal(t, pat, re.String())
		n := 0
		for _, b := range in {
			same(t, re, std, b)
			if std.Match(b) {
				n++
			}
		}
		t.Logf("%s: %d of %d inputs match", name, n, len(in))
		matched += n
	}
	require.Greater(t, matched, 1000, "the inputs exercise the patterns")
}

// A rune reader is read no further than the standard library reads it:
// one rune past the match or the rune that fails it.
func TestAReaderIsReadNoFurtherThanTheStandardLibraryReadsIt(t *testing.T) {
	const pat = `^<([a-z]+)(?:[ \t]+[a-z]+)*[ \t]*/?>`
	re, std := MustCompile(pat), regexp.MustCompile(pat)
	for _, src := range []string{"<a href>" + strings.Repeat("x", 1000), "no" + strings.Repeat(" ", 1000), "<a" + strings.Repeat(" b", 500)} {
		r, s := strings.NewReader(src), strings.NewReader(src)
		require.Equal(t, std.FindReaderSubmatchIndex(s), re.FindReaderSubmatchIndex(r))
		require.Equal(t, s.Len(), r.Len(), "unread of %q", src[:10])
	}
}

func TestSyntaxItDoesNotHaveIsRefusedWithTheStandardLibrarysKindOfError(t *testing.T) {
	for _, pat := range []string{
		`\bword\b`,      // word boundaries
		`(?m)^a$`,       // multi-line mode
		`\pL`,           // Unicode classes
		`[[:alpha:]]`,   // POSIX classes
		`\Qa.b\E`,       // quoting
		`a{1001}`,       // too many
		`(a{100}){100}`, // nested counts over 1000
		`(`, `a)`, `[a`, `*a`, `a**`, `\`, `\8`, `(?<>a)`, `(?P<a>x)(?P<a>y)`,
	} {
		_, err := Compile(pat)
		require.Error(t, err, pat)
		require.True(t, strings.HasPrefix(err.Error(), "error parsing regexp: "), err.Error())
		require.Panics(t, func() { MustCompile(pat) })
	}
}

func TestWhatItAcceptsMatchesAsTheStandardLibrary(t *testing.T) {
	cases := map[string][]string{
		`(?i)^[ ]{0,3}<(script|pre)(?:\s.*|>.*|)$`: {"<SCRIPT>", "  <pre x", "<ſcript>", "<scripts>", "    <pre>"},
		`(?i)k`:                  {"K", "\u212a", "k", "x"},
		`a|b|`:                   {"", "c", "b"},
		`(a*)*`:                  {"", "aaa", "b"},
		`(a*)+`:                  {"", "aaa", "b"},
		`(a|ab)(c|bcd)(d*)`:      {"abcd", "abcdd"},
		`(?:(a)|b)*`:             {"ab", "ba", "abab"},
		`x*?y|x+?`:               {"xxy", "xx"},
		`(?U)a+b?`:               {"aab"},
		`[^\x00-\x20a-c]+`:       {"d e\x00f", "ééé\xff"},
		`\x{65}\101\0`:           {"eA\x00"},
		`[\d\s\W]+`:              {"1 2\t-", "abc"},
		`.+`:                     {"a\nb", "\xff\xfe", ""},
		`(?s).+`:                 {"a\nb"},
		`a{,2}`:                  {"a{,2}"},
		`(){00}`:                 {"0", "(){00}", "{00}"},
		`a{01}b{1,02}`:           {"a{01}b{1,02}", "ab"},
		`a{2}{`:                  {"aa{"},
		`[]a]`:                   {"]"},
		`[a-c-e]`:                {"-", "e", "d"},
		`(?P<name>x)(?<n2>y)?`:   {"xy", "x"},
		`^$`:                     {"", "a"},
		`$a|b`:                   {"ab"},
		`(?i:A)a`:                {"aa", "aA", "AA"},
		`(?i)a(?-i)a`:            {"AA", "Aa"},
		`a(?i)b|c`:               {"aB", "C"},
		`(^a|b)+`:                {"abab", "bab"},
		`\Aa\z`:                  {"a", "ab"},
		`(?:(?:a{0,2}){0,3}b)+`:  {"aaaaab", "ab", "b"},
		`((a{0,61})?b){1,3}`:     {"aabab", "bbbb"},
		`(?:[ \t]|(?:\r\n|\n))*`: {" \r\n\t\n\n", "\r"},
	}
	for pat, inputs := range cases {
		re, err := Compile(pat)
		require.NoError(t, err, pat)
		std := regexp.MustCompile(pat)
		for _, s := range inputs {
			same(t, re, std, []byte(s))
		}
	}
}

// FuzzAgainstRegexp: whatever relite compiles, the standard library
// compiles too, and both find the same matches.
func FuzzAgainstRegexp(f *testing.F) {
	for _, s := range []string{
		`(?i)^[ ]{0,3}<(script|pre|style|textarea)(?:\s.*|>.*|/>.*|)(?:\r\n|\n)?$`,
		`^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*`,
		`^\[([\sxX])\]\s*`, `(a|ab)(c|bcd)(d*)`, `(a*)*b`, `x*?y|x+?`, `[^a-c]+`, `(?i)ſ+`,
	} {
		f.Add(s, "<script>aab [x] xxy ſS example.com")
	}
	f.Fuzz(func(t *testing.T, pat, in string) {
		if len(pat) > 200 || len(in) > 1000 || !utf8.ValidString(pat) {
			return
		}
		re, err := Compile(pat)
		if err != nil {
			return // refused: never matched differently
		}
		std, err := regexp.Compile(pat)
		require.NoError(t, err, "relite accepts %q, the standard library refuses it", pat)
		same(t, re, std, []byte(in))
	})
}
