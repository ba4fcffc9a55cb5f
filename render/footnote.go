package render

import (
	"bytes"
	"sort"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Footnotes (goldmark's extension, PHP Markdown Extra syntax) are the one
// feature of the configuration where a block's HTML depends on text that
// comes after it, in three ways: a reference "[^n]" renders as a link only
// once its definition exists anywhere in the text; its number is the order
// of first references, in which the definitions' own content counts from
// where the first definition stands; and the list of notes at the end
// collects every definition, referenced or not yet.
//
// So Document keeps the footnote part of an answer live: no block at or
// after the first footnote mark ("[^" outside code) leaves the live part
// until Finish. Everything before it settles as usual (it holds no
// reference and no definition, so no later text can change it), the list
// of notes is rendered at the end of each tail, and it settles, with
// everything after the first mark, in the final frame. The cost: frames
// parse the text from the first footnote mark on. Answers put their notes
// at the end and their first reference early, so an answer that uses
// footnotes streams most of its text as the live tail; one that does not
// pays nothing. A "[^" inside code (a regular expression's "[^a-z]") is no
// footnote mark.

var footnoteMark = []byte("[^")

// footnoteFrom returns the position in src of the first "[^" that is not
// inside code (a code block, a code span, raw HTML), or len(src)+1 when
// there is none. blocks are src's top-level blocks as parsed.
func footnoteFrom(src []byte, blocks []ast.Node) int {
	first := bytes.Index(src, footnoteMark)
	if first < 0 {
		return len(src) + 1
	}
	code := codeRanges(blocks)
	for p := first; p >= 0; {
		if !inRanges(code, p) {
			return p
		}
		next := bytes.Index(src[p+1:], footnoteMark)
		if next < 0 {
			break
		}
		p += 1 + next
	}
	return len(src) + 1
}

// codeRanges lists, sorted, the source ranges where markdown syntax is not
// read: the lines of code blocks and HTML blocks, code spans, raw HTML.
func codeRanges(blocks []ast.Node) []text.Segment {
	var rs []text.Segment
	lines := func(l *text.Segments) {
		for i := 0; i < l.Len(); i++ {
			rs = append(rs, l.At(i))
		}
	}
	for _, b := range blocks {
		if _, ok := b.(*extast.FootnoteList); ok {
			continue // its footnotes start with a mark anyway
		}
		_ = ast.Walk(b, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering {
				return ast.WalkContinue, nil
			}
			switch v := n.(type) {
			case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
				lines(v.Lines())
				if h, ok := v.(*ast.HTMLBlock); ok && h.HasClosure() {
					rs = append(rs, h.ClosureLine)
				}
				return ast.WalkSkipChildren, nil
			case *ast.CodeSpan:
				for c := v.FirstChild(); c != nil; c = c.NextSibling() {
					if t, ok := c.(*ast.Text); ok {
						rs = append(rs, t.Segment)
					}
				}
				return ast.WalkSkipChildren, nil
			case *ast.RawHTML:
				lines(v.Segments)
				return ast.WalkSkipChildren, nil
			}
			return ast.WalkContinue, nil
		})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	return rs
}

// inRanges reports whether p+1 (the "^" of a mark at p) lies in one of the
// sorted ranges: a mark is code when its "^" is.
func inRanges(rs []text.Segment, p int) bool {
	q := p + 1
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Stop > q })
	for ; i < len(rs) && rs[i].Start <= q; i++ {
		if q < rs[i].Stop {
			return true
		}
	}
	return false
}
