package relite

import (
	"io"
	"unicode/utf8"
)

// A Pike VM, as the standard library's: every thread advances in lockstep
// over one rune at a time, in priority order, so the first thread to
// match is the leftmost-first match and the input is read once, one rune
// ahead at most.

const endOfText rune = -1

// input gives the rune at a position and its width; endOfText, 0 past
// the end.
type input interface {
	step(pos int) (rune, int)
}

type bytesInput []byte

func (b bytesInput) step(pos int) (rune, int) {
	if pos >= len(b) {
		return endOfText, 0
	}
	if c := b[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRune(b[pos:])
}

type stringInput string

func (s stringInput) step(pos int) (rune, int) {
	if pos >= len(s) {
		return endOfText, 0
	}
	if c := s[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(string(s[pos:]))
}

// readerInput reads each rune once: the machine only ever asks for the
// position after the last one read.
type readerInput struct{ r io.RuneReader }

func (in readerInput) step(int) (rune, int) {
	r, w, err := in.r.ReadRune()
	if err != nil {
		return endOfText, 0
	}
	return r, w
}

type thread struct {
	pc  int
	cap []int
}

// queue holds the threads of one position, each pc once, in priority
// order (a sparse set).
type queue struct {
	sparse []int
	dense  []entry
}

type entry struct {
	pc int
	t  *thread // nil for a pc only passed through (split, save)
}

func newQueue(n int) *queue {
	return &queue{sparse: make([]int, n), dense: make([]entry, 0, n)}
}

func (q *queue) contains(pc int) bool {
	i := q.sparse[pc]
	return i < len(q.dense) && q.dense[i].pc == pc
}

type machine struct {
	p        *prog
	matched  bool
	matchcap []int
	pool     []*thread // threads free for reuse, each with ncap slots
	ncap     int
	q0, q1   *queue
}

func (m *machine) alloc(pc int) *thread {
	var t *thread
	if n := len(m.pool); n > 0 {
		t = m.pool[n-1]
		m.pool = m.pool[:n-1]
	} else {
		t = &thread{cap: make([]int, m.ncap)}
	}
	t.pc = pc
	return t
}

func (m *machine) free(t *thread) { m.pool = append(m.pool, t) }

// match runs the program over in; ncap slots of submatch positions are
// wanted (0: only whether it matches). It returns the positions, or nil.
func (p *prog) match(in input, ncap int) []int { return p.matchFrom(in, 0, ncap) }

// matchFrom is match for a match starting at pos or after (the text
// still begins at 0).
func (p *prog) matchFrom(in input, pos, ncap int) []int {
	m := p.get(ncap)
	defer p.put(m)
	runq, nextq := m.q0, m.q1
	r, width := in.step(pos)
	r1, width1 := endOfText, 0
	if r != endOfText {
		r1, width1 = in.step(pos + width)
	}
	for {
		if len(runq.dense) == 0 && (m.matched || p.anchored && pos != 0) {
			break
		}
		if !m.matched && (pos == 0 || !p.anchored) {
			if ncap > 0 {
				m.matchcap[0] = pos
			}
			m.add(runq, p.start, pos, r, m.matchcap, nil)
		}
		m.step(runq, nextq, pos+width, r, r1)
		if width == 0 {
			break
		}
		if ncap == 0 && m.matched {
			break
		}
		pos += width
		r, width = r1, width1
		if r != endOfText {
			r1, width1 = in.step(pos + width)
		}
		runq, nextq = nextq, runq
	}
	for _, d := range nextq.dense {
		if d.t != nil {
			m.free(d.t)
		}
	}
	runq.dense, nextq.dense = runq.dense[:0], nextq.dense[:0]
	if !m.matched {
		return nil
	}
	out := make([]int, len(m.matchcap)) // not nil when empty: a match
	copy(out, m.matchcap)
	return out
}

// get takes a machine for ncap slots from the program's pool: a match
// then allocates only its result (goldmark matches at every HTML-like
// line and every link candidate).
func (p *prog) get(ncap int) *machine {
	m, _ := p.machines.Get().(*machine)
	if m == nil || m.ncap != ncap {
		m = &machine{p: p, ncap: ncap, matchcap: make([]int, ncap), q0: newQueue(len(p.insts)), q1: newQueue(len(p.insts))}
	}
	m.matched = false
	for i := range m.matchcap {
		m.matchcap[i] = -1
	}
	return m
}

func (p *prog) put(m *machine) { p.machines.Put(m) }

// step advances the threads of runq over c (the rune at the current
// position) into nextq, for nextPos, whose next rune is c1.
func (m *machine) step(runq, nextq *queue, nextPos int, c, c1 rune) {
	for j := 0; j < len(runq.dense); j++ {
		t := runq.dense[j].t
		if t == nil {
			continue
		}
		i := &m.p.insts[t.pc]
		switch i.op {
		case opMatch:
			if len(t.cap) > 0 {
				copy(m.matchcap, t.cap)
			}
			// First match: every lower-priority thread is cut off.
			for _, d := range runq.dense[j+1:] {
				if d.t != nil {
					m.free(d.t)
				}
			}
			runq.dense = runq.dense[:0]
			m.matched = true
		case opRune:
			if c != endOfText && inRanges(i.ranges, c) {
				t = m.add(nextq, i.out, nextPos, c1, t.cap, t)
			}
		}
		if t != nil {
			m.free(t)
		}
	}
	runq.dense = runq.dense[:0]
}

// add puts pc on q for position pos (whose rune is next), following
// splits, saves and assertions; t, when not nil, is a thread to reuse.
// It returns t when it did not use it.
func (m *machine) add(q *queue, pc, pos int, next rune, caps []int, t *thread) *thread {
	if pc == 0 || q.contains(pc) {
		return t
	}
	j := len(q.dense)
	q.dense = append(q.dense, entry{pc: pc})
	q.sparse[pc] = j
	i := &m.p.insts[pc]
	switch i.op {
	case opSplit:
		t = m.add(q, i.out, pos, next, caps, t)
		t = m.add(q, i.alt, pos, next, caps, t)
	case opBegin:
		if pos == 0 {
			t = m.add(q, i.out, pos, next, caps, t)
		}
	case opEnd:
		if next == endOfText {
			t = m.add(q, i.out, pos, next, caps, t)
		}
	case opSave:
		if i.arg < len(caps) {
			old := caps[i.arg]
			caps[i.arg] = pos
			m.add(q, i.out, pos, next, caps, nil)
			caps[i.arg] = old
		} else {
			t = m.add(q, i.out, pos, next, caps, t)
		}
	case opRune, opMatch:
		if t == nil {
			t = m.alloc(pc)
		} else {
			t.pc = pc
		}
		if len(t.cap) > 0 && &t.cap[0] != &caps[0] {
			copy(t.cap, caps)
		}
		q.dense[j].t = t
		t = nil
	}
	return t
}

// inRanges reports whether c is in the sorted lo, hi pairs.
func inRanges(r []rune, c rune) bool {
	if len(r) <= 8 {
		for i := 0; i < len(r); i += 2 {
			if c < r[i] {
				return false
			}
			if c <= r[i+1] {
				return true
			}
		}
		return false
	}
	lo, hi := 0, len(r)/2
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case c < r[2*m]:
			hi = m
		case c > r[2*m+1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}
