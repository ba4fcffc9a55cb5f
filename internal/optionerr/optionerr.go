// Package optionerr writes the message of the option errors of the
// project's packages (sse, stream, render, a11y, relay): each keeps its own
// OptionError type and ErrBadOption, and they all read alike.
package optionerr

import "fmt"

// Format is an option error's message: "pkg: bad option: WithX(value):
// reason", the option named with its field ("WithY (Field)") when it is a
// struct's, a string value quoted.
func Format(bad error, option, field string, value any, reason string) string {
	name := option
	if field != "" {
		name += " (" + field + ")"
	}
	format := "%v: %s(%v): %s"
	if _, ok := value.(string); ok {
		format = "%v: %s(%q): %s"
	}
	return fmt.Sprintf(format, bad, name, value, reason)
}
