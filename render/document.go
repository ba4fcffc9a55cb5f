package render

import (
	"bytes"
	"strings"

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
	// TailBlocks lists the blocks shown in Tail: pending blocks (closed, but
	// waiting for link reference definitions), then the live ones. With
	// repair on, the live ones are those of the repaired text actually
	// shown: a prefix of the answer, possibly followed by closing markers
	// ("**", "`") that are not in the answer. They are valid until the
	// next Update: a streaming table's finished rows move on to the next
	// frame's table node (Settled blocks stay valid for good).
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
	plain  goldmark.Markdown // md without its extension: renders the live part
	repair bool
	// fnPrefix goes before every footnote id (WithFootnotePrefix), through
	// each parse's context.
	fnPrefix []byte

	// The text is cut in three, at line starts where the parser state is
	// "document, nothing open", so that each part parses on its own:
	//
	//   [0, settled)           rendered, emitted in Frame.Append, never again
	//   [settled, pendingEnd)  closed blocks that may still change through
	//                          link reference definitions ("[1]" waiting for
	//                          "[1]: url"): kept with their HTML, at the
	//                          start of the tail, re-parsed only when the
	//                          definitions change
	//   [pendingEnd, len)      the live part, parsed every frame
	settled    int
	pendingEnd int
	pending    []unit
	pendingTxt string // the concatenated HTML of pending

	// refs are the link reference definitions of [0, pendingEnd), in
	// document order (all final); labels holds their normalized labels.
	// They are fed to every later parse, because definitions apply to the
	// whole document.
	refs   []parser.Reference
	labels map[string]struct{}
	// liveKey identifies the definitions in the live part at the last
	// frame; pending blocks are re-parsed when it changes.
	liveKey string

	// rows are the finished rows of a table streaming at the start of the
	// live part (see tableRows); live is this frame's view of that table.
	rows       tableRows
	live       liveTable
	noRowCache bool // benchmarks and tests: parse a streaming table whole
	rowHits    int  // frames that parsed with kept rows (tests)

	scratch  bytes.Buffer
	last     string // the last text given to Update
	lastTail string // the Tail of the last frame, for repeated texts
	lastBlks []Block
	done     bool
}

// unit is a run of closed top-level blocks between two places where the
// text may be cut (never between two pieces of one paragraph).
type unit struct {
	start, end int // in the whole text
	blocks     []ast.Node
	src        []byte // what blocks index into
	offset     int    // where src[0] sits in the whole text
	html       string
	sensitive  bool // may still change through link reference definitions
	defs       bool // holds link reference definitions
}

// NewDocument returns an empty Document. Options are those of Convert.
//
// With an extension (WithExtension: syntax highlighting), closed blocks are
// rendered with it and the live part without it: an open code block shows
// plain text, and a block is highlighted in the frame that closes it, once.
// The final frame then equals Convert with the extension; before it, the
// tail differs from Convert's only in its live blocks.
func NewDocument(opts ...Option) *Document {
	c := newConfig(opts)
	md := markdownFor(c)
	plain := md
	if c.ext != nil {
		c.ext = nil
		plain = markdownFor(c)
	}
	return &Document{md: md, plain: plain, repair: c.repair, fnPrefix: c.fnPrefix, labels: map[string]struct{}{}}
}

// Reset forgets the text and starts a new, empty document with the same
// options.
func (d *Document) Reset() {
	*d = Document{md: d.md, plain: d.plain, repair: d.repair, fnPrefix: d.fnPrefix, labels: map[string]struct{}{}}
}

// Update renders text, the whole answer so far. The text only grows: it must
// start with the text of the previous Update (use Reset for a new answer).
// The cost depends on the unsettled tail only, never on the settled part.
// After Finish, Update returns an empty final frame until Reset.
func (d *Document) Update(text string) Frame {
	if d.done {
		return Frame{Final: true}
	}
	if len(text) < d.pendingEnd {
		// The caller broke the contract (text shrank below what was already
		// closed); the settled HTML cannot be taken back, so keep showing
		// what we have.
		return Frame{Tail: d.lastTail, TailBlocks: d.lastBlks}
	}
	// Same text again (a frame with no new token): the part before
	// pendingEnd is the caller's promise, so only the live part is compared.
	if len(text) == len(d.last) && d.last != "" && text[d.pendingEnd:] == d.last[d.pendingEnd:] {
		return Frame{Tail: d.lastTail, TailBlocks: d.lastBlks}
	}
	d.last = text
	f := d.step(text)
	d.lastTail, d.lastBlks = f.Tail, f.TailBlocks
	return f
}

// Finish ends the stream: everything left settles, Frame.Tail is empty and
// Frame.Final is true. All Append so far then equal Convert of the text.
func (d *Document) Finish() Frame {
	if d.done {
		return Frame{Final: true}
	}
	// Everything after the settled part, pending blocks included, is parsed
	// once more with the final definitions.
	src := []byte(d.last[d.settled:])
	refs := d.refs[:d.settledRefs()]
	blocks := children(d.parse(src, nil, refs, nil))
	var f Frame
	var buf bytes.Buffer
	d.render(&buf, src, blocks)
	f.Append = buf.String()
	f.Settled = blocksOf(blocks, src, d.settled, nil)
	d.done = true
	d.settled, d.pendingEnd, d.pending, d.pendingTxt = len(d.last), len(d.last), nil, ""
	f.Final = true
	d.lastTail, d.lastBlks = "", nil
	return f
}

// settledRefs is how many of d.refs lie in the settled part.
func (d *Document) settledRefs() int {
	n := 0
	for _, u := range d.pending {
		if u.defs {
			n += countDefs(u.blocks)
		}
	}
	return len(d.refs) - n
}

// parse parses src (a part of the answer) with the link reference
// definitions that precede it (before) and follow it (after) known, as
// they are in a parse of the whole answer: the first definition of a label
// wins, in document order.
func (d *Document) parse(src []byte, st *parseState, before, after []parser.Reference) ast.Node {
	var pc parser.Context = config{fnPrefix: d.fnPrefix}.parseContext()
	for _, r := range before {
		pc.AddReference(r)
	}
	if st != nil {
		pc.Set(parseStateKey, st)
	}
	if len(after) > 0 {
		// Definitions after src must lose against src's own, which the
		// block phase finds; labels are only looked up in the inline
		// phase, after it, so a fallback lookup gives document order.
		late := make(map[string]parser.Reference, len(after))
		for _, r := range after {
			k := util.ToLinkReference(r.Label())
			if _, ok := late[k]; !ok {
				late[k] = r
			}
		}
		pc = lateContext{Context: pc, late: late}
	}
	return d.md.Parser().Parse(text.NewReader(src), parser.WithContext(pc))
}

// lateContext resolves a label from the definitions after the parsed text
// when the text itself (and what precedes it) does not define it.
type lateContext struct {
	parser.Context
	late map[string]parser.Reference
}

// Reference implements parser.Context.
func (c lateContext) Reference(label string) (parser.Reference, bool) {
	if r, ok := c.Context.Reference(label); ok {
		return r, ok
	}
	r, ok := c.late[label]
	return r, ok
}

func (d *Document) render(buf *bytes.Buffer, src []byte, nodes []ast.Node) {
	d.renderWith(d.md, buf, src, nodes)
}

// renderWith renders nodes with md's renderer: d.md for closed blocks,
// d.plain for the live part.
func (d *Document) renderWith(md goldmark.Markdown, buf *bytes.Buffer, src []byte, nodes []ast.Node) {
	r := md.Renderer()
	for _, n := range nodes {
		if t := d.live.table; t != nil && n == ast.Node(t) {
			// Rendered once this frame, with its kept rows.
			buf.Write(d.live.html)
			continue
		}
		// Rendering only fails when the writer fails; a Buffer never does.
		_ = r.Render(bufWriter{buf}, src, n)
	}
}

func children(root ast.Node) []ast.Node {
	var blocks []ast.Node
	for c := root.FirstChild(); c != nil; c = c.NextSibling() {
		blocks = append(blocks, c)
	}
	return blocks
}

// blocksOf lists blocks for a Frame, leaving out those that render nothing.
func blocksOf(nodes []ast.Node, src []byte, offset int, into []Block) []Block {
	for _, b := range nodes {
		if _, ok := b.(*ast.LinkReferenceDefinition); ok {
			continue
		}
		into = append(into, Block{Node: b, Source: src, Offset: offset})
	}
	return into
}

// step parses the live part, moves its closed blocks to pending, re-parses
// pending when the definitions changed, and settles the leading pending
// blocks that can no longer change.
func (d *Document) step(text string) Frame {
	P := d.pendingEnd
	src := []byte(text[P:])
	st := &parseState{complete: bytes.LastIndexByte(src, '\n') + 1, openFrom: len(src) + 1}
	blocks := d.parseLive(src, st)
	// The frame's table view ends with the frame (render looks at it).
	defer func() { d.live = liveTable{} }()

	spans := closedUnits(src, blocks, st)
	// Nothing at or after the first footnote mark leaves the live part
	// (footnotes: numbers and the list depend on the whole text).
	if fn := footnoteFrom(src, blocks); fn <= len(src) {
		k := 0
		for k < len(spans) && spans[k].end <= fn {
			k++
		}
		spans = spans[:k]
	}
	moved := 0
	newDefs := false
	old := len(d.pending)
	if len(spans) > 0 {
		var buf bytes.Buffer
		for _, sp := range spans {
			buf.Reset()
			d.render(&buf, src, blocks[sp.from:sp.to])
			u := unit{start: P + sp.start, end: P + sp.end, blocks: blocks[sp.from:sp.to], src: src, offset: P, html: buf.String()}
			for _, b := range u.blocks {
				if d.collectRefs(b) {
					u.defs = true
				}
			}
			newDefs = newDefs || u.defs
			d.pending = append(d.pending, u)
		}
		moved = spans[len(spans)-1].to
		d.pendingEnd = P + spans[len(spans)-1].end
	}

	// Definitions in the live part are not final (the open paragraph they
	// sit in may still lose them), but they resolve references right now.
	live := blocks[moved:]
	var liveRefs []parser.Reference
	for _, b := range live {
		liveRefs = appendDefs(liveRefs, b)
	}
	key := refsKey(liveRefs)
	reparsed := old > 0 && (key != d.liveKey || newDefs)
	if reparsed {
		d.reparsePending(text, old, liveRefs)
	}
	d.liveKey = key
	for i := old; i < len(d.pending); i++ {
		d.pending[i].sensitive = unitSensitive(&d.pending[i], d.labels)
	}

	// Settle the leading pending units that can no longer change.
	var f Frame
	var app strings.Builder
	k := 0
	for k < len(d.pending) && !d.pending[k].sensitive {
		u := &d.pending[k]
		app.WriteString(u.html)
		f.Settled = blocksOf(u.blocks, u.src, u.offset, f.Settled)
		d.settled = u.end
		k++
	}
	if k > 0 || len(spans) > 0 || reparsed {
		d.pending = append(d.pending[:0:0], d.pending[k:]...)
		var pt strings.Builder
		for _, u := range d.pending {
			pt.WriteString(u.html)
		}
		d.pendingTxt = pt.String()
	}
	if len(d.pending) == 0 {
		d.settled = d.pendingEnd
	}
	f.Append = app.String()

	// The tail: pending blocks, then the live part.
	cut := d.pendingEnd - P
	tsrc, offset := src, P
	if d.repair {
		if show, closer := repairCut(src, cut, live); show < len(src) || closer != "" {
			tsrc = append(src[cut:show:show], closer...)
			offset = P + cut
			live = children(d.parse(tsrc, nil, d.refs, nil))
		}
	}
	// One reused buffer: the tail is rebuilt every frame, and with pending
	// blocks it can be long.
	d.scratch.Reset()
	d.scratch.WriteString(d.pendingTxt)
	d.renderWith(d.plain, &d.scratch, tsrc, live)
	f.Tail = d.scratch.String()
	for _, u := range d.pending {
		f.TailBlocks = blocksOf(u.blocks, u.src, u.offset, f.TailBlocks)
	}
	f.TailBlocks = blocksOf(live, tsrc, offset, f.TailBlocks)
	if t := d.live.table; t != nil && moved == 0 && len(live) == 1 && live[0] == ast.Node(t) {
		d.keepRows(src, st.complete)
	} else {
		d.rows = tableRows{at: -1}
	}
	return f
}

// reparsePending parses the first n pending units again, with every
// definition known now, and recomputes their HTML and whether they may
// still change. Their text and structure are final; only references
// resolve differently.
func (d *Document) reparsePending(text string, n int, liveRefs []parser.Reference) {
	start, end := d.pending[0].start, d.pending[n-1].end
	src := []byte(text[start:end])
	// Definitions before the pending part, then the pending part's own
	// (found again by the parse), then those after it, in that order.
	before := d.refs[:d.settledRefs()]
	after := append(append([]parser.Reference(nil), d.refs[len(before):]...), liveRefs...)
	blocks := children(d.parse(src, nil, before, after))
	var buf bytes.Buffer
	i := 0
	for k := 0; k < n; k++ {
		u := &d.pending[k]
		j := i
		for j < len(blocks) && start+blockStart(blocks[j]) < u.end {
			j++
		}
		buf.Reset()
		d.render(&buf, src, blocks[i:j])
		u.blocks, u.src, u.offset, u.html = blocks[i:j], src, start, buf.String()
		u.sensitive = unitSensitive(u, d.labels)
		i = j
	}
}

func unitSensitive(u *unit, final map[string]struct{}) bool {
	for _, b := range u.blocks {
		if refSensitive(u.src, b, final) {
			return true
		}
	}
	return false
}

// refsKey identifies a list of definitions (labels, destinations, titles).
func refsKey(refs []parser.Reference) string {
	if len(refs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, r := range refs {
		b.Write(r.Label())
		b.WriteByte(0)
		b.Write(r.Destination())
		b.WriteByte(0)
		b.Write(r.Title())
		b.WriteByte(1)
	}
	return b.String()
}

func appendDefs(into []parser.Reference, n ast.Node) []parser.Reference {
	switch n.Kind() {
	case ast.KindLinkReferenceDefinition:
		def := n.(*ast.LinkReferenceDefinition)
		return append(into, parser.NewReference(bytes.Clone(def.Label), bytes.Clone(def.Destination), cloneOrNil(def.Title)))
	case extast.KindTable:
		// Rows and cells hold no definitions; a streaming table is walked
		// every frame.
		return into
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() == ast.TypeBlock {
			into = appendDefs(into, c)
		}
	}
	return into
}

func countDefs(nodes []ast.Node) int {
	n := 0
	for _, b := range nodes {
		n += len(appendDefs(nil, b))
	}
	return n
}

// collectRefs records the definitions in n (final: n is closed) and
// reports whether there were any.
func (d *Document) collectRefs(n ast.Node) bool {
	found := false
	for _, r := range appendDefs(nil, n) {
		found = true
		label := util.ToLinkReference(r.Label())
		if _, ok := d.labels[label]; ok {
			// A later duplicate never wins, but it is counted to keep
			// settledRefs right.
			d.refs = append(d.refs, r)
			continue
		}
		d.labels[label] = struct{}{}
		d.refs = append(d.refs, r)
	}
	return found
}

func cloneOrNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

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
