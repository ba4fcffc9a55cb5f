// Package sse reads and writes Server-Sent Events exactly as the WHATWG HTML
// standard defines them ("Server-sent events" → "Interpreting an event
// stream"), incrementally: the decoder takes bytes as they arrive, in any
// cut, keeps only the unfinished event, and has a documented size bound.
//
// It never knows about JSON or language models; package stream gives the
// events their meaning.
package sse
