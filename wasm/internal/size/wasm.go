package main

import (
	"bytes"
	"errors"
	"fmt"
)

// module is what the size report reads of a WebAssembly binary: each
// section's size, each defined function's code size and, from the name
// section, each function's name.
type module struct {
	sections map[string]int // section name ("code", "data", "custom:name", …) → payload bytes
	imported int            // imported functions, which come first in the function index space
	code     []int          // the body size of each defined function, in order
	names    map[int]string // function index → name (the name section's function names)
}

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory", "global", "export", "start", "elem", "code", "data", "datacount", "tag"}

// errTruncated is the error for a binary that ends inside a value.
var errTruncated = errors.New("size: the .wasm ends in the middle of a value")

// reader reads a WebAssembly binary's values (the binary format's
// LEB128 integers, byte vectors and names).
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) byte() byte {
	if r.err != nil || r.off >= len(r.b) {
		r.err = errTruncated
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// u32 reads an unsigned LEB128 integer of at most 32 bits.
func (r *reader) u32() int {
	var v uint64
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return int(v)
		}
	}
	if r.err == nil {
		r.err = errors.New("size: a LEB128 integer longer than 5 bytes")
	}
	return 0
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		r.err = errTruncated
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) name() string { return string(r.bytes(r.u32())) }

// limits skips a table's or memory's limits.
func (r *reader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

// parse reads the sections of a WebAssembly binary (version 1).
func parse(b []byte) (*module, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], []byte("\x00asm")) || !bytes.Equal(b[4:8], []byte{1, 0, 0, 0}) {
		return nil, errors.New("size: not a WebAssembly binary (version 1)")
	}
	m := &module{sections: map[string]int{}, names: map[int]string{}}
	r := &reader{b: b, off: 8}
	for r.off < len(b) && r.err == nil {
		id := r.byte()
		payload := r.bytes(r.u32())
		if r.err != nil {
			break
		}
		name := fmt.Sprintf("section %d", id)
		if int(id) < len(sectionNames) {
			name = sectionNames[id]
		}
		s := &reader{b: payload}
		switch id {
		case 0:
			custom := s.name()
			name = "custom:" + custom
			if custom == "name" && s.err == nil {
				readNames(s, m)
			}
		case 2:
			readImports(s, m)
		case 10:
			for n := s.u32(); n > 0 && s.err == nil; n-- {
				size := s.u32()
				s.bytes(size)
				m.code = append(m.code, size)
			}
		}
		if s.err != nil {
			return nil, fmt.Errorf("size: in the %s section: %w", name, s.err)
		}
		m.sections[name] += len(payload)
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

func readImports(s *reader, m *module) {
	for n := s.u32(); n > 0 && s.err == nil; n-- {
		s.name()
		s.name()
		switch kind := s.byte(); kind {
		case 0: // a function: its type index
			s.u32()
			m.imported++
		case 1: // a table: reference type, limits
			s.byte()
			s.limits()
		case 2: // a memory
			s.limits()
		case 3: // a global: value type, mutability
			s.byte()
			s.byte()
		case 4: // a tag
			s.byte()
			s.u32()
		default:
			s.err = fmt.Errorf("an import of unknown kind %d", kind)
		}
	}
}

// readNames reads the name section's function names (subsection 1) and
// skips the others.
func readNames(s *reader, m *module) {
	for s.off < len(s.b) && s.err == nil {
		id := s.byte()
		sub := &reader{b: s.bytes(s.u32())}
		if s.err != nil || id != 1 {
			continue
		}
		for n := sub.u32(); n > 0 && sub.err == nil; n-- {
			idx := sub.u32()
			m.names[idx] = sub.name()
		}
		if sub.err != nil {
			s.err = sub.err
		}
	}
}
