package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

// The tags and attributes goldmark (with GFM) emits. Anything else in
// rendered model output is a hole.
var safeTags = map[string]map[string]bool{
	"p": {}, "h1": {}, "h2": {}, "h3": {}, "h4": {}, "h5": {}, "h6": {},
	"ul": {}, "ol": {"start": true}, "li": {}, "blockquote": {}, "pre": {},
	"code": {"class": true}, "em": {}, "strong": {}, "del": {}, "hr": {}, "br": {},
	"a": {"href": true, "title": true, "rel": true}, "img": {"src": true, "alt": true, "title": true},
	"table": {}, "thead": {}, "tbody": {}, "tr": {}, "th": {"style": true}, "td": {"style": true},
	"input": {"checked": true, "disabled": true, "type": true},
	// Footnotes: numbered ids and fragment links, fixed classes and roles.
	"sup": {"id": true}, "div": {"class": true, "role": true},
	// Math: a span marking a formula's TeX source, inline or display.
	"span": {"data-trickle-math": true},
}

// footnoteAttrs are the only values the footnote markup may carry: ids and
// fragments are numbers goldmark counts (never the model's labels).
var footnoteAttrs = map[string]func(v string) bool{
	"id":    func(v string) bool { return isFootnoteID(v) },
	"class": func(v string) bool { return v == "footnotes" || v == "footnote-ref" || v == "footnote-backref" },
	"role":  func(v string) bool { return v == "doc-endnotes" || v == "doc-noteref" || v == "doc-backlink" },
}

func isFootnoteID(v string) bool {
	for _, p := range []string{"fnref:", "fn:"} {
		if rest, ok := strings.CutPrefix(v, p); ok {
			return rest != "" && strings.Trim(rest, "0123456789") == ""
		}
	}
	if rest, ok := strings.CutPrefix(v, "fnref"); ok {
		n, m, ok := strings.Cut(rest, ":")
		return ok && n != "" && m != "" && strings.Trim(n+m, "0123456789") == ""
	}
	return false
}

// unsafeHTML tokenizes fragment the way a browser's tokenizer does
// (golang.org/x/net/html, entities in attributes decoded) and returns what
// is executable or leaks: unknown tags, event handlers or other unexpected
// attributes, links with a scheme other than http/https/mailto, links
// without the rel policy, and images outside allowedOrigins.
func unsafeHTML(fragment string, allowedOrigins ...string) []string {
	var bad []string
	z := html.NewTokenizer(strings.NewReader(fragment))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return bad
		}
		tok := z.Token()
		switch tt {
		case html.CommentToken:
			if tok.Data != " raw HTML omitted " {
				bad = append(bad, "comment "+tok.Data)
			}
		case html.DoctypeToken:
			bad = append(bad, "doctype")
		case html.StartTagToken, html.SelfClosingTagToken:
			attrs, ok := safeTags[tok.Data]
			if !ok {
				bad = append(bad, "tag <"+tok.Data+">")
				continue
			}
			rel, fragment := "", false
			for _, a := range tok.Attr {
				fn := footnoteAttrs[a.Key]
				switch {
				case strings.HasPrefix(a.Key, "on"):
					bad = append(bad, fmt.Sprintf("event handler %s=%q", a.Key, a.Val))
				case a.Key == "dir" && a.Val == "auto":
				case fn != nil && (tok.Data == "a" || tok.Data == "li" || tok.Data == "div" || tok.Data == "sup"):
					if !fn(a.Val) {
						bad = append(bad, fmt.Sprintf("footnote %s=%q on <%s>", a.Key, a.Val, tok.Data))
					}
				case a.Key == "href" && strings.HasPrefix(a.Val, "#"):
					if !isFootnoteID(a.Val[1:]) {
						bad = append(bad, fmt.Sprintf("fragment %q", a.Val))
					}
					fragment = true
				case !attrs[a.Key]:
					bad = append(bad, fmt.Sprintf("attribute %s on <%s>", a.Key, tok.Data))
				case a.Key == "href" && !safeLinkURL(a.Val):
					bad = append(bad, fmt.Sprintf("href %q", a.Val))
				case a.Key == "src" && !safeImageURL(a.Val, allowedOrigins):
					bad = append(bad, fmt.Sprintf("src %q", a.Val))
				case a.Key == "style" && !strings.HasPrefix(a.Val, "text-align:"):
					bad = append(bad, fmt.Sprintf("style %q", a.Val))
				case a.Key == "data-trickle-math" && a.Val != "inline" && a.Val != "display":
					bad = append(bad, fmt.Sprintf("math kind %q", a.Val))
				case a.Key == "type" && a.Val != "checkbox":
					bad = append(bad, fmt.Sprintf("input type %q", a.Val))
				case a.Key == "rel":
					rel = a.Val
				}
			}
			if tok.Data == "a" && rel != Rel && !fragment {
				bad = append(bad, fmt.Sprintf("link without rel policy: %v", tok.Attr))
			}
		}
	}
}

// squeeze removes what browsers ignore in a URL: every C0 control and
// space (more than they do, which only makes the check stricter).
func squeeze(u string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToLower(u))
}

func urlScheme(u string) (string, bool) {
	for i, r := range u {
		switch {
		case r == ':':
			return u[:i], true
		case r == '/' || r == '?' || r == '#' || r == '\\':
			return "", false
		}
	}
	return "", false
}

func safeLinkURL(u string) bool {
	s, has := urlScheme(squeeze(u))
	return !has || s == "http" || s == "https" || s == "mailto"
}

func safeImageURL(u string, allowed []string) bool {
	v := squeeze(u)
	if _, has := urlScheme(v); !has {
		return !(strings.HasPrefix(v, "//") || strings.HasPrefix(v, `\\`) || strings.HasPrefix(v, `/\`) || strings.HasPrefix(v, `\/`))
	}
	for _, o := range allowed {
		if strings.HasPrefix(v, o+"/") {
			return true
		}
	}
	return false
}

func TestTheScannerCatchesWhatItMustCatch(t *testing.T) {
	for _, h := range []string{
		`<script>alert(1)</script>`,
		`<img src="x" onerror="alert(1)">`,
		`<a href="jav&#x61;script:alert(1)" rel="noopener noreferrer nofollow ugc">x</a>`,
		`<a href=" JAVA&#9;SCRIPT:alert(1)" rel="noopener noreferrer nofollow ugc">x</a>`,
		`<a href="https://ok.example/">no rel</a>`,
		`<img src="https://evil.example/p.png" alt="">`,
		`<img src="//evil.example/p.png" alt="">`,
		`<p style="background:url(x)">`,
		`<iframe>`,
		`<a href="#top">no rel</a>`,
		`<div class="x">`,
		`<sup id="fnref:x">`,
	} {
		require.NotEmpty(t, unsafeHTML(h), h)
	}
	require.Empty(t, unsafeHTML(`<p><a href="https://ok.example/" rel="noopener noreferrer nofollow ugc">ok</a> <img src="/a.png" alt="a"></p>`))
}

func TestLinkAndImagePolicy(t *testing.T) {
	pol := WithPolicy(Policy{AllowedImageOrigins: []string{"https://img.allowed.example"}, SameOrigin: "https://app.example"})
	cases := []struct {
		name string
		md   string
		want string
		opts []Option
	}{
		{"https links get the rel policy", "[a](https://ok.example/x)", `<p><a href="https://ok.example/x" rel="noopener noreferrer nofollow ugc">a</a></p>` + "\n", nil},
		{"relative links are allowed", "[a](/x?y=1)", `<p><a href="/x?y=1" rel="noopener noreferrer nofollow ugc">a</a></p>` + "\n", nil},
		{"mailto links are allowed", "[a](mailto:x@ok.example)", `<p><a href="mailto:x@ok.example" rel="noopener noreferrer nofollow ugc">a</a></p>` + "\n", nil},
		{"javascript links become their text", "[a *b*](javascript:alert(1))", "<p>a <em>b</em></p>\n", nil},
		{"entity-encoded javascript links become their text", "[a](jav&#x61;script:alert(1))", "<p>a</p>\n", nil},
		{"mixed-case javascript links become their text", "[a](JaVaScRiPt:alert(1))", "<p>a</p>\n", nil},
		{"a control character before the scheme does not hide it", "[a](&#1;javascript:alert(1))", "<p>a</p>\n", nil},
		{"a tab inside the scheme does not hide it", "[a](java&#9;script:alert(1))", "<p>a</p>\n", nil},
		{"vbscript links become their text", "[a](vbscript:x)", "<p>a</p>\n", nil},
		{"data links become their text", "[a](data:text/html,x)", "<p>a</p>\n", nil},
		{"javascript autolinks become their text", "<javascript:alert(1)>", "<p>javascript:alert(1)</p>\n", nil},
		{"email autolinks get mailto", "<x@ok.example>", `<p><a href="mailto:x@ok.example" rel="noopener noreferrer nofollow ugc">x@ok.example</a></p>` + "\n", nil},
		{"linkify links get the rel policy", "see www.ok.example now", `<p>see <a href="http://www.ok.example" rel="noopener noreferrer nofollow ugc">www.ok.example</a> now</p>` + "\n", nil},
		{"third-party images become links by default", "![chart](https://evil.example/c.png)", `<p><a href="https://evil.example/c.png" rel="noopener noreferrer nofollow ugc">chart</a></p>` + "\n", nil},
		{"protocol-relative images are third-party", "![c](//evil.example/c.png)", `<p><a href="//evil.example/c.png" rel="noopener noreferrer nofollow ugc">c</a></p>` + "\n", nil},
		{"images with a refused scheme become their alt text", "![alt *text*](javascript:alert(1))", "<p>alt text</p>\n", nil},
		{"relative images load", "![c](/static/c.png \"t\")", `<p><img src="/static/c.png" alt="c" title="t"></p>` + "\n", nil},
		{"allowlisted origins load", "![c](https://img.allowed.example/c.png)", `<p><img src="https://img.allowed.example/c.png" alt="c"></p>` + "\n", []Option{pol}},
		{"the same origin loads", "![c](https://app.example:443/c.png)", `<p><img src="https://app.example:443/c.png" alt="c"></p>` + "\n", []Option{pol}},
		{"a host that only starts like an allowed one is refused", "![c](https://img.allowed.example.evil.example/c.png)", `<p><a href="https://img.allowed.example.evil.example/c.png" rel="noopener noreferrer nofollow ugc">c</a></p>` + "\n", []Option{pol}},
		{"userinfo does not fool the origin check", "![c](https://img.allowed.example@evil.example/c.png)", `<p><a href="https://img.allowed.example@evil.example/c.png" rel="noopener noreferrer nofollow ugc">c</a></p>` + "\n", []Option{pol}},
		{"data images are refused by default", "![c](data:image/png;base64,iVBORw0KGgo=)", "<p>c</p>\n", nil},
		{"raster data images load when allowed", "![c](data:image/png;base64,iVBORw0KGgo=)", `<p><img src="data:image/png;base64,iVBORw0KGgo=" alt="c"></p>` + "\n", []Option{WithPolicy(Policy{AllowDataImages: true})}},
		{"svg data images stay refused", "![c](data:image/svg+xml;base64,PHN2Zz4=)", "<p>c</p>\n", []Option{WithPolicy(Policy{AllowDataImages: true})}},
		{"raw HTML is omitted", "<b onclick=x>hi</b>", "<p><!-- raw HTML omitted -->hi<!-- raw HTML omitted --></p>\n", nil},
		{"custom link schemes replace the default list", "[a](https://x.example) [b](tel:123)", `<p>a <a href="tel:123" rel="noopener noreferrer nofollow ugc">b</a></p>` + "\n", []Option{WithPolicy(Policy{LinkSchemes: []string{"tel"}})}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, convert(t, c.md, c.opts...))
		})
	}
}

// TestXSSCorpusIsInertInEveryFrame streams the corpus byte by byte and scans
// the settled HTML and every intermediate tail, with repair off and on.
func TestXSSCorpusIsInertInEveryFrame(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "xss", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	allowed := "https://img.allowed.example"
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		text := string(b)
		cuts := rendertest.EveryByte(text)
		if testing.Short() {
			cuts = rendertest.TokenCuts(text, 3)
		}
		for _, repair := range []bool{false, true} {
			for _, pol := range []Policy{{}, {AllowedImageOrigins: []string{allowed}}} {
				var origins []string
				if len(pol.AllowedImageOrigins) > 0 {
					origins = []string{allowed}
				}
				d := newDocument(t, WithPolicy(pol), WithRepair(repair))
				check := func(where, h string) {
					if bad := unsafeHTML(h, origins...); len(bad) > 0 {
						t.Fatalf("%s %s (repair %v, policy %+v): %v\n%s", filepath.Base(f), where, repair, pol, bad, h)
					}
				}
				for _, n := range cuts {
					fr := d.Update(text[:n])
					check(fmt.Sprintf("Append at %d", n), fr.Append)
					check(fmt.Sprintf("Tail at %d", n), fr.Tail)
				}
				check("Finish", d.Finish().Append)
				check("Convert", convert(t, text, WithPolicy(pol)))
			}
		}
	}
}

func TestURLDecisionsFollowTheBrowsersURLParser(t *testing.T) {
	p := Policy{AllowedImageOrigins: []string{"https://img.example:8443", "http://cdn.example"}, SameOrigin: "https://app.example"}
	links := []struct {
		url  string
		safe bool
	}{
		{"https://x.example/a", true},
		{"HTTP://x.example", true},
		{"mailto:a@b.example", true},
		{"/relative/path?q=1", true},
		{"relative#frag", true},
		{"?q=javascript:1", true},
		{"#javascript:1", true},
		{"//other.example/x", true},
		{"", true},
		{"javascript:alert(1)", false},
		{"JaVaScRiPt:alert(1)", false},
		{" \x01javascript:alert(1)", false},
		{"java\tscript:alert(1)", false},
		{"java\nscript:alert(1)", false},
		{"vbscript:x", false},
		{"data:text/html,x", false},
		{"file:///etc/passwd", false},
		{"%6Aavascript:x", false},
		{"ja%0Avascript:x", false},
		{":nothing", false},
		{"tel:123", false},
	}
	for _, c := range links {
		require.Equal(t, c.safe, p.linkAllowed([]byte(c.url)), "link %q", c.url)
	}
	images := []struct {
		url  string
		safe bool
	}{
		{"/static/a.png", true},
		{"a.png", true},
		{"https://app.example/a.png", true},
		{"https://APP.example:443/a.png", true},
		{"https://img.example:8443/a.png", true},
		{"http://cdn.example/a.png", true},
		{"//cdn.example/a.png", true},
		{"https://img.example/a.png", false},
		{"https://cdn.example/a.png", false},
		{"//evil.example/a.png", false},
		{`\\evil.example/a.png`, false},
		{`/\evil.example/a.png`, false},
		{"https:evil.example/a.png", false},
		{"https://app.example@evil.example/a.png", false},
		{"https://app.example.evil.example/a.png", false},
		{"https://app%2eexample/a.png", false},
		{"javascript:alert(1)", false},
		{"data:image/png;base64,AAAA", false},
		{"ftp://app.example/a.png", false},
	}
	for _, c := range images {
		require.Equal(t, c.safe, p.imageAllowed([]byte(c.url)), "image %q", c.url)
	}
	withData := Policy{AllowDataImages: true}
	require.True(t, withData.imageAllowed([]byte("data:image/png;base64,AAAA")))
	require.True(t, withData.imageAllowed([]byte("DATA:image/webp,AAAA")))
	require.False(t, withData.imageAllowed([]byte("data:image/svg+xml,<svg/onload=alert(1)>")))
	require.False(t, withData.imageAllowed([]byte("data:image/pngx,AAAA")))
}
