package stream

import (
	"errors"

	"github.com/trickle-dev/trickle/internal/optionerr"
)

// ErrBadOption reports an option value that cannot work; every
// *OptionError matches it.
var ErrBadOption = errors.New("stream: bad option")

// OptionError names the option NewPipeline refused, its value and why.
type OptionError struct {
	Option string // the option's function, e.g. "WithDialect"
	Field  string // the field of a struct option ("ContentLength" of WithResponse); may be empty
	Value  any
	Reason string // e.g. "the limit must be positive"
}

func (e *OptionError) Error() string {
	return optionerr.Format(ErrBadOption, e.Option, e.Field, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrBadOption) true, and errors.Is(err,
// ErrUnknownDialect) too for WithDialect.
func (e *OptionError) Is(target error) bool {
	return target == ErrBadOption || target == ErrUnknownDialect && e.Option == "WithDialect"
}

// check names the first option of p whose value cannot work.
func (p *Pipeline) check() error {
	switch {
	case p.want != "" && !p.want.Known():
		return &OptionError{Option: "WithDialect", Value: string(p.want), Reason: "unknown dialect (want auto or one of " + DialectNames(dialectList) + ")"}
	case p.maxEvent <= 0:
		return &OptionError{Option: "WithMaxEventSize", Value: p.maxEvent, Reason: "the limit must be positive"}
	case p.length < -1:
		return &OptionError{Option: "WithResponse", Field: "ContentLength", Value: p.length, Reason: "want the body's length, or -1 when it is unknown"}
	}
	return nil
}
