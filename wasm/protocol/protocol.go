// Package protocol is the page↔Go protocol of the <trickle-answer> and
// <trickle-chat> elements, written down once: the page (wasm/web: trickle.js and
// trickle-worker.js) and the Go side (package wasm, wasm/element) talk
// through one message port, in a worker or on the main thread alike.
//
//   - The page sends commands: JSON objects whose "t" is a Kind (ask,
//     stream, retry, stop, detach, attach, stats, show), parsed by
//     widget.ParseCommand; and acknowledgements of applied frames, the
//     string form of an Ack.
//   - Go sends messages: JSON objects whose "t" is a message type — Ready
//     once, with the protocol Version and the announcer's MinGap; Warm;
//     Stats; frames and says of Update (update.go, with the keys the page
//     reads: UpdateKeys, PatchKeys, EndKeys). The worker script itself
//     sends Alive and Fail.
//   - A connection's bytes cross as inbox batches (ParseInbox).
//
// The golden files in testdata are read by this package's tests and by
// the page's (wasm/web/test/protocol.test.js): a change to either side
// that the other does not follow fails natively, not in a browser.
//
// The contract table (contract.go) is the one place the vocabularies
// crossing the page↔Go seam are written: every attribute of
// <trickle-answer> and <trickle-chat> (Attributes: name, command key,
// TypeScript type, elements, doc), their Events, the message types
// (Messages), the command Kinds and the widget's Strings with their
// English. `go generate ./wasm/protocol` writes the other sides from
// it: wasm/web/contract.js (which the page's modules import instead of
// spelling a name), the attribute, event and string parts of the
// package's typings (trickle-answer.d.ts, react.d.ts, vue.d.ts), the
// manifest's attributes and events, and english.go (StrX and EnglishX
// constants for the Go side). A test fails when any of them is stale.
//
// To add an attribute: add its row to Attributes (On: OnAnswer, or
// OnAnswer | OnChat for one a chat hands to its answers); if Go reads it,
// give it a Key constant beside KeyURL and a case in
// widget.ParseCommand (a test fails until it has one); run go generate
// ./wasm/protocol; document it in the README's attribute table
// (cmd/trickle's docs test compares the two). The page then sends it
// with every command, the chat forwards it, and the typings and the
// manifest declare it.
package protocol

import (
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/internal/jsonx"
)

// Version is the protocol's version, sent in Ready: a page and a .wasm
// from different builds tell it apart from a bug. 2: a tail patch may trim
// the text it continues (PatchTrim).
const Version = 2

// WorkerName begins the name the page gives the widget's Web Worker,
// followed by the URL of the .wasm it will boot: the worker script
// starts that download with its first line, before the page's first
// message (trickle-worker.js).
const WorkerName = "trickle "

// Message types, the "t" of what Go sends.
const (
	TypeReady = "ready" // Go is ready for commands (Ready)
	TypeWarm  = "warm"  // HTML for the page to parse once, off-screen (Warm)
	TypeStats = "stats" // the answer to a stats command (Stats)
	TypeFrame = "frame" // a frame of updates, applied in an animation frame
	TypeSay   = "say"   // announcements alone, written at once
	TypeAlive = "alive" // the worker script runs (trickle-worker.js, before Go)
	TypeFail  = "fail"  // the worker script could not start Go (trickle-worker.js)
)

// Kind is a command's kind, its "t".
type Kind string

// The command kinds.
const (
	Attach Kind = "attach" // an element is on the page
	Ask    Kind = "ask"    // ask(): a prompt or a request body
	Stream Kind = "stream" // stream(): the page's own fetch
	Retry  Kind = "retry"  // the retry button, retry()
	Stop   Kind = "stop"   // the stop button, stop()
	Detach Kind = "detach" // the element left the page
	Stats  Kind = "stats"  // the lifecycle tests' counters
	Show   Kind = "show"   // el.message, el.markdown: a stored answer
)

// Ready is the first message Go sends. thread is where Go runs ("worker"
// or "main"); minGap is the least time between a sentence and the status
// after it, which the page keeps when it writes the status (a11y.MinGap).
func Ready(thread string, minGap time.Duration) string {
	b := jsonx.AppendString([]byte(`{"t":"`+TypeReady+`","thread":`), thread)
	b = append(b, `,"v":`...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, `,"min_gap_ms":`...)
	b = strconv.AppendInt(b, minGap.Milliseconds(), 10)
	return string(append(b, '}'))
}

// Warm is the warm-up message: html for the page to parse once.
func Warm(html string) string {
	b := jsonx.AppendString([]byte(`{"t":"`+TypeWarm+`","html":`), html)
	return string(append(b, '}'))
}

// Counts are what a stats message reports.
type Counts struct {
	Elements, Funcs, Goroutines int
	Thread                      string
	// Go's memory (runtime.MemStats): the heap's spans in use, the bytes
	// Go took from the WebAssembly memory and the collections so far; and
	// the size of that memory (it never shrinks: what the thread holds for
	// Go, which measureUserAgentSpecificMemory does not count).
	HeapInuse, Sys, WasmMemory uint64
	NumGC                      uint32
}

// StatsMessage is the answer to a stats command.
func StatsMessage(c Counts) string {
	b := []byte(`{"t":"` + TypeStats + `","elements":`)
	b = strconv.AppendInt(b, int64(c.Elements), 10)
	b = append(b, `,"funcs":`...)
	b = strconv.AppendInt(b, int64(c.Funcs), 10)
	b = append(b, `,"goroutines":`...)
	b = strconv.AppendInt(b, int64(c.Goroutines), 10)
	b = append(b, `,"thread":`...)
	b = jsonx.AppendString(b, c.Thread)
	b = append(b, `,"heap_inuse":`...)
	b = strconv.AppendUint(b, c.HeapInuse, 10)
	b = append(b, `,"sys":`...)
	b = strconv.AppendUint(b, c.Sys, 10)
	b = append(b, `,"wasm_memory":`...)
	b = strconv.AppendUint(b, c.WasmMemory, 10)
	b = append(b, `,"num_gc":`...)
	b = strconv.AppendUint(b, uint64(c.NumGC), 10)
	return string(append(b, '}'))
}

// Ack is the page's acknowledgement of an applied frame: the time of the
// animation frame that applied it (epoch milliseconds) and, from the
// worker's side of the port, whether bytes arrived while it was in flight.
type Ack struct {
	At   float64
	Wake bool
}

// String is the ack as it crosses the port: "ack:<ms>" or
// "ack+wake:<ms>".
func (a Ack) String() string {
	kind := "ack:"
	if a.Wake {
		kind = "ack+wake:"
	}
	return kind + strconv.FormatFloat(a.At, 'f', -1, 64)
}

// ParseAck reads an ack; ok is false for anything else.
func ParseAck(s string) (a Ack, ok bool) {
	kind, ms, found := strings.Cut(s, ":")
	if !found || (kind != "ack" && kind != "ack+wake") {
		return Ack{}, false
	}
	at, err := strconv.ParseFloat(ms, 64)
	if err != nil {
		return Ack{}, false
	}
	return Ack{At: at, Wake: kind == "ack+wake"}, true
}

// Clock converts between Go's time and the milliseconds since the epoch
// the page and the worker share (performance.timeOrigin +
// performance.now(): the same instant reads the same on both threads),
// from one reading of both clocks.
type Clock struct {
	Go time.Time
	JS float64
}

// At is the Go time of epoch milliseconds ms (zero for 0).
func (c Clock) At(ms float64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return c.Go.Add(-time.Duration((c.JS - ms) * float64(time.Millisecond)))
}

// MS is the epoch milliseconds of Go time t.
func (c Clock) MS(t time.Time) float64 {
	return c.JS - float64(c.Go.Sub(t))/float64(time.Millisecond)
}
