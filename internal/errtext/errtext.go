// Package errtext makes errors that wrap others, as fmt.Errorf does with
// %w, for the packages the widget links: their messages are built with
// strings and strconv, and fmt.Errorf (its formatting and the integer
// sort it does for several %w) stays out of the .wasm (issue 34,
// "Lighter"). errors.Is, errors.As and errors.Unwrap see through them as
// through fmt's.
package errtext

// Wrap is an error with the text msg wrapping err, as fmt.Errorf with one
// %w: errors.Unwrap gives err.
func Wrap(msg string, err error) error { return &wrapError{msg: msg, err: err} }

// Wrap2 is an error with the text msg wrapping a and b, as fmt.Errorf
// with two %w.
func Wrap2(msg string, a, b error) error { return &wrapErrors{msg: msg, errs: []error{a, b}} }

// Text is err's text as fmt's %v writes it: "<nil>" for none.
func Text(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// (A [0]func() first: not comparable, so no equality function in the
// .wasm for either type; they are compared as pointers.)
type wrapError struct {
	_   [0]func()
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }
func (e *wrapError) Unwrap() error { return e.err }

type wrapErrors struct {
	_    [0]func()
	msg  string
	errs []error
}

func (e *wrapErrors) Error() string   { return e.msg }
func (e *wrapErrors) Unwrap() []error { return e.errs }
