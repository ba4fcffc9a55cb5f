package render

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/trickle-dev/trickle/internal/anyof"
	"github.com/trickle-dev/trickle/internal/stdlite"
)

// Policy decides which URLs in model output become links and images. Model
// output is untrusted: a prompt-injected answer can carry javascript: links
// or images whose URL leaks the conversation to a third party the moment the
// browser fetches it. The zero Policy is the safe default.
type Policy struct {
	// AllowedImageOrigins lists origins ("https://images.example.com", scheme
	// and host, optional port) whose images may be loaded. Images from any
	// other absolute origin are rendered as a link (when the URL is a safe
	// link) or as their alt text, so that rendering never makes a request to
	// a third party.
	AllowedImageOrigins []string
	// SameOrigin is the page's own origin ("https://app.example.com").
	// Relative image URLs are always allowed; an absolute URL to SameOrigin
	// is allowed too.
	SameOrigin string
	// LinkSchemes replaces the default link scheme allowlist (http, https,
	// mailto). Relative links are always allowed. Anything else is rendered
	// as plain text.
	LinkSchemes []string
	// AllowDataImages allows inline data: images of raster types (png, gif,
	// jpeg, webp). They make no request; off by default because they can be
	// large.
	AllowDataImages bool
}

// Rel is the rel attribute every rendered link carries: no opener access, no
// referrer leak, and no endorsement of model-chosen destinations.
const Rel = "noopener noreferrer nofollow ugc"

var defaultLinkSchemes = []string{"http", "https", "mailto"}

// key identifies the policy's behaviour, for the instance cache.
func (p Policy) key() string {
	return strings.Join(p.AllowedImageOrigins, "\x00") + "\x01" + p.SameOrigin + "\x01" +
		strings.Join(p.LinkSchemes, "\x00") + "\x01" + strconv.FormatBool(p.LinkSchemes == nil) + " " + strconv.FormatBool(p.AllowDataImages)
}

func (p Policy) isZero() bool {
	return len(p.AllowedImageOrigins) == 0 && p.SameOrigin == "" && p.LinkSchemes == nil && !p.AllowDataImages
}

// scheme returns the lowercased scheme of u as a browser would see it, and
// whether u has one. ok is false when u looks like it has a scheme that is
// not a well-formed one: such URLs are refused rather than guessed at.
func scheme(u []byte) (s string, has, ok bool) {
	// Browsers strip leading and trailing C0 controls and spaces, and remove
	// tab, LF and CR anywhere (WHATWG URL parser), so "java\tscript:" is a
	// javascript: URL.
	var b strings.Builder
	for _, c := range stdlite.Trim(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ") {
		if c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if c == ':' {
			str := b.String()
			if str == "" {
				return "", true, false
			}
			for i := 0; i < len(str); i++ {
				ch := str[i]
				alpha := ('a' <= ch && ch <= 'z') || ('A' <= ch && ch <= 'Z')
				if !alpha && (i == 0 || !('0' <= ch && ch <= '9' || ch == '+' || ch == '-' || ch == '.')) {
					// "%6Aavascript:" or "x y:" : not a scheme for a browser,
					// but nothing we want to reason about either.
					return "", true, false
				}
			}
			return lowerASCII(str), true, true
		}
		if c == '/' || c == '?' || c == '#' || c == '\\' {
			break
		}
		b.WriteByte(c)
	}
	return "", false, true
}

// AllowsLink reports whether u may be a link's href under the policy:
// what a link in the answer may point at, for the links the widget makes
// itself (a source's).
func (p Policy) AllowsLink(u string) bool { return p.linkAllowed([]byte(u)) }

// linkAllowed reports whether u (a destination as it will appear in href,
// entities and escapes already resolved) may be a link.
func (p Policy) linkAllowed(u []byte) bool {
	s, has, ok := scheme(u)
	if !ok {
		return false
	}
	if !has {
		return true
	}
	schemes := p.LinkSchemes
	if schemes == nil {
		schemes = defaultLinkSchemes
	}
	for _, a := range schemes {
		if lowerASCII(a) == s {
			return true
		}
	}
	return false
}

// imageAllowed reports whether an <img> may point at u: relative URLs (same
// origin), SameOrigin, AllowedImageOrigins, and raster data: images when
// AllowDataImages is set.
func (p Policy) imageAllowed(u []byte) bool {
	s, has, ok := scheme(u)
	if !ok {
		return false
	}
	clean := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, stdlite.Trim(string(u), "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f "))
	if !has {
		// A network-path reference ("//host/x", and "\\host" or "/\host",
		// which browsers treat the same way) goes to another host.
		if len(clean) >= 2 && (clean[0] == '/' || clean[0] == '\\') && (clean[1] == '/' || clean[1] == '\\') {
			return p.originAllowed("", clean[2:])
		}
		return true
	}
	switch s {
	case "http", "https":
		rest := clean[len(s)+1:]
		// "https:evil.example/x" and "https:/\evil" still reach a host.
		rest = stdlite.TrimLeft(rest, `/\`)
		return p.originAllowed(s, rest)
	case "data":
		if !p.AllowDataImages {
			return false
		}
		d := lowerASCII(clean)
		for _, t := range []string{"data:image/png", "data:image/gif", "data:image/jpeg", "data:image/webp"} {
			if strings.HasPrefix(d, t) && len(d) > len(t) && (d[len(t)] == ';' || d[len(t)] == ',') {
				return true
			}
		}
		return false
	}
	return false
}

// originAllowed checks "host[:port]/..." (after the scheme and slashes)
// against SameOrigin and AllowedImageOrigins. An empty scheme (network-path
// reference) matches an allowed origin of either scheme.
func (p Policy) originAllowed(sch, rest string) bool {
	host, ok := authorityHost(rest)
	if !ok {
		return false
	}
	allowed := p.AllowedImageOrigins
	if p.SameOrigin != "" {
		allowed = append(allowed[:len(allowed):len(allowed)], p.SameOrigin)
	}
	for _, o := range allowed {
		os, ohost, ok := splitOrigin(o)
		if !ok {
			continue
		}
		if sch != "" && os != sch {
			continue
		}
		scheme := sch
		if scheme == "" {
			scheme = os
		}
		if normalizePort(scheme, ohost) == normalizePort(scheme, host) {
			return true
		}
	}
	return false
}

// authorityHost returns the lowercased host[:port] at the start of rest, or
// ok=false when the authority holds anything but plain host characters
// (percent-escapes, non-ASCII): those are refused, never guessed.
func authorityHost(rest string) (string, bool) {
	end := anyof.Index(rest, `/\?#`)
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	if auth == "" {
		return "", false
	}
	for i := 0; i < len(auth); i++ {
		c := auth[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return "", false
		}
	}
	return strings.TrimSuffix(lowerASCII(auth), "."), true
}

func splitOrigin(o string) (scheme, host string, ok bool) {
	i := strings.Index(o, "://")
	if i <= 0 {
		return "", "", false
	}
	h, ok := authorityHost(o[i+3:])
	return lowerASCII(o[:i]), h, ok
}

func normalizePort(scheme, host string) string {
	switch {
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		return strings.TrimSuffix(host, ":443")
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		return strings.TrimSuffix(host, ":80")
	}
	return host
}

// policyRenderer replaces goldmark's renderers for links, images and
// autolinks (linkify produces autolinks too). It registers with a higher
// priority than goldmark's HTML renderer, so its functions win.
type policyRenderer struct {
	p Policy
	w html.Writer
}

func newPolicyRenderer(p Policy) renderer.NodeRenderer {
	return &policyRenderer{p: p, w: html.DefaultWriter}
}

// RegisterFuncs implements renderer.NodeRenderer.
func (r *policyRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindLink, r.renderLink)
	reg.Register(ast.KindImage, r.renderImage)
	reg.Register(ast.KindAutoLink, r.renderAutoLink)
}

func (r *policyRenderer) openLink(w util.BufWriter, href []byte, title []byte) {
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(href))
	_ = w.WriteByte('"')
	if title != nil {
		_, _ = w.WriteString(` title="`)
		r.w.Write(w, title)
		_ = w.WriteByte('"')
	}
	_, _ = w.WriteString(` rel="` + Rel + `">`)
}

func (r *policyRenderer) renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	dest := util.URLEscape(n.Destination, true)
	if !r.p.linkAllowed(dest) {
		// Refused destination: the link text stays, as text.
		return ast.WalkContinue, nil
	}
	if entering {
		r.openLink(w, dest, n.Title)
	} else {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func (r *policyRenderer) renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	dest := util.URLEscape(n.Destination, true)
	switch {
	case r.p.imageAllowed(dest):
		_, _ = w.WriteString(`<img src="`)
		_, _ = w.Write(util.EscapeHTML(dest))
		_, _ = w.WriteString(`" alt="`)
		r.renderTexts(w, source, n)
		_ = w.WriteByte('"')
		if n.Title != nil {
			_, _ = w.WriteString(` title="`)
			r.w.Write(w, n.Title)
			_ = w.WriteByte('"')
		}
		_, _ = w.WriteString(">")
	case r.p.linkAllowed(dest):
		// No request to a third party: the reader can still follow it.
		r.openLink(w, dest, n.Title)
		r.renderTexts(w, source, n)
		_, _ = w.WriteString("</a>")
	default:
		r.renderTexts(w, source, n)
	}
	return ast.WalkSkipChildren, nil
}

func (r *policyRenderer) renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	url := util.URLEscape(n.URL(source), false)
	label := n.Label(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	if !r.p.linkAllowed(url) {
		_, _ = w.Write(util.EscapeHTML(label))
		return ast.WalkContinue, nil
	}
	r.openLink(w, url, nil)
	_, _ = w.Write(util.EscapeHTML(label))
	_, _ = w.WriteString(`</a>`)
	return ast.WalkContinue, nil
}

// renderTexts writes the plain text of n's descendants, escaped, the way
// goldmark writes an image's alt attribute.
func (r *policyRenderer) renderTexts(w util.BufWriter, source []byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			r.w.Write(w, t.Value(source))
			if t.SoftLineBreak() || t.HardLineBreak() {
				_ = w.WriteByte('\n')
			}
		case *ast.String:
			if t.IsCode() {
				_, _ = w.Write(util.EscapeHTML(t.Value))
			} else {
				r.w.Write(w, t.Value)
			}
		default:
			r.renderTexts(w, source, c)
		}
	}
}
