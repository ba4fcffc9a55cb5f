package jsonx

import (
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by every *SyntaxError: the input is not JSON.
var ErrSyntax = errors.New("jsonx: invalid JSON")

// ErrType is wrapped by every *TypeError: the input is JSON, but a value
// does not have the type the reader asked for.
var ErrType = errors.New("jsonx: unexpected JSON type")

// maxDepth is encoding/json's nesting limit: deeper input is rejected, so
// both accept the same documents (and a hostile one cannot exhaust the
// stack).
const maxDepth = 10000

// A SyntaxError says what is wrong with the input and at which byte.
type SyntaxError struct {
	_      incomparable
	Offset int    // byte offset of the offending byte (len(input) at the end)
	Msg    string // what was wrong there
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsonx: %s at byte %d", e.Msg, e.Offset)
}

// Unwrap makes every SyntaxError match ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// A TypeError is a value of one kind found where another was wanted.
type TypeError struct {
	_      incomparable
	Offset int    // byte offset where the value starts
	Got    Kind   // what the input held
	Want   string // what the reader asked for ("string", "int", "object"…)
}

func (e *TypeError) Error() string {
	return fmt.Sprintf("jsonx: cannot read %s as %s at byte %d", e.Got, e.Want, e.Offset)
}

// Unwrap makes every TypeError match ErrType.
func (e *TypeError) Unwrap() error { return ErrType }

// Valid reports whether s is one JSON value (with optional surrounding
// whitespace).
func Valid(s string) bool { return Validate(s) == nil }

// Validate returns nil when s is one JSON value, or a *SyntaxError naming
// the first offending byte.
func Validate(s string) error {
	v := validator{s: s}
	i, err := v.value(skipSpace(s, 0), 0)
	if err != nil {
		return err
	}
	if i = skipSpace(s, i); i != len(s) {
		return v.fail(i, "after top-level value")
	}
	return nil
}

type validator struct{ s string }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

func (v *validator) fail(i int, context string) error {
	if i >= len(v.s) {
		return &SyntaxError{Offset: len(v.s), Msg: "unexpected end of JSON input"}
	}
	return &SyntaxError{Offset: i, Msg: fmt.Sprintf("invalid character %q %s", v.s[i], context)}
}

// value checks the value starting at i (no leading space) and returns the
// offset just past it.
func (v *validator) value(i, depth int) (int, error) {
	s := v.s
	if i >= len(s) {
		return i, v.fail(i, "")
	}
	switch c := s[i]; {
	case c == '{':
		return v.object(i, depth+1)
	case c == '[':
		return v.array(i, depth+1)
	case c == '"':
		return v.str(i)
	case c == '-' || ('0' <= c && c <= '9'):
		return v.number(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	}
	return i, v.fail(i, "looking for beginning of value")
}

func (v *validator) literal(i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(v.s) || v.s[i+k] != lit[k] {
			return i + k, v.fail(i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

func (v *validator) object(i, depth int) (int, error) {
	if depth > maxDepth {
		return i, &SyntaxError{Offset: i, Msg: "exceeded max depth"}
	}
	s := v.s
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return i, v.fail(i, "looking for beginning of object key string")
		}
		var err error
		if i, err = v.str(i); err != nil {
			return i, err
		}
		if i = skipSpace(s, i); i >= len(s) || s[i] != ':' {
			return i, v.fail(i, "after object key")
		}
		if i, err = v.value(skipSpace(s, i+1), depth); err != nil {
			return i, err
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == '}' {
			return i + 1, nil
		}
		return i, v.fail(i, "after object key:value pair")
	}
}

func (v *validator) array(i, depth int) (int, error) {
	if depth > maxDepth {
		return i, &SyntaxError{Offset: i, Msg: "exceeded max depth"}
	}
	s := v.s
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = v.value(i, depth); err != nil {
			return i, err
		}
		i = skipSpace(s, i)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
			continue
		}
		if i < len(s) && s[i] == ']' {
			return i + 1, nil
		}
		return i, v.fail(i, "after array element")
	}
}

// str checks a string starting at its opening quote. Bytes that are not
// UTF-8 are allowed, as encoding/json allows them (they read as U+FFFD).
func (v *validator) str(i int) (int, error) {
	s := v.s
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return i, v.fail(i, "in string literal")
		case c == '\\':
			i++
			if i >= len(s) {
				return i, v.fail(i, "")
			}
			switch s[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if i+k >= len(s) || unhex(s[i+k]) < 0 {
						return i + k, v.fail(i+k, "in \\u hexadecimal character escape")
					}
				}
				i += 4
			default:
				return i, v.fail(i, "in string escape code")
			}
		}
	}
	return i, v.fail(i, "")
}

func (v *validator) number(i int) (int, error) {
	s := v.s
	digits := func(i int) int {
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i + 1)
	default:
		return i, v.fail(i, "in numeric literal")
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, v.fail(i, "after decimal point in numeric literal")
		}
		i = digits(i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, v.fail(i, "in exponent of numeric literal")
		}
		i = digits(i)
	}
	return i, nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
