package element

import (
	"errors"
	"fmt"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// Highlighter holds the render options that highlight code blocks. The
// highlighting build of the widget sets it (wasm/cmd/widget, build tag
// trickle_highlight, imports render/highlight); in the default build it is
// empty, chroma is not linked, and Config.Highlight does nothing.
var Highlighter []render.Option

// RenderOptions is how the widget renders: the policy, dir="auto" on every
// text block (a right-to-left answer reads right to left, a mixed one block
// by block), then extra. render.Convert with the same options is the
// oracle for what the widget shows.
func RenderOptions(p render.Policy, extra ...render.Option) []render.Option {
	return append([]render.Option{render.WithPolicy(p), render.WithDirAuto(true)}, extra...)
}

// options keeps the options of each answer's pipeline and announcer as
// s.cfg asks for them (NewSession's first answer checks them) and returns
// the document's.
func (s *Session) options() []render.Option {
	cfg := s.cfg
	s.pipeOpts = []stream.Option{stream.WithEventHandler(s.event)}
	if cfg.Dialect != "" {
		s.pipeOpts = append(s.pipeOpts, stream.WithDialect(cfg.Dialect))
	}
	if cfg.ContentType != "" {
		s.pipeOpts = append(s.pipeOpts, stream.WithContentType(cfg.ContentType))
	}
	s.annOpts = []a11y.Option{a11y.WithMode(cfg.Announce), a11y.WithClock(s.now), a11y.WithStartStatus(cfg.Words.Responding)}
	extra := cfg.Render
	if cfg.Highlight {
		extra = append(append([]render.Option(nil), Highlighter...), extra...)
	}
	if cfg.FootnotePrefix != "" {
		extra = append(append([]render.Option(nil), extra...), render.WithFootnotePrefix(cfg.FootnotePrefix))
	}
	return RenderOptions(cfg.Policy, extra...)
}

// AttributeError is an element attribute whose value the option it sets
// refused: what trickle-error and the console tell the page's author, in
// the page's words (the attribute, not the Go option).
type AttributeError struct {
	_         incomparable
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
	if so, ok := errors.AsType[*stream.OptionError](err); ok && so.Option == "WithDialect" {
		return &AttributeError{Attribute: "dialect", Value: so.Value, Reason: so.Reason, Err: err}
	}
	if ro, ok := errors.AsType[*render.OptionError](err); ok && ro.Option == "WithPolicy" && ro.Field == "AllowedImageOrigins" {
		return &AttributeError{Attribute: "image-origins", Value: ro.Value, Reason: ro.Reason, Err: err}
	}
	return err
}
