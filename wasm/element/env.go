package element

import (
	"time"

	"github.com/trickle-dev/trickle/stream"
)

// Env is what an Element acts through. Every method returns at once; what
// it starts reports back as an event on the element (Opened, Response,
// Ended, Timer), on the same loop, never from inside the call.
type Env interface {
	// Open starts connection c.
	Open(c Conn)
	// Close ends connection gen: aborts the fetch or closes the
	// WebSocket. stop is the reader's Stop: over an open WebSocket the
	// relay is asked to stop the generation first.
	Close(gen int, stop bool)
	// Send writes text on WebSocket gen.
	Send(gen int, text string)
	// Take returns the inbox batch (see protocol.ParseInbox) of the bytes
	// connection gen gathered since the last Take, or nil.
	Take(gen int) []byte
	// Cancel asks the relay to cancel a generation: DELETE url with
	// headers (the request's own: its authorization), sent so that it
	// survives the page going. What the relay answered comes back as
	// the element's Cancelled.
	Cancel(url string, headers [][2]string)
	// After delivers t to the element's Timer after d.
	After(d time.Duration, t Timer)
	// Want says the element has something for the next frame.
	Want()
	// Say posts a message (protocol.AppendSay) to the page now, ahead of the frame.
	Say(msg []byte)
}

// Clock is the time an Element and its sessions run on. It is two funcs
// handed to NewElement, not methods of Env: a time.Time in the method of a
// type that becomes an interface value (the Env) would link time's
// formatting into the widget, since fmt calls String through an interface
// (docs/notes/widget-size.md).
type Clock struct {
	// Now is the time.
	Now func() time.Time
	// EpochMS is t in the page's milliseconds since the epoch.
	EpochMS func(t time.Time) float64
}

// CancelResult is what a Stop's DELETE got: the relay's status and body,
// or the browser's error text when it got no response.
type CancelResult struct {
	URL    string
	Status int
	Body   []byte
	Err    string
}

// Conn is a connection an Element asks its Env to open.
type Conn struct {
	// Gen numbers the element's connections: events carry it, and one of
	// an earlier connection is stale.
	Gen int
	// WebSocket: open URL as a WebSocket; Opened then sends First.
	WebSocket bool
	URL       string
	// Adopt: take over the page's early request (Early) instead of
	// sending one: its response is known, its body is read from the first
	// byte.
	Adopt bool
	// PageInit: fetch URL with the page's own RequestInit (stream()).
	// Otherwise Method, Headers and Body make the request.
	PageInit bool
	Method   string
	Headers  [][2]string
	Body     string
}

// Early is the response to the request the page sent for an ask before
// Go was ready (wasm/web/early), which the answer's first connection
// adopts. A failed early request is reported as that connection's Ended.
type Early struct {
	_         incomparable
	OK        bool
	Status    int
	StreamID  string
	StreamURL string
	Head      stream.Response
	// StartTold and FirstTokenTold: the page already dispatched the
	// answer's trickle-start and trickle-first-token, from the early view
	// (the first when it began, the second in the frame that painted the
	// first token, docs/notes/early-view.md), so Go does not again.
	StartTold, FirstTokenTold bool
	// FirstTokenMS is the ttft_ms the page was told (with
	// FirstTokenTold): the metrics give it as theirs.
	FirstTokenMS float64
}

// Response is what a fetch's response says.
type Response struct {
	OK       bool
	Status   int
	StreamID string // X-Trickle-Stream, "" when absent
	// StreamURL is X-Trickle-Stream-URL: where the stream lives, relative
	// to the request ("" when absent; see StreamURLs).
	StreamURL string
	// Head is what the pipeline reads of the headers (ResponseHead): the
	// framing of the body and, for a text body, its length.
	Head stream.Response
}

// EndKind says how a connection ended.
type EndKind int

const (
	// EndDone: the body ended, or the WebSocket closed (see End.Close).
	EndDone EndKind = iota + 1
	// EndReadError: reading the body failed mid-way.
	EndReadError
	// EndFetchError: the fetch failed before a response.
	EndFetchError
)

// End is how a connection ended.
type End struct {
	Kind EndKind
	// Err is the browser's error text (EndReadError, EndFetchError).
	Err string
	// Close is the WebSocket's close event (EndDone of a WebSocket).
	Close *WSClosed
}

// WSClosed is a WebSocket's close event.
type WSClosed struct {
	_      incomparable
	URL    string
	Code   int
	Reason string
}

// TimerKind says what a timer is for.
type TimerKind int

const (
	// TimerRetry: time to resume a dropped connection (Gen is the
	// connection generation that dropped).
	TimerRetry TimerKind = iota + 1
	// TimerAnnounce: the announcer has something due.
	TimerAnnounce
	// TimerIdle: time to check whether connection Gen went silent for
	// the idle timeout.
	TimerIdle
)

// Timer is a timer an Element asked its Env for.
type Timer struct {
	Kind TimerKind
	Gen  int
}
