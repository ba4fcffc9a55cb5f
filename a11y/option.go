package a11y

import (
	"errors"

	"github.com/trickle-dev/trickle/internal/optionerr"
)

// ErrBadOption reports an option value that cannot work; every
// *OptionError matches it.
var ErrBadOption = errors.New("a11y: bad option")

// OptionError names the option New refused, its value and why.
type OptionError struct {
	Option string // the option's function, e.g. "WithMode"
	Field  string // the field of a struct option; empty for the others
	Value  any
	Reason string // e.g. "want sentences, complete or off"
}

func (e *OptionError) Error() string {
	return optionerr.Format(ErrBadOption, e.Option, e.Field, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrBadOption) true.
func (e *OptionError) Is(target error) bool { return target == ErrBadOption }

// known reports whether m is one of Modes.
func (m Mode) known() bool {
	for _, k := range Modes() {
		if m == k {
			return true
		}
	}
	return false
}
