package render

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"

	"github.com/trickle-dev/trickle/internal/stdlite"
)

// repairCut decides how much of the unsettled text src[cut:] to show when
// repair is on, so that the screen does not show what the next characters
// would take back. It returns the end of the shown text (len(src) when
// nothing is held back) and markers to add after it to close an inline
// code span or emphasis left open on the last line. Only the end of the
// text is ever changed, so held text shows up as soon as it is
// unambiguous, and Finish shows all.
func repairCut(src []byte, cut int, rest []ast.Node) (show int, closer string) {
	show = len(src)
	complete := bytes.LastIndexByte(src, '\n') + 1
	if complete < cut {
		complete = cut
	}
	var last ast.Node
	if len(rest) > 0 {
		last = rest[len(rest)-1]
	}

	// A table header line (or header and half a delimiter row) is a
	// paragraph with raw pipes until the delimiter row completes.
	if p, ok := last.(*ast.Paragraph); ok {
		if start := blockStart(p); start >= 0 {
			if run := pipeRunStart(src, lineStart(src, start)); run >= 0 {
				show = run
			}
		}
	}

	if show > complete {
		line := src[complete:show]
		switch {
		case markerOnly(line):
			// "-" or "=" may become a setext underline, "---" a rule, "- x"
			// a list item; "``" a fence.
			show = complete
		case !inCode(last):
			if i := halfLink(line); i >= 0 {
				show = complete + i
			}
		}
	}
	if show < cut {
		show = cut
	}
	if show > complete && !inCode(last) {
		closer = closers(src[complete:show])
	}
	return show, closer
}

// closers returns what closes the inline code span, strong emphasis or
// strikethrough left open at the end of an unfinished line, so that
// "**bold te" shows in bold rather than with its asterisks. Single "*" and
// "_" are left alone: they are too often bullets, products or names.
func closers(line []byte) string {
	trimmed := stdlite.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || bytes.HasPrefix(trimmed, []byte("```")) || bytes.HasPrefix(trimmed, []byte("~~~")) {
		// Indented code or a fence line: nothing inline to close.
		return ""
	}
	var open []string // stack of open markers, innermost last
	inCodeSpan := false
	for i := 0; i < len(line); {
		c := line[i]
		if c == '\\' && !inCodeSpan {
			i += 2
			continue
		}
		if c == '`' {
			j := i
			for j < len(line) && line[j] == '`' {
				j++
			}
			if j-i == 1 {
				inCodeSpan = !inCodeSpan
			} else if !inCodeSpan {
				// Longer backtick strings: leave the line as it is.
				return ""
			}
			i = j
			continue
		}
		if inCodeSpan {
			i++
			continue
		}
		if (c == '*' || c == '~') && i+1 < len(line) && line[i+1] == c {
			m := string([]byte{c, c})
			if len(open) > 0 && open[len(open)-1] == m {
				open = open[:len(open)-1]
			} else if i+2 < len(line) && line[i+2] != ' ' && line[i+2] != c {
				open = append(open, m)
			}
			i += 2
			continue
		}
		i++
	}
	var b strings.Builder
	if inCodeSpan {
		b.WriteByte('`')
		// Inside a code span nothing else is markup.
		return b.String()
	}
	last := line[len(line)-1]
	if len(open) > 0 && (last == ' ' || last == '\t') {
		// "**bold **" cannot close on a space; wait for the next word.
		return ""
	}
	for i := len(open) - 1; i >= 0; i-- {
		b.WriteString(open[i])
	}
	return b.String()
}

// pipeRunStart returns the start of the trailing run of lines of src (from
// the line starting at from) that begin with "|", or -1 when the last
// non-empty line does not.
func pipeRunStart(src []byte, from int) int {
	end := len(src)
	if end > from && src[end-1] == '\n' {
		end-- // the empty last line after a final newline
	}
	run := -1
	for end > from {
		ls := bytes.LastIndexByte(src[from:end], '\n') + 1 + from
		if end == len(src) && ls == end {
			break
		}
		line := stdlite.TrimLeft(src[ls:end], " ")
		if len(src[ls:end])-len(line) > 3 || len(line) == 0 || line[0] != '|' {
			break
		}
		run = ls
		end = ls - 1
		if end < from {
			break
		}
	}
	return run
}

// markerOnly reports whether an unfinished line holds only block markers
// whose meaning depends on what comes next.
func markerOnly(line []byte) bool {
	seen := false
	for _, c := range line {
		switch c {
		case '-', '=', '*', '_', '+', '#', '`', '~':
			seen = true
		case ' ', '\t':
		default:
			return false
		}
	}
	return seen
}

// inCode reports whether the innermost last block of b is code or HTML,
// where brackets are literal.
func inCode(b ast.Node) bool {
	for b != nil {
		switch b.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			return true
		}
		c := b.LastChild()
		if c == nil || c.Type() != ast.TypeBlock {
			return false
		}
		b = c
	}
	return false
}

// halfLink finds a link or image being typed at the end of an unfinished
// line: "[text", "[text]", "[text](http" or the same with "!". It returns
// where to cut (the "[" or "!"), or -1.
func halfLink(line []byte) int {
	i := bytes.LastIndexByte(line, '[')
	if i < 0 {
		return -1
	}
	// A "[" inside a code span on this line is literal.
	if bytes.Count(line[:i], []byte("`"))%2 == 1 {
		return -1
	}
	rest := line[i+1:]
	j := bytes.IndexByte(rest, ']')
	if j >= 0 {
		after := rest[j+1:]
		if len(after) > 0 && (after[0] != '(' || bytes.IndexByte(after, ')') >= 0) {
			return -1
		}
	}
	if i > 0 && line[i-1] == '!' {
		i--
	}
	return i
}
