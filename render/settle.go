// Where the text can be cut: which top-level blocks of the live part are
// closed for good (closedUnits) and which of them a later link reference
// definition could still change (refSensitive). Document.step settles
// what these say may settle.

package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

type span struct{ from, to, start, end int }

// closedUnits finds the leading top-level blocks of the live part that are
// closed, grouped into units between the places where the text may be cut;
// start and end are positions in src.
//
// The block parser of CommonMark (and goldmark's) reads one line at a time
// and never reopens a closed block, so a top-level block that was closed by
// a *complete* line (one that ends with a newline) has its final extent and
// structure, whatever follows. The document has one open child at a time:
// every top-level block followed by another that starts on a complete line
// is closed. The last block is closed only in a few cases we can see from
// its own syntax (a heading, a thematic break, a fenced code block or HTML
// block with its closing line complete).
//
// A closed block's HTML can still change through link reference
// definitions; that is decided per unit, see refSensitive.
func closedUnits(src []byte, blocks []ast.Node, st *parseState) []span {
	// complete is the end of the last complete line: the last line of the
	// text (after the last newline) is never final, more characters may
	// change what it is.
	complete := st.complete
	starts := make([]int, len(blocks))
	for i, b := range blocks {
		starts[i] = blockStart(b)
		if b.Kind() == extast.KindFootnoteList {
			// Made of definitions from anywhere, rendered at the end.
			starts[i] = len(src)
		}
	}
	n := 0
	for i, b := range blocks {
		p := starts[i]
		closed := false
		switch {
		case p < 0 || p >= st.openFrom:
			// Unknown position, or a piece of the top-level paragraph
			// that was still open at the last complete line (its
			// definitions, a table, a setext heading are decided when it
			// closes).
		case isParagraphPiece(b):
			// Not open at the last complete line, so a complete line
			// closed it (a blank line, or a block that interrupts it).
			closed = i+1 == len(blocks) || starts[i+1] > p
		case i+1 < len(blocks) && starts[i+1] >= 0 && starts[i+1] < complete && lineStart(src, starts[i+1]) > lineStart(src, p):
			// The next block started on a complete line, which closed
			// this one.
			closed = true
		case i+1 < len(blocks) && starts[i+1] == complete && complete < len(src) && startsProse(src[complete]):
			// The next block starts the unfinished last line, unindented,
			// with a letter: no character after it can make that line a
			// continuation of this block (that takes indentation, ">" or
			// a list marker), and it was not taken as a lazy line.
			closed = true
		default:
			closed = selfClosed(src, b, complete)
		}
		if !closed {
			break
		}
		n++
	}
	// Cut points: where every block before starts before the cut and every
	// block after at or after it (goldmark's AST order can differ from
	// source order when a paragraph is split into a table and a setext
	// heading), and never between two pieces of one paragraph.
	var spans []span
	from, start := 0, 0
	for k := 1; k <= n; k++ {
		var cut int
		if k < len(blocks) {
			cut = lineStart(src, starts[k])
		} else {
			cut = complete
		}
		if !separates(starts, k, cut) || (k < len(blocks) && glued(src, blocks[k-1], blocks[k], cut)) {
			continue
		}
		// Blank lines before the next block stay with it, so that it
		// parses exactly as it did inside the whole text.
		cut = blankRunStart(src, cut)
		spans = append(spans, span{from: from, to: k, start: start, end: cut})
		from, start = k, cut
	}
	return spans
}

// startsProse reports whether a line starting with c can only be paragraph
// text: an ASCII letter, or the first byte of a non-ASCII character. No
// block syntax (markers, fences, "<", "|", "[", digits of ordered lists)
// starts that way.
func startsProse(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// glued reports whether next was cut out of the same paragraph as prev
// (a table, definitions, a setext heading and the rest of a paragraph are
// pieces of one paragraph). Such a piece may start with a continuation
// line, which parses differently at the start of a text ("    x" would be
// indented code), so the tail must never start between them.
func glued(src []byte, prev, next ast.Node, cut int) bool {
	if !isParagraphPiece(prev) {
		return false
	}
	switch next.Kind() {
	case ast.KindParagraph, ast.KindLinkReferenceDefinition, extast.KindTable:
	case ast.KindHeading:
		if isATX(src[blockStart(next):]) {
			return false
		}
	default:
		return false
	}
	// No blank line between them: the same paragraph.
	return blankRunStart(src, cut) == cut
}

// separates reports whether every one of the first n blocks starts before
// cut and every other block at or after it.
func separates(starts []int, n, cut int) bool {
	for i, p := range starts {
		if (i < n) != (p < cut) {
			return false
		}
	}
	return true
}

// blockStart is where a top-level block's first line starts (its first
// non-indent byte), or -1 when unknown.
func blockStart(n ast.Node) int {
	switch n.Kind() {
	case ast.KindParagraph:
		// After link reference definitions are taken out of a paragraph,
		// its first remaining line is where it starts.
		if n.Lines().Len() > 0 {
			return n.Lines().At(0).Start
		}
	case extast.KindTable:
		// Pos of a table is that of the paragraph it came from.
		if c := n.FirstChild(); c != nil && c.Pos() >= 0 {
			return c.Pos()
		}
	}
	if p := n.Pos(); p >= 0 {
		return p
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start
	}
	if c := n.FirstChild(); c != nil && c.Type() == ast.TypeBlock {
		return blockStart(c)
	}
	return -1
}

func lineStart(src []byte, p int) int {
	return bytes.LastIndexByte(src[:p], '\n') + 1
}

// blankRunStart moves a line start back over the blank lines before it.
func blankRunStart(src []byte, p int) int {
	for p > 0 {
		prev := bytes.LastIndexByte(src[:p-1], '\n') + 1
		if !util.IsBlank(src[prev:p]) {
			break
		}
		p = prev
	}
	return p
}

// selfClosed reports whether a top-level block can no longer change, from
// its own syntax, whatever follows.
func selfClosed(src []byte, b ast.Node, complete int) bool {
	p := blockStart(b)
	if p < 0 || p >= complete {
		return false
	}
	switch n := b.(type) {
	case *ast.ThematicBreak:
		return true
	case *ast.Heading:
		if isATX(src[p:]) {
			return true
		}
		// Setext: the underline is the line after the content.
		lines := n.Lines()
		if lines.Len() == 0 {
			return false
		}
		u := lineEnd(src, lines.At(lines.Len()-1).Stop-1)
		return u >= 0 && u+1 < complete
	case *ast.FencedCodeBlock:
		return fenceClosed(src, n, p, complete)
	case *ast.HTMLBlock:
		return n.HasClosure() && n.ClosureLine.Stop <= complete && n.ClosureLine.Start < complete
	}
	return false
}

// lineEnd returns the index of the newline ending the line that holds p.
func lineEnd(src []byte, p int) int {
	if p < 0 {
		p = 0
	}
	i := bytes.IndexByte(src[p:], '\n')
	if i < 0 {
		return -1
	}
	return p + i
}

func isATX(line []byte) bool {
	i := 0
	for i < len(line) && line[i] == '#' {
		i++
	}
	return i >= 1 && i <= 6 && (i == len(line) || line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r')
}

// fenceClosed reports whether a top-level fenced code block starting at p
// has its closing fence on a complete line.
func fenceClosed(src []byte, n *ast.FencedCodeBlock, p, complete int) bool {
	fc := src[p]
	k := 0
	for p+k < len(src) && src[p+k] == fc {
		k++
	}
	var next int
	if lines := n.Lines(); lines.Len() > 0 {
		last := lines.At(lines.Len() - 1)
		e := lineEnd(src, max(last.Stop-1, last.Start))
		if e < 0 {
			return false
		}
		next = e + 1
	} else {
		e := lineEnd(src, p)
		if e < 0 {
			return false
		}
		next = e + 1
	}
	if next >= complete {
		return false
	}
	e := lineEnd(src, next)
	line := src[next:e]
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == fc {
		j++
	}
	return j-i >= k && util.IsBlank(line[j:])
}

// refSensitive reports whether a link reference definition that may still
// come (or go) could change b's HTML. final holds the labels of the
// definitions that are final (in closed blocks before the live part).
//
// A literal "]" outside code is a reference whose label missed (or may be
// one): a later "[label]: url" would turn it into a link. A resolved
// reference is final only if its definition is: one inside the open block
// may still vanish ("[1]: /u" followed by " x" is no definition).
func refSensitive(src []byte, b ast.Node, final map[string]struct{}) bool {
	sensitive := false
	_ = ast.Walk(b, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.CodeSpan, *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock, *ast.RawHTML, *ast.AutoLink:
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			// A bracket that did not become a link: "[x]" is a shortcut
			// reference waiting for its definition.
			if bytes.IndexByte(v.Segment.Value(src), ']') >= 0 {
				sensitive = true
				return ast.WalkStop, nil
			}
		case *ast.String:
			if bytes.IndexByte(v.Value, ']') >= 0 {
				sensitive = true
				return ast.WalkStop, nil
			}
		case *ast.Link:
			if v.Reference != nil && !known(v.Reference.Value, final) {
				sensitive = true
				return ast.WalkStop, nil
			}
		case *ast.Image:
			if v.Reference != nil && !known(v.Reference.Value, final) {
				sensitive = true
				return ast.WalkStop, nil
			}
		}
		return ast.WalkContinue, nil
	})
	return sensitive
}

func known(label []byte, final map[string]struct{}) bool {
	_, ok := final[util.ToLinkReference(label)]
	return ok
}

// parseState carries, through the parser.Context, what closedUnits needs to
// know about the parse of a tail: where its last complete line ends, and
// where the top-level paragraph starts that was still open there.
type parseState struct {
	complete int
	openFrom int
}

var parseStateKey = parser.NewContextKey()

// paragraphWatcher is a paragraph transformer that changes nothing. It runs
// before all others (link reference definitions, tables), when a paragraph
// closes, and records top-level paragraphs that closed on the unfinished
// last line or at the end of the text: those (and every block cut out of
// them) are not final. It is part of the shared configuration, and does
// nothing unless Document put a parseState in the context.
type paragraphWatcher struct{}

// Transform implements parser.ParagraphTransformer.
func (paragraphWatcher) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	st, ok := pc.Get(parseStateKey).(*parseState)
	if !ok || node.Parent() == nil || node.Parent().Kind() != ast.KindDocument || node.Lines().Len() == 0 {
		return
	}
	line, seg := reader.PeekLine()
	if line != nil && seg.Start < st.complete {
		return
	}
	if p := lineStart(reader.Source(), node.Lines().At(0).Start); p < st.openFrom {
		st.openFrom = p
	}
}

func isParagraphPiece(n ast.Node) bool {
	switch n.Kind() {
	case ast.KindParagraph, ast.KindLinkReferenceDefinition, extast.KindTable:
		return true
	}
	return false
}
