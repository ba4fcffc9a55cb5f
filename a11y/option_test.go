package a11y

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// newAnnouncer is New for options the test knows are good.
func newAnnouncer(tb testing.TB, opts ...Option) *Announcer {
	tb.Helper()
	a, err := New(opts...)
	require.NoError(tb, err)
	return a
}

func TestNewRefusesAnOptionThatCannotWorkAndNamesIt(t *testing.T) {
	cases := []struct {
		name  string
		opt   Option
		value string
		msg   string
	}{
		{"an unknown mode", WithMode("loud"), "loud", `a11y: bad option: WithMode("loud"): want sentences, complete or off`},
		{"a mode in another case (ParseMode reads names)", WithMode("Off"), "Off", `a11y: bad option: WithMode("Off"): want sentences, complete or off`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(tc.opt)
			require.Nil(t, a)
			require.ErrorIs(t, err, ErrBadOption)
			var oe *OptionError
			require.True(t, errors.As(err, &oe))
			require.Equal(t, "WithMode", oe.Option)
			require.Equal(t, tc.value, oe.Value)
			require.EqualError(t, err, tc.msg)
		})
	}
}

func TestNewAcceptsNoOptionsAndTheZeroValuesAsTheDefaults(t *testing.T) {
	require.Equal(t, DefaultMode, newAnnouncer(t).Mode())
	require.Equal(t, DefaultMode, newAnnouncer(t, nil).Mode())
	require.Equal(t, DefaultMode, newAnnouncer(t, WithMode("")).Mode(), `"" is the default, as ParseMode reads it`)
	for _, m := range Modes() {
		require.Equal(t, m, newAnnouncer(t, WithMode(m)).Mode())
	}
	newAnnouncer(t, WithClock(nil), WithStartStatus(""))
}
