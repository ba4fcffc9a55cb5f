package render

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
)

// A table streams one row at a time, and while it streams it is the live
// block: without help every frame would parse and render the whole table
// again, a cost that grows with every row. tableRows keeps what is final
// instead: the body rows whose lines are complete.
//
// Why a complete row is final: a GFM table is a paragraph cut up by
// goldmark's table transformer when the paragraph closes. Its header and
// delimiter rows fix the columns and alignments, and every later line of
// the paragraph becomes one row, parsed on its own (cells are inline-parsed
// separately, so nothing crosses from one row to another). Whether a line
// continues the paragraph depends only on that line, given an open
// paragraph. So for a table at the start of the live part (its header the
// first line of its paragraph, after a cut where nothing is open), the
// lines after its kept rows parse the same whether the kept rows are there
// or not — as long as some paragraph line stands in for them.
//
// That stand-in is the filler: the kept rows' bytes replaced by one line of
// "|" of the same length, so that every other byte keeps its position and
// the parse of the rest is the parse of the whole (positions, and so the
// AST handed to a11y and the settling decisions, are those of the real
// text). The filler is a row of empty cells, cheap to parse and render;
// its HTML is replaced by the kept rows' HTML, and its node by the kept
// row nodes. Link reference definitions cannot change a kept row meanwhile:
// the rows hold only while the live part starts at the same place (so the
// definitions before it are the same), and while the table is open no
// definition can follow it. The frame that closes the table uses the kept
// rows too unless its text after the table holds a definition (found by
// the same parse, it applies to the rows); from then on the table is an
// ordinary closed block (pending or settled, re-parsed whole when
// definitions change, as every block is).
type tableRows struct {
	at     int // d.pendingEnd when the rows were kept; -1: nothing kept
	refs   int // len(d.refs) then
	header int // the header row's position in the live part
	body   int // start of the first kept row's line, in the live part
	end    int // end of the last kept row's line (after its newline)
	// prefix is the table's HTML up to its first body row ("<table>",
	// the header, "<tbody>"): the header and delimiter rows are complete
	// lines, so it is final too.
	prefix []byte
	html   []byte
	nodes  []ast.Node
}

// Frame-local state of the table at the start of the live part.
type liveTable struct {
	table  *extast.Table // blocks[0] of this frame's parse, when a table
	html   []byte        // its HTML, kept rows included
	filler ast.Node      // the stand-in row, replaced in the AST by the kept rows
	hit    bool          // the parse used the kept rows
}

// usable reports whether kept rows apply to the live part at P.
func (k *tableRows) usable(P, refs int) bool {
	return k.at == P && k.refs == refs && len(k.nodes) > 0
}

// parseLive parses the live part src. With kept rows it parses the text
// with the filler in their place, and falls back to the whole text when
// that parse does not show the same table.
func (d *Document) parseLive(src []byte, st *parseState) []ast.Node {
	d.live = liveTable{}
	k := &d.rows
	// Footnotes make a row's HTML depend on what follows the table (a
	// definition, the numbering): no kept rows then.
	if !d.repair && !d.noRowCache && k.usable(d.pendingEnd, len(d.refs)) && k.end <= len(src) && !bytes.Contains(src, footnoteMark) {
		psrc := make([]byte, len(src))
		copy(psrc, src[:k.body])
		for i := k.body; i < k.end-1; i++ {
			psrc[i] = '|'
		}
		psrc[k.end-1] = '\n'
		copy(psrc[k.end:], src[k.end:])
		pst := *st
		blocks := children(d.parse(psrc, &pst, d.refs, nil))
		if filler := k.fillerOf(src, blocks); filler != nil && !definesAny(blocks[1:]) {
			*st = pst
			d.live = liveTable{table: blocks[0].(*extast.Table), filler: filler, hit: true}
			d.rowHits++
			d.renderLiveTable(src)
			return blocks
		}
	}
	*k = tableRows{at: -1}
	blocks := children(d.parse(src, st, d.refs, nil))
	if len(blocks) > 0 && !d.repair {
		if t, ok := blocks[0].(*extast.Table); ok {
			d.live = liveTable{table: t}
			d.renderLiveTable(src)
		}
	}
	return blocks
}

// definesAny reports whether blocks hold a link reference definition.
// Definitions found by a parse resolve references anywhere in it: in the
// frame where the table closes, one right after it ("[r]: /u") turns the
// "[r]" of a kept row into a link, which the kept HTML — rendered while
// the table was open and nothing could follow it — does not show.
func definesAny(blocks []ast.Node) bool {
	for _, b := range blocks {
		if len(appendDefs(nil, b)) > 0 {
			return true
		}
	}
	return false
}

// fillerOf returns the filler row when blocks start with the kept rows'
// table: the same header, the filler as its first body row, and the rest
// of the rows right after it. Anything else (the text after the kept rows
// made the paragraph something else) returns nil.
func (k *tableRows) fillerOf(src []byte, blocks []ast.Node) ast.Node {
	if len(blocks) == 0 {
		return nil
	}
	t, ok := blocks[0].(*extast.Table)
	if !ok {
		return nil
	}
	h, ok := t.FirstChild().(*extast.TableHeader)
	if !ok || h.Pos() != k.header {
		return nil
	}
	f, ok := h.NextSibling().(*extast.TableRow)
	if !ok || f.Pos() < 0 || lineStart(src, f.Pos()) != k.body {
		return nil
	}
	if n := f.NextSibling(); n != nil && (n.Pos() < 0 || lineStart(src, n.Pos()) != k.end) {
		return nil
	}
	return f
}

var (
	tbodyOpen = []byte("<tbody>\n")
	rowClose  = []byte("</tr>\n")
)

// renderLiveTable renders the table at the start of the live part once
// for the frame (Document.render writes this HTML for it). With a filler,
// only the rows after it are rendered: the table's HTML is the kept
// prefix and rows, then those rows (goldmark's row renderer closes the
// body after the table's last row), then the table's end; the kept row
// nodes take the filler's place in the AST.
func (d *Document) renderLiveTable(src []byte) {
	lt := &d.live
	var buf bytes.Buffer
	w := bufWriter{&buf}
	r := d.md.Renderer()
	if lt.filler == nil {
		_ = r.Render(w, src, lt.table)
		lt.html = buf.Bytes()
		return
	}
	k := &d.rows
	buf.Grow(len(k.prefix) + len(k.html) + 256)
	buf.Write(k.prefix)
	buf.Write(k.html)
	if lt.filler.NextSibling() == nil {
		buf.WriteString("</tbody>\n")
	}
	for row := lt.filler.NextSibling(); row != nil; row = row.NextSibling() {
		_ = r.Render(w, src, row)
	}
	buf.WriteString("</table>\n")
	lt.html = buf.Bytes()
	t := lt.table
	for _, row := range k.nodes {
		t.InsertBefore(t, lt.filler, row)
	}
	t.RemoveChild(t, lt.filler)
}

// bufWriter lets goldmark's renderer write straight into a bytes.Buffer:
// it wraps any writer that lacks these methods in a new 4 KiB bufio.Writer
// on every call, and Document renders block by block, frame after frame.
type bufWriter struct{ *bytes.Buffer }

// Buffered implements util.BufWriter: nothing is held back.
func (bufWriter) Buffered() int { return 0 }

// Flush implements util.BufWriter: everything is in the buffer already.
func (bufWriter) Flush() error { return nil }

// keepRows records the body rows of the live table whose lines are
// complete, once the frame has shown the table still open as the only
// block of the live part.
func (d *Document) keepRows(src []byte, complete int) {
	lt := &d.live
	t := lt.table
	h, ok := t.FirstChild().(*extast.TableHeader)
	if !ok || h.Pos() < 0 || !tableStartsClean(src, h.Pos()) {
		d.rows = tableRows{at: -1}
		return
	}
	k := &d.rows
	if !lt.hit {
		*k = tableRows{at: d.pendingEnd, refs: len(d.refs), header: h.Pos(), body: -1}
	}
	i := bytes.Index(lt.html, tbodyOpen)
	if i < 0 {
		return // no body row yet
	}
	if !lt.hit {
		// goldmark escapes all text and omits raw HTML: the first
		// "<tbody>\n" of the table's HTML is its own markup.
		k.prefix = append([]byte(nil), lt.html[:i+len(tbodyOpen)]...)
	}
	pos := i + len(tbodyOpen) + len(k.html)
	row := h.NextSibling()
	for range k.nodes {
		row = row.NextSibling()
	}
	for ; row != nil; row = row.NextSibling() {
		if row.Pos() < 0 {
			break
		}
		e := lineEnd(src, row.Pos())
		if e < 0 || e+1 > complete {
			break // the last line: not final
		}
		j := bytes.Index(lt.html[pos:], rowClose)
		start := lineStart(src, row.Pos())
		if j < 0 || (len(k.nodes) > 0 && start != k.end) {
			// Not the shape the argument above rests on: keep nothing.
			d.rows = tableRows{at: -1}
			return
		}
		if len(k.nodes) == 0 {
			k.body = start
		}
		k.html = append(k.html, lt.html[pos:pos+j+len(rowClose)]...)
		k.nodes = append(k.nodes, row)
		k.end = e + 1
		pos += j + len(rowClose)
	}
}

// tableStartsClean reports whether a table whose header row is at p starts
// its paragraph on a plain line: not one that could open a link reference
// definition ("[x]: /u 'title…" can take later lines into its title), so
// that the header and delimiter rows can only ever stay what they are.
func tableStartsClean(src []byte, p int) bool {
	s := lineStart(src, p)
	for s < len(src) && (src[s] == ' ' || src[s] == '\t') {
		s++
	}
	return s < len(src) && src[s] != '['
}
