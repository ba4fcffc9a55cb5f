package wasm

import "strconv"

// panicText says what a recovered panic value is, as fmt's %v would for
// the values a panic carries (a runtime error, an error, a string, a
// Stringer, an integer or a bool), for the error that fails the answer:
// fmt.Errorf stays out of the widget (issue 34, "Lighter"). Any other
// value is named only as a panic: its detail would need reflection.
func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case interface{ String() string }:
		return v.String()
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case uint:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case bool:
		return strconv.FormatBool(v)
	}
	return "a panic of a value that cannot be shown"
}
