package render

import (
	"errors"
	"strings"

	"github.com/trickle-dev/trickle/internal/anyof"
	"github.com/trickle-dev/trickle/internal/optionerr"
)

// ErrBadOption reports an option value that cannot work; every
// *OptionError matches it.
var ErrBadOption = errors.New("render: bad option")

// OptionError names the option NewDocument or Convert refused, its value
// and why.
type OptionError struct {
	Option string // the option's function, e.g. "WithPolicy"
	Field  string // the field of a struct option ("AllowedImageOrigins" of WithPolicy); may be empty
	Value  any    // for a list field, the one entry refused
	Reason string // e.g. "not an origin (want scheme://host[:port])"
}

func (e *OptionError) Error() string {
	return optionerr.Format(ErrBadOption, e.Option, e.Field, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrBadOption) true.
func (e *OptionError) Is(target error) bool { return target == ErrBadOption }

const notOrigin = "not an origin (want scheme://host[:port])"

// check names the first option of c whose value cannot work.
func (c *config) check() error {
	for _, o := range c.policy.AllowedImageOrigins {
		if !isOrigin(o) {
			return &OptionError{Option: "WithPolicy", Field: "AllowedImageOrigins", Value: o, Reason: notOrigin}
		}
	}
	if o := c.policy.SameOrigin; o != "" && !isOrigin(o) {
		return &OptionError{Option: "WithPolicy", Field: "SameOrigin", Value: o, Reason: notOrigin}
	}
	for _, s := range c.policy.LinkSchemes {
		if !isScheme(s) {
			return &OptionError{Option: "WithPolicy", Field: "LinkSchemes", Value: s, Reason: "not a URL scheme (a letter, then letters, digits, +, - or .)"}
		}
	}
	for _, b := range c.fnPrefix {
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '_') {
			return &OptionError{Option: "WithFootnotePrefix", Value: string(c.fnPrefix), Reason: "want ASCII letters, digits, - and _ only (it is written into ids as it is)"}
		}
	}
	if e := c.ext; e != nil {
		if e.Name == "" {
			return &OptionError{Option: "WithExtension", Field: "Name", Value: e.Name, Reason: "an extension needs a name (instances are cached by it)"}
		}
		if e.Extender == nil {
			return &OptionError{Option: "WithExtension", Field: "Extender", Value: e.Name, Reason: "an extension needs an Extender"}
		}
	}
	return nil
}

// isOrigin reports whether o is an origin as a browser serializes one:
// scheme://host[:port], nothing after it but an optional "/".
func isOrigin(o string) bool {
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || !isScheme(scheme) {
		return false
	}
	rest = strings.TrimSuffix(rest, "/")
	host, ok := authorityHost(rest)
	return ok && host != "" && !anyof.Contains(rest, `/\?#@`)
}

// isScheme reports whether s is a URL scheme (RFC 3986 §3.1).
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !alpha && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}
