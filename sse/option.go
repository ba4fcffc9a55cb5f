package sse

import (
	"errors"

	"github.com/trickle-dev/trickle/internal/optionerr"
)

// ErrBadOption reports an option value that cannot work; every
// *OptionError matches it.
var ErrBadOption = errors.New("sse: bad option")

// OptionError names the option NewParser or NewDecoder refused, its value
// and why.
type OptionError struct {
	Option string // the option's function, e.g. "WithMaxEventSize"
	Field  string // the field of a struct option; empty for the others
	Value  any
	Reason string // e.g. "the limit must be positive"
}

func (e *OptionError) Error() string {
	return optionerr.Format(ErrBadOption, e.Option, e.Field, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrBadOption) true.
func (e *OptionError) Is(target error) bool { return target == ErrBadOption }
