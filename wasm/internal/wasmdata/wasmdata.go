// Package wasmdata rewrites the data section of a .wasm the Go linker wrote,
// for its compressed size (issue 34, "Lighter").
//
// Go's linker leaves out every run of zero bytes in the program's data
// (strings, type data, tables): it writes up to 100,000 data segments,
// each with its own offset and length, which keeps the raw file small.
// The .wasm is served compressed, though, and those 100,000 headers,
// each with an offset unlike the others, are what compresses worst: the
// widget's brotli copy was about 100 KB larger with them than with the
// zeros written out, which cost brotli next to nothing. MergeSegments
// writes them out. Memory starts zeroed, so the module's memory after
// instantiation is the same byte for byte; nothing else in the file
// changes. It never touches the code.
package wasmdata

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// Segment is one active data segment of memory 0: Data written at Offset.
type Segment struct {
	Offset uint32
	Data   []byte
}

const (
	sectionData      = 11
	sectionDataCount = 12
)

// MaxGap is the longest run of zeros the widget's build writes out
// between two segments: longer ones (none in the widget today) stay gaps,
// so that a large zeroed table never costs a download.
const MaxGap = 4096

var magic = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// ErrUnsupported is a module whose data section holds a segment of a form
// the Go linker does not write (passive, another memory, an offset that
// is not a constant): the rewrite refuses it rather than guess.
var ErrUnsupported = errors.New("wasmdata: unsupported data segment")

// MergeSegments returns wasm with its data segments sorted by offset and
// every two whose gap is at most maxGap bytes merged into one, the gap
// written as zeros. A module without a data section comes back as it is.
func MergeSegments(wasm []byte, maxGap int) ([]byte, error) {
	start, end, segs, err := dataSection(wasm)
	if err != nil || start < 0 {
		return wasm, err
	}
	segs = slices.Clone(segs)
	slices.SortStableFunc(segs, func(a, b Segment) int { return int(int64(a.Offset) - int64(b.Offset)) })
	var merged []Segment
	for _, s := range segs {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			lastEnd := uint64(last.Offset) + uint64(len(last.Data))
			if uint64(s.Offset) < lastEnd {
				return wasm, fmt.Errorf("%w: segments overlap at offset %d", ErrUnsupported, s.Offset)
			}
			if gap := uint64(s.Offset) - lastEnd; gap <= uint64(maxGap) {
				grown := make([]byte, 0, len(last.Data)+int(gap)+len(s.Data))
				grown = append(grown, last.Data...)
				grown = append(grown, make([]byte, gap)...)
				last.Data = append(grown, s.Data...)
				continue
			}
		}
		merged = append(merged, s)
	}
	body := appendULEB(nil, uint64(len(merged)))
	for _, s := range merged {
		body = append(body, 0x00, 0x41) // active, memory 0; i32.const
		body = appendSLEB(body, int64(int32(s.Offset)))
		body = append(body, 0x0b) // end
		body = appendULEB(body, uint64(len(s.Data)))
		body = append(body, s.Data...)
	}
	out := make([]byte, 0, len(wasm)+len(body))
	out = append(out, wasm[:start]...)
	out = append(out, sectionData)
	out = appendULEB(out, uint64(len(body)))
	out = append(out, body...)
	out = append(out, wasm[end:]...)
	return setDataCount(out, len(merged))
}

// Segments returns the module's data segments in the order they are
// written, nil when it has no data section.
func Segments(wasm []byte) ([]Segment, error) {
	_, _, segs, err := dataSection(wasm)
	return segs, err
}

// Image is the memory the module's data segments initialise, from offset
// 0 to the end of the last one (memory starts zeroed).
func Image(wasm []byte) ([]byte, error) {
	segs, err := Segments(wasm)
	if err != nil {
		return nil, err
	}
	var img []byte
	for _, s := range segs {
		if end := int(s.Offset) + len(s.Data); end > len(img) {
			img = append(img, make([]byte, end-len(img))...)
		}
		copy(img[s.Offset:], s.Data)
	}
	return img, nil
}

// section is one section's id and where its content lies in the module.
type section struct {
	id               byte
	start, body, end int // start: the id byte; body: the content's first byte
}

func sections(wasm []byte) ([]section, error) {
	if !bytes.HasPrefix(wasm, magic) {
		return nil, errors.New("wasmdata: not a WebAssembly module (version 1)")
	}
	var out []section
	for i := len(magic); i < len(wasm); {
		id := wasm[i]
		size, n, err := readULEB(wasm[i+1:])
		if err != nil {
			return nil, fmt.Errorf("wasmdata: section at %d: %w", i, err)
		}
		body := i + 1 + n
		end := body + int(size)
		if size > uint64(len(wasm)) || end > len(wasm) {
			return nil, fmt.Errorf("wasmdata: section at %d runs past the end", i)
		}
		out = append(out, section{id, i, body, end})
		i = end
	}
	return out, nil
}

// dataSection finds the data section (start, end: the whole section; -1
// when there is none) and reads its segments.
func dataSection(wasm []byte) (start, end int, segs []Segment, err error) {
	secs, err := sections(wasm)
	if err != nil {
		return -1, -1, nil, err
	}
	for _, s := range secs {
		if s.id != sectionData {
			continue
		}
		b := wasm[s.body:s.end]
		count, n, err := readULEB(b)
		if err != nil {
			return -1, -1, nil, err
		}
		b = b[n:]
		for k := range count {
			flags, n, err := readULEB(b)
			if err != nil {
				return -1, -1, nil, err
			}
			if flags != 0 || len(b) < n+1 || b[n] != 0x41 {
				return -1, -1, nil, fmt.Errorf("%w: segment %d has flags %d", ErrUnsupported, k, flags)
			}
			b = b[n+1:]
			off, n, err := readSLEB(b)
			if err != nil {
				return -1, -1, nil, err
			}
			if len(b) < n+1 || b[n] != 0x0b || off < 0 || off > 1<<32-1 {
				return -1, -1, nil, fmt.Errorf("%w: segment %d's offset is not an i32.const", ErrUnsupported, k)
			}
			b = b[n+1:]
			size, n, err := readULEB(b)
			if err != nil {
				return -1, -1, nil, err
			}
			if size > uint64(len(b)-n) {
				return -1, -1, nil, fmt.Errorf("wasmdata: segment %d runs past its section", k)
			}
			segs = append(segs, Segment{Offset: uint32(off), Data: b[n : n+int(size)]})
			b = b[n+int(size):]
		}
		if len(b) != 0 {
			return -1, -1, nil, errors.New("wasmdata: bytes after the last data segment")
		}
		return s.start, s.end, segs, nil
	}
	return -1, -1, nil, nil
}

// setDataCount updates the data count section, where there is one (the
// bulk memory proposal's; Go's linker writes none today).
func setDataCount(wasm []byte, count int) ([]byte, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	for _, s := range secs {
		if s.id != sectionDataCount {
			continue
		}
		body := appendULEB(nil, uint64(count))
		out := append([]byte{}, wasm[:s.start]...)
		out = append(out, sectionDataCount)
		out = appendULEB(out, uint64(len(body)))
		out = append(out, body...)
		return append(out, wasm[s.end:]...), nil
	}
	return wasm, nil
}

var errLEB = errors.New("wasmdata: malformed LEB128 number")

func readULEB(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errLEB
}

func readSLEB(b []byte) (int64, int, error) {
	var v int64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= int64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			if shift := 7 * (i + 1); shift < 64 && b[i]&0x40 != 0 {
				v |= -1 << shift
			}
			return v, i + 1, nil
		}
	}
	return 0, 0, errLEB
}

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
