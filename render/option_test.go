package render

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark/extension"
)

// newDocument is NewDocument for options the test knows are good.
func newDocument(tb testing.TB, opts ...Option) *Document {
	tb.Helper()
	d, err := NewDocument(opts...)
	require.NoError(tb, err)
	return d
}

// convert is Convert for options the test knows are good.
func convert(tb testing.TB, text string, opts ...Option) string {
	tb.Helper()
	html, err := Convert(text, opts...)
	require.NoError(tb, err)
	return html
}

func TestNewDocumentAndConvertRefuseAnOptionThatCannotWorkAndNameIt(t *testing.T) {
	cases := []struct {
		name          string
		opt           Option
		option, field string
		value         any
		msg           string
	}{
		{"an image origin without a scheme", WithPolicy(Policy{AllowedImageOrigins: []string{"https://ok.example", "cdn.example"}}), "WithPolicy", "AllowedImageOrigins", "cdn.example",
			`render: bad option: WithPolicy (AllowedImageOrigins)("cdn.example"): not an origin (want scheme://host[:port])`},
		{"an image origin with a path", WithPolicy(Policy{AllowedImageOrigins: []string{"https://cdn.example/img"}}), "WithPolicy", "AllowedImageOrigins", "https://cdn.example/img",
			`render: bad option: WithPolicy (AllowedImageOrigins)("https://cdn.example/img"): not an origin (want scheme://host[:port])`},
		{"an image origin with userinfo", WithPolicy(Policy{AllowedImageOrigins: []string{"https://a@cdn.example"}}), "WithPolicy", "AllowedImageOrigins", "https://a@cdn.example",
			`render: bad option: WithPolicy (AllowedImageOrigins)("https://a@cdn.example"): not an origin (want scheme://host[:port])`},
		{"an empty image origin", WithPolicy(Policy{AllowedImageOrigins: []string{""}}), "WithPolicy", "AllowedImageOrigins", "",
			`render: bad option: WithPolicy (AllowedImageOrigins)(""): not an origin (want scheme://host[:port])`},
		{"a same origin that is a URL's host only", WithPolicy(Policy{SameOrigin: "app.example"}), "WithPolicy", "SameOrigin", "app.example",
			`render: bad option: WithPolicy (SameOrigin)("app.example"): not an origin (want scheme://host[:port])`},
		{"an opaque origin", WithPolicy(Policy{SameOrigin: "null"}), "WithPolicy", "SameOrigin", "null",
			`render: bad option: WithPolicy (SameOrigin)("null"): not an origin (want scheme://host[:port])`},
		{"a link scheme with its colon", WithPolicy(Policy{LinkSchemes: []string{"https", "tel:"}}), "WithPolicy", "LinkSchemes", "tel:",
			`render: bad option: WithPolicy (LinkSchemes)("tel:"): not a URL scheme (a letter, then letters, digits, +, - or .)`},
		{"an empty link scheme", WithPolicy(Policy{LinkSchemes: []string{""}}), "WithPolicy", "LinkSchemes", "",
			`render: bad option: WithPolicy (LinkSchemes)(""): not a URL scheme (a letter, then letters, digits, +, - or .)`},
		{"a footnote prefix that would break out of its attribute", WithFootnotePrefix(`a"><script>`), "WithFootnotePrefix", "", `a"><script>`,
			`render: bad option: WithFootnotePrefix("a\"><script>"): want ASCII letters, digits, - and _ only (it is written into ids as it is)`},
		{"a footnote prefix with a space", WithFootnotePrefix("a b"), "WithFootnotePrefix", "", "a b",
			`render: bad option: WithFootnotePrefix("a b"): want ASCII letters, digits, - and _ only (it is written into ids as it is)`},
		{"an extension without a name", WithExtension(&Extension{Extender: extension.Strikethrough}), "WithExtension", "Name", "",
			`render: bad option: WithExtension (Name)(""): an extension needs a name (instances are cached by it)`},
		{"an extension without an extender", WithExtension(&Extension{Name: "x"}), "WithExtension", "Extender", "x",
			`render: bad option: WithExtension (Extender)("x"): an extension needs an Extender`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, derr := NewDocument(tc.opt)
			require.Nil(t, d)
			html, cerr := Convert("# x", tc.opt)
			require.Empty(t, html)
			for _, err := range []error{derr, cerr} {
				require.ErrorIs(t, err, ErrBadOption)
				var oe *OptionError
				require.True(t, errors.As(err, &oe))
				require.Equal(t, tc.option, oe.Option)
				require.Equal(t, tc.field, oe.Field)
				require.Equal(t, tc.value, oe.Value)
				require.EqualError(t, err, tc.msg)
			}
		})
	}
}

func TestNewDocumentAndConvertAcceptNoOptionsAndGoodOnes(t *testing.T) {
	good := [][]Option{
		nil,
		{nil},
		{WithPolicy(Policy{})},
		{WithPolicy(Policy{
			AllowedImageOrigins: []string{"https://cdn.example", "http://localhost:8080", "https://img.example/", "http://[::1]:3000", "HTTPS://Upper.Example"},
			SameOrigin:          "https://app.example",
			LinkSchemes:         []string{"https", "tel", "web+app", "x-1.2"},
			AllowDataImages:     true,
		})},
		{WithPolicy(Policy{LinkSchemes: []string{}})},
		{WithFootnotePrefix(""), WithFootnotePrefix("trickle-3-"), WithFootnotePrefix("A_z-09")},
		{WithExtension(nil)},
		{WithExtension(&Extension{Name: "strike", Extender: extension.Strikethrough})},
		{WithRepair(true), WithDirAuto(true)},
	}
	for _, opts := range good {
		d, err := NewDocument(opts...)
		require.NoError(t, err)
		f := d.Finish()
		html, err := Convert("", opts...)
		require.NoError(t, err)
		require.Equal(t, html, f.Append+f.Tail)
	}
}

// must is for the helpers with no testing.TB, on options the test knows
// are good: a refused one panics, which fails the test.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
