package relite

import "sync"

// The program a pattern compiles to, as the standard library's: a
// repetition is expanded into copies (x{2,4} is xx(x(x)?)?), a star whose
// body can match the empty string is (x+)?, so that the Pike VM finds the
// same leftmost-first match and submatches.

type opcode uint8

const (
	opFail  opcode = iota
	opRune         // one rune in ranges, then out
	opSplit        // out first, then alt
	opSave         // record the position in slot arg, then out
	opBegin        // at the start of the text, then out
	opEnd          // at the end of the text, then out
	opMatch
)

type inst struct {
	op       opcode
	out, alt int
	arg      int
	ranges   []rune
}

type prog struct {
	machines sync.Pool // *machine, reused by matches (get, put)
	insts    []inst
	start    int
	// anchored: the pattern starts with ^ on every path, so no match
	// can start past 0.
	anchored bool
}

// maxInsts bounds a program's size (x{1000}{1000} would be a million).
const maxInsts = 1 << 16

type compiler struct {
	p       *prog
	tooBig  bool
	pattern string
}

func compile(n *node, pattern string) (*prog, error) {
	c := &compiler{p: &prog{insts: []inst{{op: opFail}}}, pattern: pattern}
	match := c.emit(inst{op: opMatch})
	// The whole match is group 0.
	end := c.emit(inst{op: opSave, arg: 1, out: match})
	body := c.node(n, end)
	c.p.start = c.emit(inst{op: opSave, arg: 0, out: body})
	if c.tooBig {
		return nil, &Error{"expression too large", pattern}
	}
	c.p.anchored = anchored(n)
	return c.p, nil
}

func (c *compiler) emit(i inst) int {
	if len(c.p.insts) >= maxInsts {
		c.tooBig = true
		return 0
	}
	c.p.insts = append(c.p.insts, i)
	return len(c.p.insts) - 1
}

// node compiles n to go on to next, and returns where n starts.
func (c *compiler) node(n *node, next int) int {
	if c.tooBig {
		return 0
	}
	switch n.kind {
	case nClass:
		return c.emit(inst{op: opRune, ranges: n.ranges, out: next})
	case nEmpty:
		return next
	case nBegin:
		return c.emit(inst{op: opBegin, out: next})
	case nEnd:
		return c.emit(inst{op: opEnd, out: next})
	case nConcat:
		for i := len(n.subs) - 1; i >= 0; i-- {
			next = c.node(n.subs[i], next)
		}
		return next
	case nAlt:
		entry := c.node(n.subs[len(n.subs)-1], next)
		for i := len(n.subs) - 2; i >= 0; i-- {
			entry = c.emit(inst{op: opSplit, out: c.node(n.subs[i], next), alt: entry})
		}
		return entry
	case nCapture:
		end := c.emit(inst{op: opSave, arg: 2*n.cap + 1, out: next})
		return c.emit(inst{op: opSave, arg: 2 * n.cap, out: c.node(n.subs[0], end)})
	case nRepeat:
		return c.repeat(n.subs[0], n.min, n.max, n.greedy, next)
	}
	return 0
}

// repeat compiles x{lo,hi} (hi -1: no bound) as the standard library
// simplifies it.
func (c *compiler) repeat(x *node, lo, hi int, greedy bool, next int) int {
	switch {
	case hi == -1 && lo == 0:
		return c.star(x, greedy, next)
	case hi == -1:
		// x{n,} is n-1 copies of x, then x+.
		next = c.plus(x, greedy, next)
		for range lo - 1 {
			next = c.node(x, next)
		}
		return next
	case lo == 0 && hi == 0:
		return next
	}
	// x{n,m} is n copies of x, then (x(x…)?)? nested m-n deep.
	for range hi - lo {
		next = c.quest(func(n int) int { return c.node(x, n) }, greedy, next)
	}
	for range lo {
		next = c.node(x, next)
	}
	return next
}

// quest compiles body? where body(next) compiles the body.
func (c *compiler) quest(body func(int) int, greedy bool, next int) int {
	b := body(next)
	if greedy {
		return c.emit(inst{op: opSplit, out: b, alt: next})
	}
	return c.emit(inst{op: opSplit, out: next, alt: b})
}

// plus is x then a split back to x.
func (c *compiler) plus(x *node, greedy bool, next int) int {
	split := c.emit(inst{op: opSplit})
	b := c.node(x, split)
	c.setLoop(split, b, greedy, next)
	return b
}

// star is a split into x, which goes back to the split; a body that can
// match the empty string is (x+)?, as in the standard library, so that
// priorities come out as Perl's.
func (c *compiler) star(x *node, greedy bool, next int) int {
	if nullable(x) {
		return c.quest(func(n int) int { return c.plus(x, greedy, n) }, greedy, next)
	}
	split := c.emit(inst{op: opSplit})
	b := c.node(x, split)
	c.setLoop(split, b, greedy, next)
	return split
}

func (c *compiler) setLoop(split, body int, greedy bool, next int) {
	if split == 0 {
		return // too big
	}
	if greedy {
		c.p.insts[split].out, c.p.insts[split].alt = body, next
	} else {
		c.p.insts[split].out, c.p.insts[split].alt = next, body
	}
}

// nullable reports whether n can match the empty string.
func nullable(n *node) bool {
	switch n.kind {
	case nClass:
		return false
	case nConcat:
		for _, s := range n.subs {
			if !nullable(s) {
				return false
			}
		}
		return true
	case nAlt:
		for _, s := range n.subs {
			if nullable(s) {
				return true
			}
		}
		return false
	case nRepeat:
		return n.min == 0 || nullable(n.subs[0])
	case nCapture:
		return nullable(n.subs[0])
	}
	return true
}

// anchored reports whether every match of n starts with ^.
func anchored(n *node) bool {
	switch n.kind {
	case nBegin:
		return true
	case nConcat:
		return len(n.subs) > 0 && anchored(n.subs[0])
	case nCapture:
		return anchored(n.subs[0])
	case nAlt:
		for _, s := range n.subs {
			if !anchored(s) {
				return false
			}
		}
		return true
	case nRepeat:
		return n.min > 0 && anchored(n.subs[0])
	}
	return false
}
