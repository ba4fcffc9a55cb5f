package jsonx

import (
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the type of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "bool"
	case Number:
		return "number"
	case String:
		return "string"
	case Array:
		return "array"
	case Object:
		return "object"
	}
	return "nothing"
}

// A Reader reads one validated JSON document value by value, the way
// encoding/json decodes into a struct: each method reads the next value
// into its destination, null leaves the destination alone (or sets a
// pointer to nil), and a value of the wrong kind is skipped and remembered
// as the first TypeError. Create one with Decode.
type Reader struct {
	_   incomparable
	s   string
	i   int
	err error
}

// Decode validates s and, when it is JSON, calls read with a Reader at its
// top-level value. It returns a *SyntaxError for input that is not JSON
// (read is not called), else the first *TypeError read met, else nil.
func Decode(s string, read func(r *Reader)) error {
	r, err := NewReader(s)
	if err != nil {
		return err
	}
	read(&r)
	return r.err
}

// NewReader validates s and returns a Reader at its top-level value, or a
// *SyntaxError. Unlike Decode, it lets a hot path keep the Reader on its
// stack: read with direct method calls, then ask Err.
func NewReader(s string) (Reader, error) {
	if err := Validate(s); err != nil {
		return Reader{}, err
	}
	return Reader{s: s}, nil
}

// Err is the first *TypeError the reader met, or nil.
func (r *Reader) Err() error { return r.err }

// Kind is the kind of the next value.
func (r *Reader) Kind() Kind {
	r.i = skipSpace(r.s, r.i)
	if r.i >= len(r.s) {
		return Invalid
	}
	switch c := r.s[r.i]; c {
	case '{':
		return Object
	case '[':
		return Array
	case '"':
		return String
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	}
	return Number
}

// mismatch records a TypeError for the next value and skips it.
func (r *Reader) mismatch(got Kind, want string) {
	if r.err == nil {
		r.err = &TypeError{Offset: r.i, Got: got, Want: want}
	}
	r.Skip()
}

// Null consumes the next value and reports true if it is null; otherwise
// it consumes nothing.
func (r *Reader) Null() bool {
	if r.Kind() == Null {
		r.i += len("null")
		return true
	}
	return false
}

// Skip consumes the next value.
func (r *Reader) Skip() { r.Raw() }

// Raw consumes the next value and returns its text as it appears in the
// input (what encoding/json's RawMessage holds, null included).
func (r *Reader) Raw() string {
	start := r.i
	switch r.Kind() {
	case Object, Array:
		depth := 0
		for i := r.i; i < len(r.s); i++ {
			switch r.s[i] {
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					r.i = i + 1
					return r.s[start:r.i]
				}
			case '"':
				i = stringEnd(r.s, i) - 1
			}
		}
	case String:
		r.i = stringEnd(r.s, r.i)
	case Bool, Null:
		for r.i < len(r.s) && 'a' <= r.s[r.i] && r.s[r.i] <= 'z' {
			r.i++
		}
	case Number:
		r.i = numberEnd(r.s, r.i)
	}
	return r.s[start:r.i]
}

// stringEnd returns the offset just past the string whose quote is at i.
func stringEnd(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
	return len(s)
}

func numberEnd(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case '0' <= c && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			i++
		default:
			return i
		}
	}
	return i
}

// Str reads a string into dst; null leaves dst alone.
func (r *Reader) Str(dst *string) {
	switch k := r.Kind(); k {
	case String:
		*dst = r.unquote()
	case Null:
		r.Null()
	default:
		r.mismatch(k, "string")
	}
}

// StrPtr reads a string into a new or reused *dst; null sets it to nil.
func (r *Reader) StrPtr(dst **string) {
	if r.Null() {
		*dst = nil
		return
	}
	if *dst == nil {
		*dst = new(string)
	}
	r.Str(*dst)
}

// Int reads an integer into dst; null leaves dst alone. A number with a
// fraction or an exponent, or out of int64's range, is a TypeError, as in
// encoding/json.
func (r *Reader) Int(dst *int) {
	switch k := r.Kind(); k {
	case Number:
		start := r.i
		n, err := strconv.ParseInt(r.s[start:numberEnd(r.s, start)], 10, strconv.IntSize)
		if err != nil {
			r.mismatch(k, "int")
			return
		}
		r.i = numberEnd(r.s, start)
		*dst = int(n)
	case Null:
		r.Null()
	default:
		r.mismatch(k, "int")
	}
}

// IntPtr reads an integer into a new or reused *dst; null sets it to nil.
func (r *Reader) IntPtr(dst **int) {
	if r.Null() {
		*dst = nil
		return
	}
	if *dst == nil {
		*dst = new(int)
	}
	r.Int(*dst)
}

// Float reads a number into dst; null leaves dst alone. A number beyond
// float64's range is a TypeError, as in encoding/json.
func (r *Reader) Float(dst *float64) {
	switch k := r.Kind(); k {
	case Number:
		start := r.i
		f, err := strconv.ParseFloat(r.s[start:numberEnd(r.s, start)], 64)
		if err != nil {
			r.mismatch(k, "float64")
			return
		}
		r.i = numberEnd(r.s, start)
		*dst = f
	case Null:
		r.Null()
	default:
		r.mismatch(k, "float64")
	}
}

// Bool reads true or false into dst; null leaves dst alone.
func (r *Reader) Bool(dst *bool) {
	switch k := r.Kind(); k {
	case Bool:
		*dst = r.s[r.i] == 't'
		r.Skip()
	case Null:
		r.Null()
	default:
		r.mismatch(k, "bool")
	}
}

// BoolPtr reads true or false into a new or reused *dst; null sets it to
// nil.
func (r *Reader) BoolPtr(dst **bool) {
	if r.Null() {
		*dst = nil
		return
	}
	if *dst == nil {
		*dst = new(bool)
	}
	r.Bool(*dst)
}

// Object reads an object, calling member with each key (unescaped) while
// the reader stands at the key's value. member reads the value, or leaves
// it, and it is skipped. Null is read and ignored; another kind is a
// TypeError. Object reports whether it read an object.
func (r *Reader) Object(member func(key string)) bool {
	switch k := r.Kind(); k {
	case Object:
	case Null:
		r.Null()
		return false
	default:
		r.mismatch(k, "object")
		return false
	}
	r.i = skipSpace(r.s, r.i+1)
	if r.s[r.i] == '}' {
		r.i++
		return true
	}
	for {
		key := r.unquote()
		r.i = skipSpace(r.s, r.i)
		r.i = skipSpace(r.s, r.i+1) // the colon
		at := r.i
		member(key)
		if r.i == at {
			r.Skip()
		}
		r.i = skipSpace(r.s, r.i)
		c := r.s[r.i]
		r.i = skipSpace(r.s, r.i+1)
		if c == '}' {
			return true
		}
	}
}

// Array reads an array, calling elem with each element's index while the
// reader stands at it; elem reads it, or leaves it and it is skipped. Null
// is read and ignored; another kind is a TypeError. Array reports whether
// it read an array.
func (r *Reader) Array(elem func(i int)) bool {
	switch k := r.Kind(); k {
	case Array:
	case Null:
		r.Null()
		return false
	default:
		r.mismatch(k, "array")
		return false
	}
	r.i = skipSpace(r.s, r.i+1)
	if r.s[r.i] == ']' {
		r.i++
		return true
	}
	for n := 0; ; n++ {
		at := r.i
		elem(n)
		if r.i == at {
			r.Skip()
		}
		r.i = skipSpace(r.s, r.i)
		c := r.s[r.i]
		r.i = skipSpace(r.s, r.i+1)
		if c == ']' {
			return true
		}
	}
}

// Ptr prepares a pointer field for the next value as encoding/json
// does: null sets *dst to nil and Ptr returns false; otherwise *dst is
// allocated if it is nil and reused if not (so a repeated key merges) and
// Ptr returns true for the caller to read the value into it. (A callback
// would make the Reader escape to the heap.)
func Ptr[T any](r *Reader, dst **T) bool {
	if r.Null() {
		*dst = nil
		return false
	}
	if *dst == nil {
		*dst = new(T)
	}
	return true
}

// Slice reads an array into *dst through read, element by element (read
// captures the Reader rather than being handed it, which keeps the Reader
// on the caller's stack), with
// encoding/json's rules: elements already there are read into (not
// zeroed), the slice ends up as long as the array, an empty array gives an
// empty non-nil slice and null gives nil.
func Slice[T any](r *Reader, dst *[]T, read func(v *T)) {
	if r.Null() {
		*dst = nil
		return
	}
	n := 0
	if !r.Array(func(i int) {
		s := *dst
		switch {
		case i < len(s):
		case i < cap(s):
			s = s[:i+1]
		default:
			var zero T
			s = append(s, zero)
		}
		*dst = s
		read(&s[i])
		n = i + 1
	}) {
		return
	}
	if n == 0 {
		*dst = []T{}
	} else {
		*dst = (*dst)[:n]
	}
}

// Match returns the name in names that key selects as encoding/json
// selects a struct field: the exact name, or else the one equal to key
// under its case folding. It returns "" when none does.
func Match(key string, names []string) string {
	for _, n := range names {
		if key == n {
			return n
		}
	}
	for _, n := range names {
		if foldEqual(key, n) {
			return n
		}
	}
	return ""
}

// foldEqual compares key with an ASCII name the way encoding/json folds
// names: ASCII letters to upper case, other runes to the upper case of
// their lower case (so the Kelvin sign matches k and the long s matches s).
func foldEqual(key, name string) bool {
	j := 0
	for i := 0; i < len(key); {
		var r rune
		if c := key[i]; c < utf8.RuneSelf {
			r = rune(c)
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(key[i:])
			i += size
			r = unicode.ToLower(r)
		}
		r = unicode.ToUpper(r)
		if j >= len(name) {
			return false
		}
		c := rune(name[j])
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if r != c {
			return false
		}
		j++
	}
	return j == len(name)
}

// unquote reads the string at r.i. Without escapes or bytes that are not
// UTF-8 it is a substring of the input and costs nothing.
func (r *Reader) unquote() string {
	s := r.s
	start := r.i + 1
	for i := start; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			r.i = i + 1
			return s[start:i]
		}
		if c == '\\' {
			break
		}
		if c >= utf8.RuneSelf {
			if ru, size := utf8.DecodeRuneInString(s[i:]); ru == utf8.RuneError && size == 1 {
				break
			} else {
				i += size - 1
			}
		}
	}
	end := stringEnd(s, r.i)
	r.i = end
	return unescape(s[start : end-1])
}

// unescape decodes a string's body the way encoding/json does: escapes,
// surrogate pairs, and U+FFFD for each byte that is not UTF-8 and for each
// lone surrogate.
func unescape(s string) string {
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			e := s[i+1]
			i += 2
			switch e {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				ru := hex4(s[i:])
				i += 4
				if utf16.IsSurrogate(ru) {
					ru2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						ru2 = hex4(s[i+2:])
					}
					if dec := utf16.DecodeRune(ru, ru2); dec != unicode.ReplacementChar {
						i += 6
						ru = dec
					} else {
						ru = unicode.ReplacementChar
					}
				}
				b = utf8.AppendRune(b, ru)
			default: // '"', '\\', '/'
				b = append(b, e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			ru, size := utf8.DecodeRuneInString(s[i:])
			if ru == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, unicode.ReplacementChar)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(b)
}

func hex4(s string) rune {
	var ru rune
	for k := 0; k < 4; k++ {
		ru = ru<<4 | rune(unhex(s[k]))
	}
	return ru
}
