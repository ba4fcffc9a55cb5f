package render

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Frame is what one Update or Finish produces: the patches for the screen
// and the blocks behind them.
type Frame struct {
	// Append is newly settled HTML: append it once after everything settled
	// before; it is never repeated or taken back.
	Append string
	// Tail replaces the live tail (the HTML after all settled blocks).
	Tail string
	// Settled lists the blocks whose HTML is in Append, in order. Blocks
	// that render nothing (link reference definitions) are left out.
	Settled []Block
	// TailBlocks lists the blocks shown in Tail. With repair on they are the
	// blocks of the repaired text that is actually shown.
	TailBlocks []Block
	// Final is true for the frame of Finish: everything has settled and the
	// tail is empty.
	Final bool
}

// Document renders a growing markdown answer incrementally. Each Update
// parses and renders only the unsettled tail of the text; blocks that no
// continuation can change are emitted once, in Frame.Append, and never
// again. For every text, the concatenation of all Append so far plus the
// current Tail equals Convert(text) with the same options.
//
// A Document is not safe for concurrent use.
type Document struct {
	md     goldmark.Markdown
	repair bool

	// settled is the length of the settled prefix of the text. It is always
	// the start of a line, and the parser state there is "document, nothing
	// open", so the tail parses on its own.
	settled int
	// refs are the link reference definitions inside the settled prefix, in
	// document order; labels holds their normalized labels. They are fed to
	// every tail parse, because definitions apply to the whole document.
	refs   []parser.Reference
	labels map[string]struct{}

	last     string // the last text given to Update
	lastTail string // the Tail of the last frame, for repeated texts
	lastBlks []Block
	done     bool
}

// NewDocument returns an empty Document. Options are those of Convert.
func NewDocument(opts ...Option) *Document {
	c := newConfig(opts)
	return &Document{md: markdownFor(c), repair: c.repair, labels: map[string]struct{}{}}
}

// Reset forgets the text and starts a new, empty document with the same
// options.
func (d *Document) Reset() {
	d.settled = 0
	d.refs = nil
	d.labels = map[string]struct{}{}
	d.last, d.lastTail, d.lastBlks = "", "", nil
	d.done = false
}

// Update renders text, the whole answer so far. The text only grows: it must
// start with the text of the previous Update (use Reset for a new answer).
// The cost depends on the unsettled tail only, never on the settled part.
// After Finish, Update returns an empty final frame until Reset.
func (d *Document) Update(text string) Frame {
	if d.done {
		return Frame{Final: true}
	}
	if len(text) < d.settled {
		// The caller broke the contract (text shrank below what was already
		// written once); the settled HTML cannot be taken back, so keep
		// showing what we have.
		return Frame{Tail: d.lastTail, TailBlocks: d.lastBlks}
	}
	// Same text again (a frame with no new token): the settled part is the
	// caller's promise, so only the tail is compared.
	if len(text) == len(d.last) && d.last != "" && text[d.settled:] == d.last[d.settled:] {
		return Frame{Tail: d.lastTail, TailBlocks: d.lastBlks}
	}
	d.last = text
	f := d.step(text[d.settled:], false)
	d.lastTail, d.lastBlks = f.Tail, f.TailBlocks
	return f
}

// Finish ends the stream: everything left settles, Frame.Tail is empty and
// Frame.Final is true. All Append so far then equal Convert of the text.
func (d *Document) Finish() Frame {
	if d.done {
		return Frame{Final: true}
	}
	f := d.step(d.last[d.settled:], true)
	d.done = true
	d.settled = len(d.last)
	f.Final = true
	d.lastTail, d.lastBlks = "", nil
	return f
}

// parse parses src (a tail of the answer) with the settled link reference
// definitions known, as they would be in a parse of the whole answer.
func (d *Document) parse(src []byte, st *parseState) ast.Node {
	pc := parser.NewContext()
	for _, r := range d.refs {
		pc.AddReference(r)
	}
	if st != nil {
		pc.Set(parseStateKey, st)
	}
	return d.md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
}

func (d *Document) render(buf *bytes.Buffer, src []byte, nodes []ast.Node) {
	r := d.md.Renderer()
	for _, n := range nodes {
		// Rendering only fails when the writer fails; a Buffer never does.
		_ = r.Render(buf, src, n)
	}
}

// step parses the tail and settles what it can (everything when final).
func (d *Document) step(tail string, final bool) Frame {
	src := []byte(tail)
	st := &parseState{complete: bytes.LastIndexByte(src, '\n') + 1, openFrom: len(src) + 1}
	root := d.parse(src, st)
	var blocks []ast.Node
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		blocks = append(blocks, c)
	}

	n, cut := len(blocks), len(src)
	if !final {
		n, cut = d.settleable(src, blocks, st)
	}

	var f Frame
	if n > 0 {
		var buf bytes.Buffer
		d.render(&buf, src, blocks[:n])
		f.Append = buf.String()
		for _, b := range blocks[:n] {
			if def, ok := b.(*ast.LinkReferenceDefinition); ok {
				d.addRef(def)
				continue
			}
			f.Settled = append(f.Settled, Block{Node: b, Source: src, Offset: d.settled})
		}
		// Definitions nested in settled lists and quotes count too.
		for _, b := range blocks[:n] {
			if _, ok := b.(*ast.LinkReferenceDefinition); !ok {
				d.collectRefs(b)
			}
		}
	}
	if final {
		return f
	}

	rest := blocks[n:]
	tsrc, offset := src, d.settled
	if d.repair {
		if show, closer := repairCut(src, cut, rest); show < len(src) || closer != "" {
			tsrc = append(src[cut:show:show], closer...)
			offset = d.settled + cut
			rest = nil
			for c := d.parse(tsrc, nil).FirstChild(); c != nil; c = c.NextSibling() {
				rest = append(rest, c)
			}
		}
	}
	var buf bytes.Buffer
	d.render(&buf, tsrc, rest)
	f.Tail = buf.String()
	for _, b := range rest {
		if _, ok := b.(*ast.LinkReferenceDefinition); ok {
			continue
		}
		f.TailBlocks = append(f.TailBlocks, Block{Node: b, Source: tsrc, Offset: offset})
	}
	d.settled += cut
	return f
}

func (d *Document) addRef(def *ast.LinkReferenceDefinition) {
	label := util.ToLinkReference(def.Label)
	if _, ok := d.labels[label]; ok {
		return
	}
	d.labels[label] = struct{}{}
	// Copy: the definition points into a tail buffer we do not keep.
	d.refs = append(d.refs, parser.NewReference(
		bytes.Clone(def.Label), bytes.Clone(def.Destination), cloneOrNil(def.Title)))
}

func (d *Document) collectRefs(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if def, ok := c.(*ast.LinkReferenceDefinition); ok {
			d.addRef(def)
		} else if c.Type() == ast.TypeBlock {
			d.collectRefs(c)
		}
	}
}

func cloneOrNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// settleable decides how many leading blocks of the tail are settled, and
// where the new tail starts (a line start inside src).
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
// definitions, which apply to the whole document: a later "[x]: /url" turns
// an earlier literal "[x]" into a link. A block is therefore not settled
// while it shows a literal "]" outside code (a reference that may resolve
// later), or while it uses a definition that is not itself final.
func (d *Document) settleable(src []byte, blocks []ast.Node, st *parseState) (n, cut int) {
	// complete is the end of the last complete line: the last line of the
	// text (after the last newline) is never final, more characters may
	// change what it is.
	complete := st.complete
	closed := make([]bool, len(blocks))
	starts := make([]int, len(blocks))
	for i, b := range blocks {
		starts[i] = blockStart(b)
	}
	for i, b := range blocks {
		p := starts[i]
		switch {
		case p < 0 || p >= st.openFrom:
			// Unknown position, or a piece of the top-level paragraph
			// that was still open at the last complete line (its
			// definitions, a table, a setext heading are decided when it
			// closes).
		case isParagraphPiece(b):
			// Not open at the last complete line, so a complete line
			// closed it (a blank line, or a block that interrupts it).
			closed[i] = i+1 == len(blocks) || starts[i+1] > p
		case i+1 < len(blocks) && starts[i+1] >= 0 && starts[i+1] < complete && lineStart(src, starts[i+1]) > lineStart(src, p):
			// The next block started on a complete line, which closed
			// this one.
			closed[i] = true
		default:
			closed[i] = selfClosed(src, b, complete)
		}
	}
	// Definitions inside closed blocks are final: first definition wins, and
	// everything that may still come lies after them.
	var final map[string]struct{}
	for i, b := range blocks {
		if !closed[i] {
			break
		}
		if final == nil {
			final = map[string]struct{}{}
		}
		collectLabels(b, final)
	}
	for n < len(blocks) && closed[n] && !refSensitive(src, blocks[n], d.labels, final) {
		n++
	}
	// The cut must separate the settled blocks from the rest in the
	// source too (goldmark's AST order can differ from source order when a
	// paragraph is split into a table and a setext heading).
	for ; n > 0; n-- {
		if n < len(blocks) {
			cut = lineStart(src, starts[n])
		} else {
			cut = complete
		}
		if separates(starts, n, cut) && !(n < len(blocks) && glued(src, blocks[n-1], blocks[n], cut)) {
			break
		}
	}
	if n == 0 {
		return 0, 0
	}
	// Blank lines before the next block stay with the tail so that it
	// parses exactly as it did inside the whole text.
	return n, blankRunStart(src, cut)
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
// come (or go) could change b's HTML.
func refSensitive(src []byte, b ast.Node, settled, final map[string]struct{}) bool {
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
			if v.Reference != nil && !known(v.Reference.Value, settled, final) {
				sensitive = true
				return ast.WalkStop, nil
			}
		case *ast.Image:
			if v.Reference != nil && !known(v.Reference.Value, settled, final) {
				sensitive = true
				return ast.WalkStop, nil
			}
		}
		return ast.WalkContinue, nil
	})
	return sensitive
}

func known(label []byte, settled, final map[string]struct{}) bool {
	k := util.ToLinkReference(label)
	if _, ok := settled[k]; ok {
		return true
	}
	_, ok := final[k]
	return ok
}

func collectLabels(n ast.Node, into map[string]struct{}) {
	if def, ok := n.(*ast.LinkReferenceDefinition); ok {
		into[util.ToLinkReference(def.Label)] = struct{}{}
		return
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() == ast.TypeBlock {
			collectLabels(c, into)
		}
	}
}

// parseState carries, through the parser.Context, what settleable needs to
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
