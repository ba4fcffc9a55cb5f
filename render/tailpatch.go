package render

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/htmlx"
	"github.com/trickle-dev/trickle/internal/stdlite"
)

// TailPatch is the DOM work that turns the live tail, as the browser parsed
// its previous HTML, into exactly what parsing its next HTML would give:
// same nodes, same text nodes, same attributes. Replacing the whole tail
// every frame makes the browser parse, style, lay out and paint all of it
// again, and restart its fade-in; most frames only add a few words to the
// last paragraph, list item, table cell or code block.
//
// Applying it: start at the tail element and follow Path (child node
// indexes, text and comment nodes counted) to the element that changes;
// remove its child nodes after the first Keep; when Trim or Text is set,
// child Keep-1 is a text node: delete the last Trim UTF-16 code units of
// its data, then append Text; then insert HTML at the element's end
// (insertAdjacentHTML "beforeend"). The zero TailPatch with HTML set
// replaces the whole tail.
//
// Trim is for a text node whose end changed, not only grew: an open code
// fence's last line, rendered with a line break until the next token
// continues it. Without it such a node would be replaced whole each
// frame, and the browser would parse, style and lay out the whole code
// again.
type TailPatch struct {
	Path []int
	Keep int
	Text string
	HTML string
	Trim int
}

// Full reports whether the patch replaces the whole tail.
func (p TailPatch) Full() bool { return len(p.Path) == 0 && p.Keep == 0 }

// DiffTail returns the patch that turns the tail rendered as old into the
// tail rendered as next. Both are HTML as Document renders it (goldmark:
// well-formed, every element closed, text escaped). The patch changes the
// deepest element that holds every difference, keeps its unchanged leading
// children, and extends a text node in place when its text only grew. For
// HTML it cannot follow it replaces the whole tail, which is always right.
func DiffTail(old, next string) TailPatch {
	var d TailDiffer
	d.last, d.frag, d.ok = old, nil, false
	if old != "" {
		d.frag, d.ok = parseFragment(old)
	}
	return d.Diff(next)
}

// TailDiffer diffs a stream of tails, each against the one before: what
// DiffTail does, but every tail is parsed once (as the new side of one
// diff, then kept as the old side of the next) instead of twice, and only
// from where it differs from the previous one: the nodes before that are
// taken from the previous parse. A tail that grows at its end (a paragraph,
// a list, a table gaining words or rows) costs what it gained. The zero
// value starts from an empty tail.
type TailDiffer struct {
	last string    // the previous tail
	frag *fragment // its parse, when ok
	ok   bool
}

// Diff returns the patch from the previous tail to next (DiffTail(previous,
// next)) and remembers next as the previous tail.
func (d *TailDiffer) Diff(next string) TailPatch {
	old, ot, ok1 := d.last, d.frag, d.ok
	nt, ok2 := (*fragment)(nil), false
	switch {
	case next == "":
	case ok1 && old != "":
		nt, ok2 = resumeFragment(ot, next)
	default:
		nt, ok2 = parseFragment(next)
	}
	d.last, d.frag, d.ok = next, nt, ok2
	return diffParsed(old, next, ot, nt, ok1, ok2)
}

// Reset forgets the previous tail, as when the tail element is emptied.
func (d *TailDiffer) Reset() { *d = TailDiffer{} }

func diffParsed(old, next string, ot, nt *fragment, ok1, ok2 bool) TailPatch {
	full := TailPatch{HTML: next}
	if old == "" || next == "" || !ok1 || !ok2 {
		return full
	}
	var path []int
	o, n := &ot.nodes[0], &nt.nodes[0]
	for {
		oc, nc := o.children, n.children
		i := 0
		for i < len(oc) && i < len(nc) && ot.outer(oc[i]) == nt.outer(nc[i]) {
			i++
		}
		if i == len(oc) && i == len(nc) {
			// Nothing differs below here; only reachable when old and next
			// differ by what the parse drops (never for goldmark's HTML).
			return full
		}
		if i < len(oc) && i < len(nc) && len(oc) == len(nc) {
			a, b := &ot.nodes[oc[i]], &nt.nodes[nc[i]]
			if a.kind == nodeElement && b.kind == nodeElement && ot.startTag(a) == nt.startTag(b) && sameAfter(ot, nt, oc, nc, i+1) {
				path = append(path, i)
				o, n = a, b
				continue
			}
		}
		p := TailPatch{Path: path, Keep: i}
		from := n.contentEnd
		if i < len(nc) {
			from = nt.nodes[nc[i]].start
			if i < len(oc) {
				a, b := &ot.nodes[oc[i]], &nt.nodes[nc[i]]
				if a.kind == nodeText && b.kind == nodeText {
					ad, bd := a.data(old), b.data(next)
					if n := runePrefix(ad, bd); n > 0 {
						p.Keep, p.Text, p.Trim, from = i+1, bd[n:], utf16Len(ad[n:]), b.end
					}
				}
			}
		}
		p.HTML = next[from:n.contentEnd]
		if p.Full() {
			p.Path = nil
		}
		return p
	}
}

// runePrefix is commonPrefix cut back to a rune boundary of a and b.
func runePrefix(a, b string) int {
	i := commonPrefix(a, b)
	// a and b agree on the bytes before i, so a rune start in one at i is
	// one in the other unless i is past its end.
	for i > 0 && (i < len(a) && !utf8.RuneStart(a[i]) || i < len(b) && !utf8.RuneStart(b[i])) {
		i--
	}
	return i
}

// utf16Len is the length of s in UTF-16 code units, as the DOM counts a
// text node's data.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// sameAfter reports whether the children from i on are the same.
func sameAfter(ot, nt *fragment, oc, nc []int, i int) bool {
	for ; i < len(oc); i++ {
		if ot.outer(oc[i]) != nt.outer(nc[i]) {
			return false
		}
	}
	return true
}

type nodeKind uint8

const (
	nodeRoot nodeKind = iota
	nodeElement
	nodeText
	nodeComment
)

// node is one DOM node of a fragment, as spans of its source.
type node struct {
	kind       nodeKind
	start, end int // the node's whole HTML
	openEnd    int // elements: end of the start tag
	contentEnd int // elements and root: where the children end
	children   []int
}

// data is a text node's text as the DOM holds it: entities decoded and
// line breaks normalized as the HTML parser does.
func (n *node) data(src string) string {
	s := src[n.start:n.end]
	if strings.IndexByte(s, '&') >= 0 {
		s = htmlx.Unescape(s)
	}
	if strings.IndexByte(s, '\r') >= 0 {
		s = stdlite.ReplaceAll(stdlite.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	return s
}

// fragment is the node tree of an HTML fragment, parsed the way a browser
// parses goldmark's output.
type fragment struct {
	src   string
	nodes []node // nodes[0] is the root (the tail element's content)
}

func (f *fragment) outer(i int) string { return f.src[f.nodes[i].start:f.nodes[i].end] }

func (f *fragment) startTag(n *node) string { return f.src[n.start:n.openEnd] }

// voidElements have no end tag and no children.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
}

// parseFragment builds the node tree of src. It accepts only what goldmark
// writes — every non-void element closed by its own end tag, "<" only as
// markup, quoted attributes — and reports false for anything else, and
// for the few places where a browser's parse would not mirror the markup
// one to one (a newline right after <pre>, elements that only live inside
// tables outside one, raw text elements), so that the caller falls back to
// replacing everything.
func parseFragment(src string) (*fragment, bool) {
	if strings.IndexByte(src, 0) >= 0 {
		return nil, false // the parser drops NUL from text (goldmark writes U+FFFD)
	}
	f := &fragment{src: src, nodes: make([]node, 1, 16)}
	f.nodes[0] = node{kind: nodeRoot}
	return f, f.parseFrom(0, []openElement{{0, ""}})
}

// openElement is an element whose end tag the parse has not reached.
type openElement struct {
	idx int
	tag string
}

// resumeFragment parses next as parseFragment does, taking from old (the
// parse of the previous tail) every node that lies before the point where
// old and next differ: a node whose bytes, and whose end, come before that
// point parses the same in both. The parse resumes there with the
// elements open at that point, their children cut back to those before it.
func resumeFragment(old *fragment, next string) (*fragment, bool) {
	if strings.IndexByte(next, 0) >= 0 {
		return nil, false
	}
	c := commonPrefix(old.src, next)
	// Walk down from the root to the deepest element that holds c; b is
	// where the parse resumes: after the last child that ends before c
	// (its terminator, "<" or ">", is then the same in both), or at the
	// start of the child that holds c.
	stack := []openElement{{0, ""}}
	b, x := 0, 0
	for {
		ch := old.nodes[x].children
		i := sort.Search(len(ch), func(i int) bool { return old.nodes[ch[i]].start >= c }) - 1
		if i < 0 {
			b = old.nodes[x].openEnd
			break
		}
		n := &old.nodes[ch[i]]
		if n.end < c {
			b = n.end
			break
		}
		if n.kind == nodeElement && n.openEnd < c && n.end != n.openEnd {
			tag, _, _ := scanStartTag(old.src[n.start:n.openEnd])
			stack = append(stack, openElement{ch[i], tag})
			x = ch[i]
			continue
		}
		b = n.start
		break
	}
	// Nodes are stored in document order, so those before b come first.
	k := sort.Search(len(old.nodes), func(i int) bool { return old.nodes[i].start >= b && i > 0 })
	f := &fragment{src: next, nodes: make([]node, k, k+16)}
	copy(f.nodes, old.nodes[:k])
	for _, o := range stack {
		// The open elements gain children in the new parse: give them
		// their own slices, cut back to the children before b.
		n := &f.nodes[o.idx]
		j := sort.Search(len(n.children), func(i int) bool { return old.nodes[n.children[i]].start >= b })
		n.children = append([]int(nil), n.children[:j]...)
		if o.idx != 0 {
			n.end, n.contentEnd = n.openEnd, n.openEnd
		}
	}
	return f, f.parseFrom(b, stack)
}

// commonPrefix returns the length of the longest common prefix of a and b.
// Tails share kilobytes: compare in blocks (string equality is the
// runtime's memequal), then bytes.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	c := 0
	for c+64 <= n && a[c:c+64] == b[c:c+64] {
		c += 64
	}
	for c < n && a[c] == b[c] {
		c++
	}
	return c
}

// parseFrom parses f.src from pos, where the elements of stack are open
// (stack[0] is the root), appending to f.nodes.
func (f *fragment) parseFrom(pos int, stack []openElement) bool {
	src := f.src
	addChild := func(i int) {
		p := stack[len(stack)-1].idx
		f.nodes[p].children = append(f.nodes[p].children, i)
	}
	for pos < len(src) {
		if src[pos] != '<' {
			end := strings.IndexByte(src[pos:], '<')
			if end < 0 {
				end = len(src)
			} else {
				end += pos
			}
			top := stack[len(stack)-1]
			switch top.tag {
			case "table", "thead", "tbody", "tfoot", "tr":
				if stdlite.Trim(src[pos:end], " \t\n\r\f") != "" {
					return false // the parser moves such text out of the table
				}
			}
			if top.tag == "pre" || top.tag == "textarea" || top.tag == "listing" {
				if len(f.nodes[top.idx].children) == 0 && pos == f.nodes[top.idx].openEnd && (src[pos] == '\n' || src[pos] == '\r') {
					return false // the parser drops this newline
				}
			}
			f.nodes = append(f.nodes, node{kind: nodeText, start: pos, end: end})
			addChild(len(f.nodes) - 1)
			pos = end
			continue
		}
		rest := src[pos:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest[4:], "-->")
			if end < 0 {
				return false
			}
			f.nodes = append(f.nodes, node{kind: nodeComment, start: pos, end: pos + 4 + end + 3})
			addChild(len(f.nodes) - 1)
			pos += 4 + end + 3
		case strings.HasPrefix(rest, "</"):
			end := strings.IndexByte(rest, '>')
			if end < 0 || len(stack) == 1 {
				return false
			}
			top := stack[len(stack)-1]
			if strings.ToLower(stdlite.TrimSpace(rest[2:end])) != top.tag {
				return false
			}
			f.nodes[top.idx].contentEnd = pos
			f.nodes[top.idx].end = pos + end + 1
			stack = stack[:len(stack)-1]
			pos += end + 1
		default:
			tag, end, ok := scanStartTag(rest)
			if !ok || !allowedHere(tag, stack[len(stack)-1].tag) {
				return false
			}
			if tag == "a" {
				for _, o := range stack {
					if o.tag == "a" {
						return false // a link in a link: the parser closes the outer one
					}
				}
			}
			f.nodes = append(f.nodes, node{kind: nodeElement, start: pos, openEnd: pos + end, end: pos + end, contentEnd: pos + end})
			i := len(f.nodes) - 1
			addChild(i)
			pos += end
			if !voidElements[tag] {
				stack = append(stack, openElement{i, tag})
			}
		}
	}
	if len(stack) != 1 {
		return false
	}
	f.nodes[0].end, f.nodes[0].contentEnd = len(src), len(src)
	return true
}

// scanStartTag reads "<name attr="v" …>" at the start of s: the lower-case
// tag name and the length of the tag.
func scanStartTag(s string) (tag string, n int, ok bool) {
	i := 1
	for i < len(s) && isTagChar(s[i]) {
		i++
	}
	if i == 1 {
		return "", 0, false
	}
	tag = strings.ToLower(s[1:i])
	switch tag {
	case "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext", "template", "svg", "math":
		// Raw text, templates and foreign content parse differently.
		return "", 0, false
	}
	var quote byte
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '<':
			return "", 0, false
		case c == '>':
			return tag, i + 1, true
		}
	}
	return "", 0, false
}

func isTagChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// allowedHere rejects the nestings the HTML parser would rearrange: table
// parts outside their table, and a block where a paragraph is open (goldmark
// never writes either).
func allowedHere(tag, parent string) bool {
	switch tag {
	case "thead", "tbody", "tfoot", "caption", "colgroup":
		return parent == "table"
	case "tr":
		return parent == "thead" || parent == "tbody" || parent == "tfoot"
	case "td", "th":
		return parent == "tr"
	case "li":
		return parent == "ul" || parent == "ol"
	}
	switch parent {
	case "table", "thead", "tbody", "tfoot", "tr":
		return false // only the table parts above go there (and whitespace, as text)
	case "p", "h1", "h2", "h3", "h4", "h5", "h6":
		switch tag {
		case "p", "div", "ul", "ol", "pre", "blockquote", "table", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "details", "dl", "section", "figure", "li":
			return false
		}
	}
	return true
}
