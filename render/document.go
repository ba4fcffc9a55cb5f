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

// NewDocument returns an empty Document. Options are those of Convert; an
// option value that cannot work is an *OptionError (matching
// ErrBadOption) naming it.
//
// With an extension (WithExtension: syntax highlighting), closed blocks are
// rendered with it and the live part without it: an open code block shows
// plain text, and a block is highlighted in the frame that closes it, once.
// The final frame then equals Convert with the extension; before it, the
// tail differs from Convert's only in its live blocks.
func NewDocument(opts ...Option) (*Document, error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	md := markdownFor(c)
	plain := md
	if c.ext != nil {
		c.ext = nil
		plain = markdownFor(c)
	}
	return &Document{md: md, plain: plain, repair: c.repair, fnPrefix: c.fnPrefix, labels: map[string]struct{}{}}, nil
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
