// Package sse reads and writes Server-Sent Events exactly as the WHATWG HTML
// standard defines them ("Server-sent events" → "Interpreting an event
// stream"), incrementally: the decoder takes bytes as they arrive, in any
// cut, keeps only the unfinished event, and has a documented size bound.
//
// Parser is the push decoder (Write the bytes, a Handler gets each event);
// Decoder is the pull decoder over an io.Reader; Encoder and AppendMessage
// write events. Feeding the same bytes in any chunking, one byte at a time
// included, gives the same events, retry values, errors and last event ID.
//
// It never knows about JSON or language models (package stream gives the
// events their meaning), never touches the network, never holds more than
// one event's worth of input (see WithMaxEventSize), never stops silently
// (ErrEventTooLarge, ErrIncomplete) and never panics on any input.
package sse
