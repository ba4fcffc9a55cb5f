package relite

import (
	"io"
	"strconv"
)

// Regexp is a compiled regular expression. It is safe for concurrent use.
type Regexp struct {
	expr string
	prog *prog
	ncap int // capturing groups
}

// Compile parses a regular expression and returns, if successful, a
// Regexp that can be used to match against text. The match is the
// leftmost-first one, as in Perl and the standard library's regexp.
func Compile(expr string) (*Regexp, error) {
	n, ncap, err := parse(expr)
	if err != nil {
		return nil, err
	}
	p, err := compile(n, expr)
	if err != nil {
		return nil, err
	}
	return &Regexp{expr: expr, prog: p, ncap: ncap}, nil
}

// MustCompile is like Compile but panics if the expression cannot be
// parsed.
func MustCompile(str string) *Regexp {
	re, err := Compile(str)
	if err != nil {
		panic(`regexp: Compile(` + strconv.Quote(str) + `): ` + err.Error())
	}
	return re
}

// String returns the source text used to compile the regular expression.
func (re *Regexp) String() string { return re.expr }

// NumSubexp returns the number of parenthesized subexpressions.
func (re *Regexp) NumSubexp() int { return re.ncap }

// Match reports whether the byte slice b contains any match of re.
func (re *Regexp) Match(b []byte) bool { return re.prog.match(bytesInput(b), 0) != nil }

// MatchString reports whether the string s contains any match of re.
func (re *Regexp) MatchString(s string) bool { return re.prog.match(stringInput(s), 0) != nil }

// FindIndex returns a two-element slice of integers defining the location
// of the leftmost match in b; nil when there is none.
func (re *Regexp) FindIndex(b []byte) []int { return re.prog.match(bytesInput(b), 2) }

// FindSubmatchIndex returns a slice holding the index pairs identifying
// the leftmost match of re in b and the matches of its subexpressions
// (-1 for a group that did not take part); nil when there is none.
func (re *Regexp) FindSubmatchIndex(b []byte) []int {
	return re.prog.match(bytesInput(b), 2*(re.ncap+1))
}

// FindStringSubmatchIndex is FindSubmatchIndex on a string.
func (re *Regexp) FindStringSubmatchIndex(s string) []int {
	return re.prog.match(stringInput(s), 2*(re.ncap+1))
}

// FindReaderSubmatchIndex is FindSubmatchIndex on the runes r reads,
// which it reads one at a time and no further than the match needs (one
// rune past it at most).
func (re *Regexp) FindReaderSubmatchIndex(r io.RuneReader) []int {
	return re.prog.match(readerInput{r}, 2*(re.ncap+1))
}

// FindAllStringSubmatch is the 'All' version of FindStringSubmatch: the
// successive non-overlapping matches of re in s and their submatches
// ("" for a group that did not take part), at most n of them (n < 0:
// all); nil when there is none. An empty match right after a match is
// skipped, as in the standard library.
func (re *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	var out [][]string
	re.all(stringInput(s), len(s), n, func(m []int) {
		sub := make([]string, len(m)/2)
		for i := range sub {
			if m[2*i] >= 0 {
				sub[i] = s[m[2*i]:m[2*i+1]]
			}
		}
		out = append(out, sub)
	})
	return out
}

// FindAllStringSubmatchIndex is the 'All' version of
// FindStringSubmatchIndex.
func (re *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	var out [][]int
	re.all(stringInput(s), len(s), n, func(m []int) { out = append(out, m) })
	return out
}

func (re *Regexp) all(in input, end, n int, deliver func([]int)) {
	if n < 0 {
		n = end + 1
	}
	for pos, i, prevEnd := 0, 0, -1; i < n && pos <= end; {
		m := re.prog.matchFrom(in, pos, 2*(re.ncap+1))
		if m == nil {
			break
		}
		accept := true
		if m[1] == pos {
			// An empty match: never right after the previous match,
			// and the next search starts a rune further.
			if m[0] == prevEnd {
				accept = false
			}
			if _, w := in.step(pos); w > 0 {
				pos += w
			} else {
				pos = end + 1
			}
		} else {
			pos = m[1]
		}
		prevEnd = m[1]
		if accept {
			deliver(m)
			i++
		}
	}
}
