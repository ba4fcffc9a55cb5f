package sse

import (
	"errors"
	"fmt"
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
	name := e.Option
	if e.Field != "" {
		name += " (" + e.Field + ")"
	}
	format := "%v: %s(%v): %s"
	if _, ok := e.Value.(string); ok {
		format = "%v: %s(%q): %s"
	}
	return fmt.Sprintf(format, ErrBadOption, name, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrBadOption) true.
func (e *OptionError) Is(target error) bool { return target == ErrBadOption }
