package jsonx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/internal/jsonx"
)

// toAny reads any value the way encoding/json decodes into an interface:
// objects as maps (a repeated key keeps its last value), arrays as slices,
// numbers as float64.
func toAny(r *jsonx.Reader) any {
	switch r.Kind() {
	case jsonx.Object:
		m := map[string]any{}
		r.Object(func(k string) { m[k] = toAny(r) })
		return m
	case jsonx.Array:
		a := []any{}
		r.Array(func(int) { a = append(a, toAny(r)) })
		return a
	case jsonx.String:
		var s string
		r.Str(&s)
		return s
	case jsonx.Number:
		var f float64
		r.Float(&f)
		return f
	case jsonx.Bool:
		var b bool
		r.Bool(&b)
		return b
	}
	r.Null()
	return nil
}

// errorClass names what kind of failure an error is, for either package.
func errorClass(t *testing.T, err error) string {
	t.Helper()
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &syn), errors.Is(err, jsonx.ErrSyntax):
		return "syntax"
	case errors.As(err, &typ), errors.Is(err, jsonx.ErrType):
		return "type"
	}
	t.Fatalf("unexpected error %T: %v", err, err)
	return ""
}

// checkAny holds Decode to encoding/json for one input read as any value.
func checkAny(t *testing.T, data string) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal([]byte(data), &want)
	var got any
	gotErr := jsonx.Decode(data, func(r *jsonx.Reader) { got = toAny(r) })
	require.Equal(t, errorClass(t, wantErr), errorClass(t, gotErr), "input %q: encoding/json says %v, jsonx says %v", data, wantErr, gotErr)
	require.Equal(t, json.Valid([]byte(data)), jsonx.Valid(data), "input %q", data)
	if wantErr == nil {
		require.Equal(t, want, got, "input %q", data)
	}
}

// shape is a struct with every kind of field the stream decoders use;
// field names with k and s exercise encoding/json's Unicode folding
// (the Kelvin sign, the long s).
type shape struct {
	Kind   string   `json:"kind"`
	Size   int      `json:"size"`
	Ptr    *string  `json:"ptr"`
	IntP   *int     `json:"int_p"`
	Flag   bool     `json:"flag"`
	FlagP  *bool    `json:"flagP"`
	Num    float64  `json:"num"`
	Raw    raw      `json:"raw"`
	Inner  *shape   `json:"inner"`
	Value  inner    `json:"value"`
	List   []inner  `json:"list"`
	Nested [][]int2 `json:"nested"`
}

type inner struct {
	A string `json:"a"`
	B int    `json:"b"`
}

type int2 struct {
	N int `json:"n"`
}

// raw stands for json.RawMessage in the oracle: encoding/json hands it the
// value's text.
type raw string

func (r *raw) UnmarshalJSON(b []byte) error { *r = raw(b); return nil }

var (
	shapeFields = []string{"kind", "size", "ptr", "int_p", "flag", "flagP", "num", "raw", "inner", "value", "list", "nested"}
	innerFields = []string{"a", "b"}
)

func (s *shape) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, shapeFields) {
		case "kind":
			r.Str(&s.Kind)
		case "size":
			r.Int(&s.Size)
		case "ptr":
			r.StrPtr(&s.Ptr)
		case "int_p":
			r.IntPtr(&s.IntP)
		case "flag":
			r.Bool(&s.Flag)
		case "flagP":
			r.BoolPtr(&s.FlagP)
		case "num":
			r.Float(&s.Num)
		case "raw":
			s.Raw = raw(r.Raw())
		case "inner":
			if jsonx.Ptr(r, &s.Inner) {
				s.Inner.read(r)
			}
		case "value":
			s.Value.read(r)
		case "list":
			jsonx.Slice(r, &s.List, func(v *inner) { v.read(r) })
		case "nested":
			jsonx.Slice(r, &s.Nested, func(v *[]int2) {
				jsonx.Slice(r, v, func(n *int2) {
					r.Object(func(key string) {
						if jsonx.Match(key, []string{"n"}) == "n" {
							r.Int(&n.N)
						}
					})
				})
			})
		}
	})
}

func (in *inner) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, innerFields) {
		case "a":
			r.Str(&in.A)
		case "b":
			r.Int(&in.B)
		}
	})
}

// checkShape holds the struct reader to encoding/json for one input.
func checkShape(t *testing.T, data string) {
	t.Helper()
	var want shape
	wantErr := json.Unmarshal([]byte(data), &want)
	var got shape
	gotErr := jsonx.Decode(data, got.read)
	require.Equal(t, errorClass(t, wantErr), errorClass(t, gotErr), "input %q: encoding/json says %v, jsonx says %v", data, wantErr, gotErr)
	if wantErr == nil {
		require.Equal(t, want, got, "input %q", data)
	}
}

var seeds = []string{
	``, ` `, `null`, `true`, `false`, `0`, `-0`, `-`, `01`, `1.`, `1.5e`, `1e+2`, `1E-2`, `-12.5e3`, `1e400`, `123456789012345678901234567890`,
	`"`, `""`, `"abc`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u20AC"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, `"\ud83dx"`,
	`"\ud83d\ud83d\ude00"`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"tab\tinside\"", "\"\xff\xfe\"", "\"caf\xc3\"", "\"ok \xe2\x80\xa8\"",
	`[]`, `[1,2,]`, `[,]`, `[1 2]`, `{}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1}{}`, `{"a":1} `, "\t{\"a\" :\r\n1 }\n", `{"a":}`, `[nul]`, `tru`, `nulll`,
	`{"kind":"x","size":3,"ptr":"p","int_p":4,"flag":true,"flagP":false,"num":1.5,"raw":{"x": [1, 2]},"inner":{"kind":"y"},"value":{"a":"v","b":2},"list":[{"a":"1"},{"b":2}],"nested":[[{"n":1}],[]]}`,
	`{"KIND":"x","Size":3,"\u212aind":"kelvin","\u017fize":5,"kInd":"y"}`,
	`{"size":1.5}`, `{"size":1e2}`, `{"size":"3"}`, `{"size":9223372036854775808}`, `{"size":-9223372036854775808}`, `{"kind":5,"size":2}`,
	`{"ptr":null,"int_p":null,"flagP":null,"inner":null,"list":null,"raw":null,"value":null,"kind":null}`,
	`{"list":[{"a":"x","b":1},{"a":"y"}],"list":[{"b":7}]}`, `{"list":[{"a":"x"},{"a":"y"}],"list":[],"list":[{"b":1},{"b":2}]}`,
	`{"inner":{"kind":"a"},"inner":{"size":2}}`, `{"value":[1]}`, `{"list":{}}`, `{"inner":"x"}`, `{"flag":1}`, `{"raw":  "a b" }`,
	`[{"kind":"x"}]`, `"str"`, `{"nested":[[{"n":1},{"n":2}]],"nested":[[{"n":3}]]}`, `{"num":1e400}`, `{"a\u0000b":1}`, `{"kind":"\u003c"}`,
}

func TestDecodeAgreesWithEncodingJSONOnEdgeCases(t *testing.T) {
	for _, s := range seeds {
		checkAny(t, s)
		checkShape(t, s)
	}
}

func TestDecodeAgreesWithEncodingJSONOnRandomDocuments(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range n {
		doc := randomDoc(rng, 0)
		if rng.IntN(3) == 0 {
			doc = corrupt(rng, doc)
		}
		checkAny(t, doc)
		checkShape(t, doc)
	}
}

var keys = []string{"kind", "size", "ptr", "int_p", "flag", "flagP", "num", "raw", "inner", "value", "list", "nested", "a", "b", "n", "KIND", "Size", "\u212aind", "other"}

// randomDoc builds a JSON document aimed at the shape struct: its keys,
// values of the right and the wrong kinds, repeats, escapes and odd
// numbers.
func randomDoc(rng *rand.Rand, depth int) string {
	choice := rng.IntN(12)
	if depth > 4 && choice < 4 {
		choice += 4
	}
	switch choice {
	case 0, 1, 2:
		var b strings.Builder
		b.WriteByte('{')
		for i := range rng.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(ws(rng))
			b.WriteString(quote(rng, keys[rng.IntN(len(keys))]))
			b.WriteString(ws(rng) + ":" + ws(rng))
			b.WriteString(randomDoc(rng, depth+1))
		}
		b.WriteString(ws(rng) + "}")
		return b.String()
	case 3:
		var b strings.Builder
		b.WriteByte('[')
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(randomDoc(rng, depth+1))
		}
		b.WriteByte(']')
		return b.String()
	case 4, 5, 6:
		return quote(rng, randomString(rng))
	case 7, 8:
		return []string{"0", "-0", "7", "-12", "1.5", "2e3", "1E+2", "-0.0001e-2", "9223372036854775807", "9223372036854775808", "1e400", "123456789.123456789"}[rng.IntN(12)]
	case 9:
		return []string{"true", "false"}[rng.IntN(2)]
	}
	return "null"
}

func ws(rng *rand.Rand) string { return []string{"", "", "", " ", "\n\t", "\r "}[rng.IntN(6)] }

func randomString(rng *rand.Rand) string {
	parts := []string{"a", "Z", " ", "é", "€", "😀", "<", "&", "\u2028", "\xff", "\xc3", "\x7f", "\\", "\""}
	var b strings.Builder
	for range rng.IntN(6) {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

// quote writes s as a JSON string with a random mix of escapes, including
// surrogate pairs, lone surrogates and mismatched halves.
func quote(rng *rand.Rand, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case rng.IntN(4) == 0 && r < 0x10000:
			b.WriteString(`\u` + hex4(int(r)))
		case rng.IntN(4) == 0 && r >= 0x10000:
			hi, lo := 0xD800+((r-0x10000)>>10), 0xDC00+((r-0x10000)&0x3FF)
			b.WriteString(`\u` + hex4(int(hi)) + `\u` + hex4(int(lo)))
		case r == 0xFFFD && rng.IntN(2) == 0:
			b.WriteByte(0xff) // invalid UTF-8 straight in the string
		default:
			b.WriteRune(r)
		}
	}
	switch rng.IntN(10) {
	case 0:
		b.WriteString(`\ud800`)
	case 1:
		b.WriteString(`\udfff\ud800x`)
	case 2:
		b.WriteString(`\/\b\f\n\r\t`)
	}
	b.WriteByte('"')
	return b.String()
}

func hex4(n int) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[n>>12&0xF], digits[n>>8&0xF], digits[n>>4&0xF], digits[n&0xF]})
}

// corrupt damages a document one way or another, so rejection is held to
// the oracle as much as acceptance.
func corrupt(rng *rand.Rand, doc string) string {
	if doc == "" {
		return doc
	}
	i := rng.IntN(len(doc))
	switch rng.IntN(4) {
	case 0:
		return doc[:i]
	case 1:
		return doc[:i] + doc[i+1:]
	case 2:
		const junk = "{}[]\",:\\ x0-.e"
		return doc[:i] + string(junk[rng.IntN(len(junk))]) + doc[i:]
	}
	return doc + doc[i:]
}

func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		checkAny(t, data)
		checkShape(t, data)
	})
}

func TestTheNestingLimitIsEncodingJSONs(t *testing.T) {
	for _, depth := range []int{9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			closing := "]"
			if open != "[" {
				closing = "}"
			}
			doc := strings.Repeat(open, depth) + "1" + strings.Repeat(closing, depth)
			require.Equal(t, json.Valid([]byte(doc)), jsonx.Valid(doc), "depth %d of %q", depth, open)
		}
	}
}

func TestSyntaxErrorsSayWhereAndWhat(t *testing.T) {
	cases := []struct {
		in     string
		offset int
		msg    string
	}{
		{`{"a":1,}`, 7, `invalid character '}' looking for beginning of object key string`},
		{`[1 2]`, 3, `invalid character '2' after array element`},
		{`{"a":tru}`, 8, `invalid character '}' in literal true`},
		{`"a\qb"`, 3, `invalid character 'q' in string escape code`},
		{`{"a":[1,2`, 9, `unexpected end of JSON input`},
		{`1 2`, 2, `invalid character '2' after top-level value`},
	}
	for _, tc := range cases {
		err := jsonx.Validate(tc.in)
		require.ErrorIs(t, err, jsonx.ErrSyntax, tc.in)
		var syn *jsonx.SyntaxError
		require.ErrorAs(t, err, &syn)
		require.Equal(t, tc.offset, syn.Offset, tc.in)
		require.Equal(t, tc.msg, syn.Msg, tc.in)
	}
}

func TestATypeErrorNamesTheValueAndTheReadGoesOn(t *testing.T) {
	var s shape
	err := jsonx.Decode(`{"size":"three","kind":"k","list":[{"b":true},{"a":"x"}]}`, s.read)
	require.ErrorIs(t, err, jsonx.ErrType)
	require.EqualError(t, err, "jsonx: cannot read string as int at byte 8")
	require.Equal(t, "k", s.Kind, "the members after the mismatch are still read")
	require.Equal(t, "x", s.List[1].A)
}

func checkString(t *testing.T, s string) {
	want, err := json.Marshal(s)
	require.NoError(t, err)
	require.Equal(t, string(want), string(jsonx.AppendString(nil, s)), "string %q", s)
	var keep bytes.Buffer
	enc := json.NewEncoder(&keep)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	require.Equal(t, strings.TrimSuffix(keep.String(), "\n"), string(jsonx.AppendStringKeepHTML(nil, s)), "string %q, HTML kept", s)
}

func TestAppendStringWritesWhatEncodingJSONWrites(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "<script>&amp;</script>", "\u2028\u2029", "\x00\x01\b\f\n\r\t\x1f\x7f", "\xff\xfe ok \xc3", "é€😀", "\ufffd"} {
		checkString(t, s)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		checkString(t, string(b))
		checkString(t, randomString(rng))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("<a href=\"x\">&\u2028</a>\xff")
	f.Fuzz(checkString)
}

func checkCompact(t *testing.T, doc string) {
	if !json.Valid([]byte(doc)) {
		return
	}
	want, err := json.Marshal(json.RawMessage(doc))
	require.NoError(t, err)
	require.Equal(t, string(want), string(jsonx.AppendCompact(nil, doc)), "document %q", doc)
}

func TestAppendCompactWritesWhatEncodingJSONWritesForARawMessage(t *testing.T) {
	checkCompact(t, " { \"a\" : [ 1 , \"<b> & \\\" \u2028\" ] ,\n\"c\":\t{} } ")
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		checkCompact(t, randomDoc(rng, 0))
	}
}

func FuzzAppendCompact(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(checkCompact)
}

func checkFloat(t *testing.T, f float64) {
	got, ok := jsonx.AppendFloat(nil, f)
	want, err := json.Marshal(f)
	require.Equal(t, err == nil, ok, "float %v", f)
	if ok {
		require.Equal(t, string(want), string(got), "float %v", f)
	}
}

func TestAppendFloatWritesWhatEncodingJSONWrites(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789e300, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1), 27.5, 1e-10} {
		checkFloat(t, f)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		checkFloat(t, math.Float64frombits(rng.Uint64()))
	}
}

func FuzzAppendFloat(f *testing.F) {
	f.Add(math.Float64bits(1e-7))
	f.Fuzz(func(t *testing.T, bits uint64) { checkFloat(t, math.Float64frombits(bits)) })
}
