// Math: formulas kept exact through the markdown. Between $…$, \(…\)
// (inline) and $$…$$, \[…\] (display) nothing is markdown: no backslash
// escape, emphasis or entity touches the TeX, and the formula renders as
// one element whose text is the TeX, for the page to convert:
//
//	<span data-trickle-math="inline">x^2</span>
//	<span data-trickle-math="display">\sum_i a_i</span>
//
// A display formula is a span too: it may sit inside a paragraph, list
// item or table cell, where a block element cannot (the page turns it into
// <math display="block">). A formula is an inline node of its paragraph, so
// block structure, and therefore settling, is the same with and without it.

package render

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// KindMath is the NodeKind of Math.
var KindMath = ast.NewNodeKind("Math")

// Math is a formula: the TeX between its delimiters, exactly as written
// (across the lines of its paragraph for $$, \( and \[; on one line for $).
type Math struct {
	ast.BaseInline
	// Display is true for $$…$$ and \[…\], false for $…$ and \(…\).
	Display bool
	// Open is the opening delimiter: "$", "$$", `\(` or `\[`.
	Open string
	// TeX holds the formula's source, one segment per line.
	TeX *text.Segments
}

// Kind implements ast.Node.
func (n *Math) Kind() ast.NodeKind { return KindMath }

// Value is the formula's TeX.
func (n *Math) Value(source []byte) []byte {
	var b []byte
	for i := 0; i < n.TeX.Len(); i++ {
		b = append(b, seg(n.TeX, i, source)...)
	}
	return b
}

// Dump implements ast.Node.
func (n *Math) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{
		"Display": strconv.FormatBool(n.Display),
		"TeX":     string(n.Value(source)),
	}, nil)
}

// mathParser finds formulas. Its rule for "$" keeps prices text: "$750
// and $300", "costs $5", "$5-$10" are not math. A single "$" opens a
// formula only when a non-space follows it; the formula is closed by the
// next "$" on the same line (a TeX escape "\$" inside does not count),
// and only if that "$" follows a non-space and is not followed by a digit;
// otherwise the first "$" is text. "\$" in markdown stays a literal
// dollar; "\\(" is an escaped backslash and a parenthesis, not math.
type mathParser struct{}

// Trigger implements parser.InlineParser.
func (mathParser) Trigger() []byte { return []byte{'$', '\\'} }

// Parse implements parser.InlineParser.
func (mathParser) Parse(_ ast.Node, block text.Reader, _ parser.Context) ast.Node {
	line, _ := block.PeekLine()
	var open, closer string
	switch {
	case len(line) < 2:
		return nil
	case line[0] == '\\' && line[1] == '(':
		open, closer = `\(`, `\)`
	case line[0] == '\\' && line[1] == '[':
		open, closer = `\[`, `\]`
	case line[0] == '$' && line[1] == '$':
		open, closer = "$$", "$$"
	case line[0] == '$':
		return singleDollar(block, line)
	default:
		return nil
	}
	_, start := block.PeekLine()
	l, pos := block.Position()
	block.Advance(len(open))
	segs := text.NewSegments()
	empty := true
	for {
		line, seg := block.PeekLine()
		if line == nil {
			if open == "$$" {
				// Its two dollars are text: the second must not open a
				// formula of its own ("$$x$" is not "$" and $x$).
				block.SetPosition(l, pos)
				block.Advance(2)
				return ast.NewTextSegment(start.WithStop(start.Start + 2))
			}
			return nil
		}
		i := findCloser(line, closer)
		if i < 0 {
			segs.Append(seg)
			empty = empty && util.IsBlank(line)
			block.AdvanceLine()
			continue
		}
		if i > 0 {
			segs.Append(seg.WithStop(seg.Start + i))
			empty = empty && util.IsBlank(line[:i])
		}
		block.Advance(i + len(closer))
		break
	}
	if empty {
		return nil
	}
	return &Math{Display: open == "$$" || open == `\[`, Open: open, TeX: segs}
}

// singleDollar parses $…$ on one line, by the rule on mathParser.
func singleDollar(block text.Reader, line []byte) ast.Node {
	if isMathSpace(line[1]) {
		return nil
	}
	i := 1 + findCloser(line[1:], "$")
	if i < 1 || isMathSpace(line[i-1]) || i+1 < len(line) && '0' <= line[i+1] && line[i+1] <= '9' {
		return nil
	}
	_, seg := block.PeekLine()
	segs := text.NewSegments()
	segs.Append(text.NewSegment(seg.Start+1, seg.Start+i))
	block.Advance(i + 1)
	return &Math{Open: "$", TeX: segs}
}

func isMathSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// findCloser is the index of closer in line, skipping TeX escapes (a
// backslash and the byte after it: "\$" and "\\)" close nothing), or -1.
func findCloser(line []byte, closer string) int {
	for i := 0; i < len(line); i++ {
		if strings.HasPrefix(string(line[i:]), closer) {
			return i
		}
		if line[i] == '\\' {
			i++
		}
	}
	return -1
}

// mathRenderer writes a formula as one element with its TeX as escaped
// text (see the file comment).
type mathRenderer struct{}

// RegisterFuncs implements renderer.NodeRenderer.
func (mathRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(KindMath, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		m := n.(*Math)
		if m.Display {
			_, _ = w.WriteString(`<span data-trickle-math="display">`)
		} else {
			_, _ = w.WriteString(`<span data-trickle-math="inline">`)
		}
		for i := 0; i < m.TeX.Len(); i++ {
			_, _ = w.Write(util.EscapeHTML(seg(m.TeX, i, source)))
		}
		_, _ = w.WriteString("</span>")
		return ast.WalkSkipChildren, nil
	})
}

func seg(s *text.Segments, i int, source []byte) []byte {
	sg := s.At(i)
	return sg.Value(source)
}
