package render

import (
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/trickle-dev/trickle/internal/anyof"
)

// Marker is an inline citation marker for an answer's markdown: a
// bracketed Label ("1") placed at byte offset At of the text, linking to
// URL ("" for none).
type Marker struct {
	At    int
	Label string
	URL   string
}

// Mark returns text with each marker written in as markdown: a link whose
// text is the bracketed label ("[1]"), or the bracketed label alone when
// the marker has no URL or its URL cannot be a link destination. Rendered,
// the link follows the Policy as any link of the answer does (a
// javascript: URL shows as text). A marker inside code or raw HTML moves
// to the end of the code span, or is left out when it falls in a code or
// HTML block, where markdown is not read; one inside a link moves past
// it; one at the start of a line goes to the end of the line before; one
// past the text goes at its end. Markers at one place keep their order.
func Mark(src string, markers []Marker, opts ...Option) string {
	if len(markers) == 0 {
		return src
	}
	c, err := newConfig(opts)
	if err != nil {
		c, _ = newConfig(nil)
	}
	doc := markdownFor(c).Parser().Parse(text.NewReader([]byte(src)), parser.WithContext(c.parseContext()))
	spans, blocks := markerRanges(doc, src)
	ms := make([]Marker, 0, len(markers))
	for _, m := range markers {
		at := min(max(m.At, 0), len(src))
		for at > 0 && at < len(src) && !utf8.RuneStart(src[at]) {
			at-- // never inside a character
		}
		for at > 0 && (src[at-1] == '\n' || src[at-1] == '\r') {
			// The start of a line belongs to the text before it: a
			// marker there would open a block of its own, or break the
			// fence or bullet that starts the line.
			at--
		}
		if inside(blocks, at) {
			continue
		}
		for _, r := range spans {
			if r.Start < at && at < r.Stop {
				at = r.Stop
				for at < len(src) && src[at] == '`' {
					at++ // the rest of a longer closing run
				}
			}
		}
		m.At = at
		ms = append(ms, m)
	}
	sortMarkers(ms)
	var b strings.Builder
	b.Grow(len(src) + len(ms)*16)
	prev := 0
	for _, m := range ms {
		b.WriteString(src[prev:m.At])
		prev = m.At
		if m.At > 0 && (src[m.At-1] == '!' || src[m.At-1] == '\\') {
			// "![" would make an image, "\[" a bracket.
			b.WriteByte(' ')
		}
		// Brackets as character references: "\[" opens display math here.
		label := "&#91;" + escapeLabel(m.Label) + "&#93;"
		if m.URL == "" || anyof.Contains(m.URL, "<>\n\r") {
			b.WriteString(label)
			continue
		}
		b.WriteString("[" + label + "](<" + m.URL + ">)")
	}
	b.WriteString(src[prev:])
	return b.String()
}

// escapeLabel backslash-escapes what markdown would read in a label.
func escapeLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]()<>#+-.!|~&$^", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// markerRanges lists where a marker cannot go: code spans and raw HTML
// (spans: the marker moves past them) and the lines of code and HTML
// blocks (blocks: the marker is left out).
func markerRanges(doc ast.Node, src string) (spans, blocks []text.Segment) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			if l := v.Lines(); l.Len() > 0 {
				stop := l.At(l.Len() - 1).Stop
				if _, fenced := v.(*ast.FencedCodeBlock); fenced && stop < len(src) {
					// Through the closing fence's line: text after a
					// closing fence would reopen nothing but break it.
					if nl := strings.IndexByte(src[stop:], '\n'); nl >= 0 {
						stop += nl
					} else {
						stop = len(src)
					}
				}
				blocks = append(blocks, text.NewSegment(l.At(0).Start, stop))
			}
			if h, ok := v.(*ast.HTMLBlock); ok && h.HasClosure() {
				blocks = append(blocks, h.ClosureLine)
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			start, stop := -1, -1
			for c := v.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					if start < 0 {
						start = t.Segment.Start
					}
					stop = t.Segment.Stop
				}
			}
			if start >= 0 {
				spans = append(spans, text.NewSegment(start-1, stop+1))
			}
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			if r, ok := linkRange(v, src); ok {
				spans = append(spans, r)
			}
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			if v.Segments.Len() > 0 {
				spans = append(spans, text.NewSegment(v.Segments.At(0).Start, v.Segments.At(v.Segments.Len()-1).Stop))
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return spans, blocks
}

// inside reports whether at falls within one of rs (its end excluded,
// its start too: a marker just before a block belongs to the text before).
func inside(rs []text.Segment, at int) bool {
	for _, r := range rs {
		if r.Start < at && at <= r.Stop {
			return true
		}
	}
	return false
}

// linkRange is the source a link spans, "[" to the end of its
// destination or reference, found from its text's position; false when
// the link's text holds no text to find it by.
func linkRange(l *ast.Link, src string) (text.Segment, bool) {
	start, stop := -1, -1
	_ = ast.Walk(l, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := n.(*ast.Text); ok && entering {
			if start < 0 || t.Segment.Start < start {
				start = t.Segment.Start
			}
			stop = max(stop, t.Segment.Stop)
		}
		return ast.WalkContinue, nil
	})
	if start <= 0 {
		return text.Segment{}, false
	}
	end := strings.IndexByte(src[stop:], ']')
	if end < 0 {
		return text.Segment{}, false
	}
	end += stop + 1
	if end < len(src) {
		switch src[end] {
		case '(':
			depth, angle := 0, false
			for i := end; i < len(src); i++ {
				switch c := src[i]; {
				case c == '\\':
					i++
				case c == '<':
					angle = true
				case c == '>':
					angle = false
				case c == '(' && !angle:
					depth++
				case c == ')' && !angle:
					depth--
					if depth == 0 {
						return text.NewSegment(start-1, i+1), true
					}
				}
			}
		case '[':
			if e := strings.IndexByte(src[end:], ']'); e >= 0 {
				return text.NewSegment(start-1, end+e+1), true
			}
		}
	}
	return text.NewSegment(start-1, end), true
}

// sortMarkers orders ms by At, keeping the order of those at one place:
// sort.SliceStable's work, by insertion (the markers come nearly in
// order, one per citation), since its merge code would be linked into the
// widget for this alone (docs/notes/widget-size.md).
// TestSortMarkersIsSliceStable holds it to the original.
func sortMarkers(ms []Marker) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].At < ms[j-1].At; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}
