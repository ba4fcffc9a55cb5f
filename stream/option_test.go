package stream

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// newPipeline is NewPipeline for options the test knows are good.
func newPipeline(tb testing.TB, opts ...Option) *Pipeline {
	tb.Helper()
	p, err := NewPipeline(opts...)
	require.NoError(tb, err)
	return p
}

func TestNewPipelineRefusesAnOptionThatCannotWorkAndNamesIt(t *testing.T) {
	cases := []struct {
		name          string
		opts          []Option
		option, field string
		value         any
		msg           string
	}{
		{"an unknown dialect", []Option{WithDialect("klingon")}, "WithDialect", "", "klingon",
			`stream: bad option: WithDialect("klingon"): unknown dialect (want auto or one of ` + DialectNames(Dialects()) + ")"},
		{"a dialect in the wrong case (ParseDialect reads names)", []Option{WithDialect("OpenAI")}, "WithDialect", "", "OpenAI",
			`stream: bad option: WithDialect("OpenAI"): unknown dialect (want auto or one of ` + DialectNames(Dialects()) + ")"},
		{"a zero event size", []Option{WithMaxEventSize(0)}, "WithMaxEventSize", "", 0,
			"stream: bad option: WithMaxEventSize(0): the limit must be positive"},
		{"a negative event size", []Option{WithMaxEventSize(-5)}, "WithMaxEventSize", "", -5,
			"stream: bad option: WithMaxEventSize(-5): the limit must be positive"},
		{"a negative content length other than unknown", []Option{WithResponse(Response{ContentLength: -2})}, "WithResponse", "ContentLength", int64(-2),
			"stream: bad option: WithResponse (ContentLength)(-2): want the body's length, or -1 when it is unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPipeline(tc.opts...)
			require.Nil(t, p)
			require.ErrorIs(t, err, ErrBadOption)
			var oe *OptionError
			require.True(t, errors.As(err, &oe))
			require.Equal(t, tc.option, oe.Option)
			require.Equal(t, tc.field, oe.Field)
			require.Equal(t, tc.value, oe.Value)
			require.EqualError(t, err, tc.msg)
		})
	}
}

func TestAnUnknownDialectIsStillAnUnknownDialectError(t *testing.T) {
	_, err := NewPipeline(WithDialect("klingon"))
	require.ErrorIs(t, err, ErrUnknownDialect)
	_, err = NewPipeline(WithMaxEventSize(0))
	require.NotErrorIs(t, err, ErrUnknownDialect)
}

func TestNewPipelineAcceptsNoOptionsAndEveryDefault(t *testing.T) {
	good := [][]Option{
		nil,
		{nil},
		{WithDialect(""), WithDialect(DialectAuto)},
		{WithMaxEventSize(DefaultMaxEventSize)},
		{WithResponse(Response{ContentLength: -1}), WithResponse(Response{ContentLength: 0})},
		{WithContentType(""), WithEventHandler(nil)},
	}
	for _, d := range Dialects() {
		good = append(good, []Option{WithDialect(d)})
	}
	for _, opts := range good {
		p, err := NewPipeline(opts...)
		require.NoError(t, err)
		require.Equal(t, Waiting, p.Answer().Status())
	}
	require.Equal(t, DefaultMaxEventSize, newPipeline(t).maxEvent, "no option: the default bound")
}
