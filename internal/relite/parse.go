// Package relite is a small regular expression engine with the standard
// library's semantics for the syntax it accepts: leftmost-first matches,
// submatch positions in bytes, linear time in the input (a Pike VM), and
// runes pulled one at a time from an io.RuneReader, never read ahead.
//
// It exists for the widget's size (issue 34, "Lighter"): the default
// widget build puts it in place of the standard library's regexp (go build
// -overlay, see wasm/internal/build), which takes regexp/syntax and
// unicode's category and script tables out of the .wasm. It accepts what
// goldmark's patterns use: literals, classes with ranges and \d \s \w,
// `.`, `^` and `$` (text start and end), groups (capturing, non-capturing,
// named), alternation, the quantifiers * + ? {n} {n,} {n,m} greedy or
// not, and the flags i, s and U. Anything else (\b, multi-line mode,
// Unicode classes, POSIX classes) is refused with an error naming it,
// never matched differently: FuzzAgainstRegexp holds every match to the
// standard library's.
//
// Its exported API is the part of regexp's that the widget's packages
// call, with regexp's names and doc, so that the package can stand in for
// regexp unchanged.
package relite

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a pattern relite refuses: malformed, or outside what it accepts.
type Error struct {
	Code string // what is wrong, e.g. "missing closing )"
	Expr string // the part of the pattern at fault
}

func (e *Error) Error() string {
	return "error parsing regexp: " + e.Code + ": `" + e.Expr + "`"
}

type nodeKind uint8

const (
	nClass   nodeKind = iota // one rune in ranges
	nEmpty                   // matches the empty string
	nBegin                   // start of text
	nEnd                     // end of text
	nConcat                  // subs in order
	nAlt                     // subs, the first preferred
	nRepeat                  // sub, min to max times (max -1: no bound)
	nCapture                 // sub, recorded as group cap
)

type node struct {
	kind     nodeKind
	ranges   []rune // nClass: sorted, non-overlapping lo, hi pairs
	subs     []*node
	min, max int
	greedy   bool
	counted  bool // nRepeat: written {n,m}
	cap      int
}

const (
	flagFold     = 1 << iota // i
	flagDotNL                // s
	flagUngreedy             // U
)

// maxRepeat is the standard library's bound on a counted repetition.
const maxRepeat = 1000

type parser struct {
	src   string
	pos   int
	flags int
	ncap  int
	names []string
	depth int
}

func parse(expr string) (*node, int, error) {
	p := &parser{src: expr}
	n, err := p.alternation()
	if err != nil {
		return nil, 0, err
	}
	if p.pos < len(p.src) {
		// Only an unopened ')' stops the top level early.
		return nil, 0, &Error{"unexpected )", expr}
	}
	return n, p.ncap, nil
}

func (p *parser) more() bool { return p.pos < len(p.src) }

func (p *parser) peek() byte { return p.src[p.pos] }

// alternation parses a|b|… up to an unmatched ')' or the end.
func (p *parser) alternation() (*node, error) {
	var alts []*node
	flags := p.flags
	for {
		c, err := p.concat()
		if err != nil {
			return nil, err
		}
		alts = append(alts, c)
		if p.more() && p.peek() == '|' {
			p.pos++
			continue
		}
		break
	}
	p.flags = flags // a flag group's effect ends with its group
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &node{kind: nAlt, subs: alts}, nil
}

func (p *parser) concat() (*node, error) {
	var items []*node
	for p.more() {
		c := p.peek()
		if c == '|' || c == ')' {
			break
		}
		atom, err := p.atom()
		if err != nil {
			return nil, err
		}
		if atom == nil { // a flag setting (?i): nothing to repeat
			continue
		}
		atom, err = p.repeats(atom)
		if err != nil {
			return nil, err
		}
		items = append(items, atom)
	}
	switch len(items) {
	case 0:
		return &node{kind: nEmpty}, nil
	case 1:
		return items[0], nil
	}
	return &node{kind: nConcat, subs: items}, nil
}

// repeats applies the quantifiers after an atom.
func (p *parser) repeats(atom *node) (*node, error) {
	repeated := false
	for p.more() {
		lo, hi, ok := 0, 0, true
		at := p.pos
		switch p.peek() {
		case '*':
			lo, hi = 0, -1
			p.pos++
		case '+':
			lo, hi = 1, -1
			p.pos++
		case '?':
			lo, hi = 0, 1
			p.pos++
		case '{':
			lo, hi, ok = p.counted()
			if !ok { // not a repetition: a literal '{', next atom
				return atom, nil
			}
		default:
			return atom, nil
		}
		if repeated {
			return nil, &Error{"invalid nested repetition operator", p.src[at:p.pos]}
		}
		if lo > maxRepeat || hi > maxRepeat {
			return nil, &Error{"invalid repeat count", p.src[at:p.pos]}
		}
		greedy := p.flags&flagUngreedy == 0
		if p.more() && p.peek() == '?' {
			p.pos++
			greedy = !greedy
		}
		counted := p.src[at] == '{'
		atom = &node{kind: nRepeat, subs: []*node{atom}, min: lo, max: hi, greedy: greedy, counted: counted}
		if counted && (lo >= 2 || hi >= 2) && !repeatFits(atom, maxRepeat) {
			// The standard library's bound on nested counts: their
			// product at most 1000.
			return nil, &Error{"invalid repeat count", p.src[at:p.pos]}
		}
		repeated = true
	}
	return atom, nil
}

// repeatFits reports whether the counted repetitions in n, nested,
// multiply to at most n.
func repeatFits(re *node, n int) bool {
	if re.kind == nRepeat && re.counted {
		m := re.max
		if m == 0 {
			return true
		}
		if m < 0 {
			m = re.min
		}
		if m > n {
			return false
		}
		if m > 0 {
			n /= m
		}
	}
	for _, s := range re.subs {
		if !repeatFits(s, n) {
			return false
		}
	}
	return true
}

// counted reads {n}, {n,} or {n,m}; ok false leaves pos where it was.
func (p *parser) counted() (lo, hi int, ok bool) {
	save := p.pos
	p.pos++ // {
	lo, ok = p.number()
	if !ok {
		p.pos = save
		return 0, 0, false
	}
	hi = lo
	if p.more() && p.peek() == ',' {
		p.pos++
		hi = -1
		if p.more() && p.peek() != '}' {
			if hi, ok = p.number(); !ok {
				p.pos = save
				return 0, 0, false
			}
		}
	}
	if !p.more() || p.peek() != '}' || hi >= 0 && hi < lo {
		if p.more() && p.peek() == '}' && hi >= 0 && hi < lo {
			// {5,3}: the standard library refuses it too.
			p.pos++
			return maxRepeat + 1, maxRepeat + 1, true
		}
		p.pos = save
		return 0, 0, false
	}
	p.pos++
	return lo, hi, true
}

func (p *parser) number() (int, bool) {
	start := p.pos
	for p.more() && p.peek() >= '0' && p.peek() <= '9' {
		p.pos++
	}
	if p.pos == start || p.pos-start > 1 && p.src[start] == '0' {
		// No digits, or a leading zero: as in the standard library,
		// then not a count ({00} is literal text).
		return 0, false
	}
	// Any number of digits makes a count; one over maxRepeat stands
	// for every larger one (refused as the standard library refuses it).
	n := 0
	for _, c := range p.src[start:p.pos] {
		n = min(n*10+int(c-'0'), maxRepeat+1)
	}
	return n, true
}

// atom parses one item to repeat; nil for a flag setting like (?i).
func (p *parser) atom() (*node, error) {
	start := p.pos
	c := p.peek()
	switch c {
	case '(':
		return p.group()
	case '[':
		return p.class()
	case '.':
		p.pos++
		if p.flags&flagDotNL != 0 {
			return &node{kind: nClass, ranges: []rune{0, unicode.MaxRune}}, nil
		}
		return &node{kind: nClass, ranges: []rune{0, '\n' - 1, '\n' + 1, unicode.MaxRune}}, nil
	case '^':
		p.pos++
		return &node{kind: nBegin}, nil
	case '$':
		p.pos++
		return &node{kind: nEnd}, nil
	case '*', '+', '?':
		return nil, &Error{"missing argument to repetition operator", p.src[start : p.pos+1]}
	case '{':
		if _, _, ok := p.counted(); ok {
			return nil, &Error{"missing argument to repetition operator", p.src[start:p.pos]}
		}
		p.pos++
		return p.literal('{'), nil
	case '\\':
		return p.escape()
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	if r == utf8.RuneError && size == 1 {
		return nil, &Error{"invalid UTF-8", p.src[p.pos:]}
	}
	p.pos += size
	return p.literal(r), nil
}

// literal is r as a class: with the i flag, every rune it folds to.
func (p *parser) literal(r rune) *node {
	ranges := []rune{r, r}
	if p.flags&flagFold != 0 {
		ranges = foldRanges(ranges)
	}
	return &node{kind: nClass, ranges: ranges}
}

// maxDepth is the standard library's bound on nesting.
const maxDepth = 1000

func (p *parser) group() (*node, error) {
	start := p.pos
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, &Error{"expression nests too deeply", p.src}
	}
	p.pos++ // (
	name := ""
	if strings.HasPrefix(p.src[p.pos:], "?P<") || strings.HasPrefix(p.src[p.pos:], "?<") {
		if p.src[p.pos+1] == 'P' {
			p.pos++
		}
		p.pos += 2
		end := strings.IndexByte(p.src[p.pos:], '>')
		if end < 0 {
			return nil, &Error{"invalid named capture", p.src[start:]}
		}
		name = p.src[p.pos : p.pos+end]
		if !validName(name) {
			return nil, &Error{"invalid named capture", p.src[start : p.pos+end+1]}
		}
		for _, n := range p.names {
			if n == name {
				return nil, &Error{"duplicate capture group name", p.src[start : p.pos+end+1]}
			}
		}
		p.pos += end + 1
	} else if p.more() && p.peek() == '?' {
		// Flags: (?i) sets them for the rest of the group, (?i:re)
		// for re only.
		p.pos++
		flags, neg, seen := p.flags, false, false
		for {
			if !p.more() {
				return nil, &Error{"missing closing )", p.src[start:]}
			}
			c := p.peek()
			p.pos++
			var f int
			switch c {
			case 'i':
				f = flagFold
			case 's':
				f = flagDotNL
			case 'U':
				f = flagUngreedy
			case '-':
				if neg {
					return nil, &Error{"invalid or unsupported Perl syntax", p.src[start:p.pos]}
				}
				neg, seen = true, false
				continue
			case ')', ':':
				if !seen && (neg || c == ')' && p.pos-start == 3) {
					return nil, &Error{"invalid or unsupported Perl syntax", p.src[start:p.pos]}
				}
				if c == ')' {
					p.flags = flags
					return nil, nil
				}
				return p.groupBody(start, flags)
			default:
				// m (multi-line) among them: refused, not matched
				// differently.
				return nil, &Error{"invalid or unsupported Perl syntax", p.src[start:p.pos]}
			}
			if neg {
				flags &^= f
			} else {
				flags |= f
			}
			seen = true
		}
	}
	p.ncap++
	p.names = append(p.names, name)
	index := p.ncap
	sub, err := p.groupBody(start, p.flags)
	if err != nil {
		return nil, err
	}
	return &node{kind: nCapture, subs: []*node{sub}, cap: index}, nil
}

// groupBody parses a group's body with the given flags, up to and
// including its ')'; the flags outside the group are left as they were.
// start is where the group's '(' is, for the error.
func (p *parser) groupBody(start, flags int) (*node, error) {
	outer := p.flags
	p.flags = flags
	sub, err := p.alternation()
	p.flags = outer
	if err != nil {
		return nil, err
	}
	if !p.more() || p.peek() != ')' {
		return nil, &Error{"missing closing )", p.src[start:]}
	}
	p.pos++
	return sub, nil
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if c != '_' && !('0' <= c && c <= '9') && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// escape parses \x outside a class.
func (p *parser) escape() (*node, error) {
	if p.pos+1 >= len(p.src) {
		return nil, &Error{"trailing backslash at end of expression", ""}
	}
	switch c := p.src[p.pos+1]; c {
	case 'A':
		p.pos += 2
		return &node{kind: nBegin}, nil
	case 'z':
		p.pos += 2
		return &node{kind: nEnd}, nil
	case 'd', 'D', 's', 'S', 'w', 'W':
		p.pos += 2
		return &node{kind: nClass, ranges: perlClass(c, p.flags)}, nil
	}
	r, err := p.escapedRune()
	if err != nil {
		return nil, err
	}
	return p.literal(r), nil
}

// escapedRune reads an escape that stands for one rune: punctuation,
// \t \n \r \f \v \a, \x.. and \x{..}, octal \0…. Others are refused.
func (p *parser) escapedRune() (rune, error) {
	start := p.pos
	p.pos++ // backslash
	if !p.more() {
		return 0, &Error{"trailing backslash at end of expression", ""}
	}
	c := p.peek()
	p.pos++
	switch {
	case c < utf8.RuneSelf && !('0' <= c && c <= '9') && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z'):
		return rune(c), nil
	case c == 't':
		return '\t', nil
	case c == 'n':
		return '\n', nil
	case c == 'r':
		return '\r', nil
	case c == 'f':
		return '\f', nil
	case c == 'v':
		return '\v', nil
	case c == 'a':
		return '\a', nil
	case c >= '1' && c <= '7':
		// A backreference in Perl: refused by the standard library
		// unless followed by more octal digits.
		if !p.more() || p.peek() < '0' || p.peek() > '7' {
			break
		}
		fallthrough
	case c == '0':
		r := rune(c - '0')
		for i := 1; i < 3 && p.more() && p.peek() >= '0' && p.peek() <= '7'; i++ {
			r = r*8 + rune(p.peek()-'0')
			p.pos++
		}
		return r, nil
	case c == 'x':
		if !p.more() {
			break
		}
		if p.peek() == '{' {
			end := strings.IndexByte(p.src[p.pos:], '}')
			if end < 2 {
				break
			}
			v, err := strconv.ParseUint(p.src[p.pos+1:p.pos+end], 16, 32)
			if err != nil || v > unicode.MaxRune {
				break
			}
			p.pos += end + 1
			return rune(v), nil
		}
		if p.pos+2 > len(p.src) {
			break
		}
		v, err := strconv.ParseUint(p.src[p.pos:p.pos+2], 16, 8)
		if err != nil {
			break
		}
		p.pos += 2
		return rune(v), nil
	}
	end := min(p.pos, len(p.src))
	if c >= utf8.RuneSelf {
		_, size := utf8.DecodeRuneInString(p.src[start+1:])
		end = start + 1 + size
	}
	return 0, &Error{"invalid escape sequence", p.src[start:end]}
}

// class parses [...].
func (p *parser) class() (*node, error) {
	start := p.pos
	p.pos++ // [
	negate := false
	if p.more() && p.peek() == '^' {
		negate = true
		p.pos++
	}
	var ranges []rune
	first := true
	for {
		if !p.more() {
			return nil, &Error{"missing closing ]", p.src[start:]}
		}
		c := p.peek()
		if c == ']' && !first {
			p.pos++
			break
		}
		if c == '[' && p.pos+1 < len(p.src) && p.src[p.pos+1] == ':' {
			return nil, &Error{"invalid or unsupported character class", p.src[start:]}
		}
		first = false
		if c == '\\' && p.pos+1 < len(p.src) {
			switch e := p.src[p.pos+1]; e {
			case 'd', 'D', 's', 'S', 'w', 'W':
				p.pos += 2
				ranges = append(ranges, perlClass(e, p.flags)...)
				continue
			case 'p', 'P':
				return nil, &Error{"invalid or unsupported character class", p.src[p.pos : p.pos+2]}
			}
		}
		at := p.pos
		lo, err := p.classRune()
		if err != nil {
			return nil, err
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.peek() == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			if hi, err = p.classRune(); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, &Error{"invalid character class range", p.src[at:p.pos]}
			}
		}
		r := []rune{lo, hi}
		if p.flags&flagFold != 0 {
			r = foldRanges(r)
		}
		ranges = append(ranges, r...)
	}
	ranges = normalize(ranges)
	if negate {
		ranges = complement(ranges)
	}
	return &node{kind: nClass, ranges: ranges}, nil
}

func (p *parser) classRune() (rune, error) {
	if p.peek() == '\\' {
		return p.escapedRune()
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	if r == utf8.RuneError && size == 1 {
		return 0, &Error{"invalid UTF-8", p.src[p.pos:]}
	}
	p.pos += size
	return r, nil
}

// perlClass is \d \s \w or their negations: ASCII only, as in the
// standard library; the i flag changes \w's and \W's (k and s fold to
// Kelvin and long s).
func perlClass(c byte, flags int) []rune {
	var r []rune
	switch c | 0x20 {
	case 'd':
		r = []rune{'0', '9'}
	case 's':
		r = []rune{'\t', '\n', '\f', '\r', ' ', ' '}
	case 'w':
		r = []rune{'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}
	}
	if flags&flagFold != 0 {
		r = foldRanges(r)
	}
	r = normalize(r)
	if c < 'a' { // upper case: the negation
		r = complement(r)
	}
	return r
}

// The runes case folding can change, as in the standard library.
const (
	minFold = 0x0041
	maxFold = 0x1e943
)

// foldRanges adds to ranges every rune a rune in them folds to.
func foldRanges(ranges []rune) []rune {
	out := append([]rune(nil), ranges...)
	for i := 0; i < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= minFold && hi >= maxFold {
			continue // every folding rune is in already
		}
		for r := max(lo, minFold); r <= min(hi, maxFold); r++ {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				out = append(out, f, f)
			}
		}
	}
	return normalize(out)
}

// normalize sorts lo, hi pairs and merges those that touch.
func normalize(r []rune) []rune {
	// Insertion sort by lo: classes are small.
	for i := 2; i < len(r); i += 2 {
		for j := i; j > 0 && r[j] < r[j-2]; j -= 2 {
			r[j], r[j+1], r[j-2], r[j-1] = r[j-2], r[j-1], r[j], r[j+1]
		}
	}
	out := r[:0]
	for i := 0; i < len(r); i += 2 {
		lo, hi := r[i], r[i+1]
		if n := len(out); n > 0 && lo <= out[n-1]+1 {
			out[n-1] = max(out[n-1], hi)
			continue
		}
		out = append(out, lo, hi)
	}
	return out
}

// complement is every rune not in the normalized ranges.
func complement(r []rune) []rune {
	var out []rune
	next := rune(0)
	for i := 0; i < len(r); i += 2 {
		if r[i] > next {
			out = append(out, next, r[i]-1)
		}
		next = r[i+1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, next, unicode.MaxRune)
	}
	return out
}
