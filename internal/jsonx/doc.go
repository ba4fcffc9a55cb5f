// Package jsonx is the small JSON reader and writer the WebAssembly widget
// links instead of encoding/json: a strict RFC 8259 validator, a pull
// reader that decodes straight into the caller's structs without
// reflection (strings come back as substrings of the input when they hold
// no escapes, so an event's fields cost no allocation), and the few writers
// the widget needs (string quoting, with or without HTML escaping: the
// tree's one JSON string quoter; compaction, float formatting).
//
// A struct's reader is not written by hand: jsonxgen (go generate) writes
// it from the struct's json tags, so each wire name is written once.
//
// Its results are encoding/json's, byte for byte where it writes and value
// for value where it reads: the same inputs are accepted and rejected
// (including the nesting limit), strings are unescaped the same way
// (invalid UTF-8 and lone surrogates become U+FFFD), object keys match
// field names exactly or else case-insensitively, null leaves a value
// alone, and a value of the wrong type is a TypeError that does not stop
// the rest of the object from being read. The tests hold it to that with
// encoding/json as the oracle.
//
// It never uses reflection, never decodes into interface values and never
// allocates a tree of the document.
package jsonx
