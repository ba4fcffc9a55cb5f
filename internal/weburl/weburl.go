// Package weburl reads, resolves and writes URLs for the widget, in
// place of net/url, whose parser, errors and IPv6 checks (net/netip) cost
// the widget's .wasm about 13 KB of brotli (issue 34, "Lighter").
//
// It reads a narrower language than net/url: the URLs a browser writes
// when it serialises one (new URL(…).href), and the references a relay
// writes relative to them. Within it, every result is the one net/url
// gives: the same parts, the same resolution (RFC 3986 §5.2, to the byte)
// and the same string written back. Outside it a URL is refused, never
// guessed at: whatever net/url refuses, and some URLs it reads (userinfo,
// opaque URLs, a raw space, percent-escapes in a host, an IPv4 tail or a
// zone in an IPv6 literal). The fuzz targets hold it to net/url as the
// oracle.
//
// The widget builds this package, as every other but the runtime, without inlining
// (wasm/internal/inline): it runs once per request.
package weburl

import "strings"

// URL is a URL read by Parse. Its parts are kept as written, escapes and
// all: in this language net/url writes them back the same.
type URL struct {
	_          incomparable
	Scheme     string // lower case; "" in a reference without one
	Host       string // host[:port] as written; "" in a path-only reference
	Path       string // escaped, as written
	RawQuery   string // as written, without its "?"
	ForceQuery bool   // a "?" with nothing after it, which String keeps
	Fragment   string // escaped, as written, without its "#"
}

// Parse reads s: an absolute URL (scheme://host[:port]/path?query#fragment),
// a network-path reference (//host/path…) or a path reference (/a/b, ../b,
// b?query, #f). ok is false for anything else.
func Parse(s string) (u *URL, ok bool) { return parse(s, false) }

// ParseHost reads s as Parse does, but for its scheme and host only: its
// path, query and fragment may hold any byte net/url takes there (a raw
// space, UTF-8), which String would not write back as net/url does.
func ParseHost(s string) (u *URL, ok bool) { return parse(s, true) }

func parse(s string, lax bool) (*URL, bool) {
	u := new(URL)
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, u.Fragment = s[:i], s[i+1:]
	}
	if !validPart(u.Fragment, "/?", lax) {
		return nil, false
	}
	if i := schemeEnd(s); i > 0 {
		u.Scheme, s = strings.ToLower(s[:i]), s[i+1:]
		if !strings.HasPrefix(s, "//") {
			return nil, false // opaque (mailto:x) or without a host (http:/x)
		}
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s, u.RawQuery = s[:i], s[i+1:]
		u.ForceQuery = u.RawQuery == ""
	}
	for _, c := range []byte(u.RawQuery) {
		if c < ' ' || c == 0x7f || !lax && (c == ' ' || c > 0x7f) {
			return nil, false
		}
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		if !validHost(s[:i]) {
			return nil, false
		}
		u.Host, s = s[:i], s[i:]
	} else if i := strings.IndexByte(s, ':'); i >= 0 && !strings.Contains(s[:i], "/") {
		return nil, false // a colon in the first segment: net/url refuses it
	}
	if !validPart(s, "/", lax) || strings.EqualFold(s, "%2a") {
		return nil, false // (net/url writes a path of "*" as "*", escaped or not)
	}
	u.Path = s
	return u, true
}

// schemeEnd is the index of the ":" ending s's scheme, or -1 when s does
// not begin with one (RFC 3986: a letter, then letters, digits, "+-.").
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ':' && i > 0 {
			return i
		}
		if !isAlnum(c) && c != '+' && c != '-' && c != '.' || i == 0 && !isLetter(c) {
			return -1
		}
	}
	return -1
}

// validPart says whether s is a path or fragment as written in this
// language: unreserved characters, sub-delimiters, ":" and "@", the extra
// bytes given, and %XX escapes. When lax, any byte but a control one
// (and "%" only to escape) is taken, as net/url takes it.
func validPart(s, extra string, lax bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		case isAlnum(c) || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0 || strings.IndexByte(extra, c) >= 0:
		case !lax || c < ' ' || c == 0x7f:
			return false
		}
	}
	return true
}

// validHost says whether h is a host as written in this language: a name
// of letters, digits and "-._~", or a bracketed IPv6 address of hex
// groups; then an optional ":" and a port of digits.
func validHost(h string) bool {
	var port string
	if h != "" && h[0] == '[' {
		end := strings.IndexByte(h, ']')
		if end < 0 || !validIPv6(h[1:end]) {
			return false
		}
		port = h[end+1:]
	} else {
		name := h
		if i := strings.IndexByte(h, ':'); i >= 0 {
			name, port = h[:i], h[i:]
		}
		if name == "" {
			return false
		}
		for i := 0; i < len(name); i++ {
			if c := name[i]; !isAlnum(c) && strings.IndexByte("-._~", c) < 0 {
				return false
			}
		}
	}
	return port == "" || port[0] == ':' && allDigits(port[1:])
}

// validIPv6 says whether s is an IPv6 address written as hex groups: eight
// of one to four digits, or fewer with one "::" standing for at least one
// group of zeros. (No IPv4 tail, no zone.)
func validIPv6(s string) bool {
	groups, gap := 0, false
	if strings.HasPrefix(s, "::") {
		gap, s = true, s[2:]
	}
	for s != "" {
		n := 0
		for n < len(s) && n < 5 && isHex(s[n]) {
			n++
		}
		if n == 0 || n > 4 {
			return false
		}
		groups++
		s = s[n:]
		if s == "" {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return false
		}
		s = s[1:]
		if s[0] == ':' {
			if gap {
				return false
			}
			gap, s = true, s[1:]
		}
	}
	if gap {
		return groups <= 7
	}
	return groups == 8
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isAlnum(c byte) bool { return isLetter(c) || '0' <= c && c <= '9' }

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Absolute says whether u has a scheme and a host: a base to resolve
// against, a URL to request.
func (u *URL) Absolute() bool { return u.Scheme != "" && u.Host != "" }

// Resolve is r resolved against u (absolute), as RFC 3986 §5.2 and
// net/url's ResolveReference say.
func (u *URL) Resolve(r *URL) *URL {
	s := *r
	if r.Scheme == "" {
		s.Scheme = u.Scheme
	}
	if r.Host != "" {
		s.Path = removeDots(r.Path, "")
		return &s
	}
	if r.Path == "" && !r.ForceQuery && r.RawQuery == "" {
		s.RawQuery = u.RawQuery
		if r.Fragment == "" {
			s.Fragment = u.Fragment
		}
	}
	s.Host = u.Host
	s.Path = removeDots(u.Path, r.Path)
	return &s
}

// removeDots merges ref into the base path and takes out its "." and ".."
// segments, as net/url's resolvePath does (to the byte: a ".." past the
// root stays at the root, a trailing "." or ".." leaves a "/", and of a
// leading "//" one "/" is kept).
func removeDots(base, ref string) string {
	full := ref
	if ref == "" {
		full = base
	} else if ref[0] != '/' {
		full = base[:strings.LastIndexByte(base, '/')+1] + ref
	}
	if full == "" {
		return ""
	}
	// out[:n] is what is written: a "/", then the segments kept, each
	// after a "/" but the first (a leading empty segment makes "//").
	out := make([]byte, len(full)+2)
	out[0] = '/'
	n := 1
	empty := true // nothing written after the first "/"
	seg := ""
	for more := true; more; {
		seg = full
		if i := strings.IndexByte(full, '/'); i >= 0 {
			seg, full = full[:i], full[i+1:]
		} else {
			more = false
		}
		switch seg {
		case ".":
			empty = false
		case "..":
			n--
			for n > 1 && out[n] != '/' {
				n--
			}
			n = max(n, 1) // back to the last "/" after the first, else to the root
			empty = n == 1
		default:
			if !empty {
				out[n] = '/'
				n++
			}
			n += copy(out[n:], seg)
			empty = false
		}
	}
	if seg == "." || seg == ".." {
		out[n] = '/'
		n++
	}
	if n > 1 && out[1] == '/' {
		return string(out[1:n])
	}
	return string(out[:n])
}

// String writes u (absolute) back as net/url's URL.String does.
func (u *URL) String() string {
	slash, q, hash := "", "", ""
	if u.Path != "" && u.Path[0] != '/' {
		slash = "/"
	}
	if u.ForceQuery || u.RawQuery != "" {
		q = "?"
	}
	if u.Fragment != "" {
		hash = "#"
	}
	return u.Scheme + "://" + u.Host + slash + u.Path + q + u.RawQuery + hash + u.Fragment
}

// Hostname is u's host without its port or an IPv6 address's brackets,
// as net/url's.
func (u *URL) Hostname() string {
	h := u.Host
	if i := strings.LastIndexByte(h, ':'); i >= 0 && allDigits(h[i+1:]) {
		h = h[:i]
	}
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	return h
}

// Unescape decodes s's %XX escapes, and a "+" to a space when query, as
// net/url's PathUnescape and QueryUnescape do; ok is false for a "%"
// without two hex digits after it.
func Unescape(s string, query bool) (string, bool) {
	b := make([]byte, len(s))
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", false
			}
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		} else if c == '+' && query {
			c = ' '
		}
		b[n] = c
		n++
	}
	return string(b[:n]), true
}

// The bytes, besides letters and digits, that net/url leaves as they are
// when it escapes a query component (QueryEscape), a path segment
// (PathEscape) and a whole path (URL.String of a Path).
const (
	QueryKeeps   = "-_.~"
	SegmentKeeps = "-_.~$&+:=@"
	PathKeeps    = "-_.~$&+,/:;=@"
)

// Escape escapes s as net/url does: letters, digits and keep stay, a
// space is "+" when keep is QueryKeeps, any other byte %XX in upper case.
func Escape(s, keep string) string {
	b := make([]byte, 3*len(s))
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlnum(c) || strings.IndexByte(keep, c) >= 0:
		case c == ' ' && keep == QueryKeeps:
			c = '+'
		default:
			b[n], b[n+1], b[n+2] = '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15]
			n += 3
			continue
		}
		b[n] = c
		n++
	}
	return string(b[:n])
}
