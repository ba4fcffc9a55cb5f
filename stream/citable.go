package stream

import "strings"

// maxCitable is how much of an answer's text (or of one text part) a
// decoder keeps to place citations that the producer gives as character
// offsets: past it a citation is placed where the text is (CiteHere), so
// that a decoder's memory stays bounded however long the answer (the
// relay reads every upstream event with one; the answer keeps the text
// once, in the Answer).
const maxCitable = 1 << 20

// citable is the text a decoder keeps to place citations, up to
// maxCitable bytes.
type citable struct {
	b    strings.Builder
	full bool // text went past maxCitable: no longer kept
}

// add appends s, unless the text is past maxCitable.
func (c *citable) add(s string) {
	if c.full {
		return
	}
	if c.b.Len()+len(s) > maxCitable {
		c.full = true
		c.b = strings.Builder{}
		return
	}
	c.b.WriteString(s)
}

// at is the byte offset of the n-th unit of the text, as offset counts
// them (byteOffset: code points; utf16Offset: UTF-16 code units), or
// CiteHere once the text went past maxCitable.
func (c *citable) at(n int, offset func(string, int) int) int {
	if c.full {
		return CiteHere
	}
	return offset(c.b.String(), n)
}
