package sse

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// newParser is NewParser for options the test knows are good.
func newParser(tb testing.TB, h Handler, opts ...Option) *Parser {
	tb.Helper()
	p, err := NewParser(h, opts...)
	require.NoError(tb, err)
	return p
}

// newDecoder is NewDecoder for options the test knows are good.
func newDecoder(tb testing.TB, r io.Reader, opts ...Option) *Decoder {
	tb.Helper()
	d, err := NewDecoder(r, opts...)
	require.NoError(tb, err)
	return d
}

func TestConstructorsRefuseAnOptionThatCannotWorkAndNameIt(t *testing.T) {
	cases := []struct {
		name   string
		opt    Option
		option string
		value  any
		msg    string
	}{
		{"a zero event size", WithMaxEventSize(0), "WithMaxEventSize", 0, "sse: bad option: WithMaxEventSize(0): the limit must be positive"},
		{"a negative event size", WithMaxEventSize(-1), "WithMaxEventSize", -1, "sse: bad option: WithMaxEventSize(-1): the limit must be positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			constructors := map[string]func() error{
				"NewParser":  func() error { _, err := NewParser(nil, tc.opt); return err },
				"NewDecoder": func() error { _, err := NewDecoder(strings.NewReader(""), tc.opt); return err },
			}
			for name, construct := range constructors {
				err := construct()
				require.ErrorIs(t, err, ErrBadOption, name)
				var oe *OptionError
				require.True(t, errors.As(err, &oe), name)
				require.Equal(t, tc.option, oe.Option, name)
				require.Equal(t, tc.value, oe.Value, name)
				require.EqualError(t, err, tc.msg, name)
			}
		})
	}
}

func TestConstructorsAcceptNoOptionsAndTheDefaults(t *testing.T) {
	for _, opts := range [][]Option{nil, {nil}, {WithMaxEventSize(DefaultMaxEventSize)}, {WithMaxEventSize(64)}} {
		p, err := NewParser(nil, opts...)
		require.NoError(t, err)
		require.NotNil(t, p)
		d, err := NewDecoder(strings.NewReader("data: a\n\n"), opts...)
		require.NoError(t, err)
		_, err = d.Next()
		require.NoError(t, err)
	}
	p, err := NewParser(nil)
	require.NoError(t, err)
	require.Equal(t, DefaultMaxEventSize, p.max, "no option: the default bound")
}
