package widget

import (
	"errors"
	"fmt"

	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// AttributeError is an element attribute whose value the option it sets
// refused: what trickle-error and the console tell the page's author, in
// the page's words (the attribute, not the Go option).
type AttributeError struct {
	Attribute string // e.g. "dialect"
	Value     any    // the value refused (one origin of image-origins)
	Reason    string // the option's reason
	Err       error  // the option's own error (a *stream.OptionError, …)
}

func (e *AttributeError) Error() string {
	return fmt.Sprintf("the %s attribute %q: %s", e.Attribute, fmt.Sprint(e.Value), e.Reason)
}

// Unwrap gives the option's error.
func (e *AttributeError) Unwrap() error { return e.Err }

// attributeError phrases an error of NewSession for a Config that
// Command.Config built as the attribute that set the refused option; any
// other error is returned as it is. (An announce attribute of no known
// mode never gets here: Command.Config reads it as the default, as HTML
// does an enumerated attribute's invalid value.)
func attributeError(err error) error {
	var so *stream.OptionError
	if errors.As(err, &so) && so.Option == "WithDialect" {
		return &AttributeError{Attribute: "dialect", Value: so.Value, Reason: so.Reason, Err: err}
	}
	var ro *render.OptionError
	if errors.As(err, &ro) && ro.Option == "WithPolicy" && ro.Field == "AllowedImageOrigins" {
		return &AttributeError{Attribute: "image-origins", Value: ro.Value, Reason: ro.Reason, Err: err}
	}
	return err
}
