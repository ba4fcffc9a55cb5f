// Package wire is the contract between the relay and its clients, written
// once: the headers both sides read, the states of a stream, the status
// words of the relay's own terminal event and its JSON, the error types
// and codes of a refusal with their HTTP status, the answer of a stream's
// info and the WebSocket's control messages. The relay writes these
// values and clients (the widget, SDK code, scripts) read them; neither
// side spells them again.
//
// It imports nothing but time, so that a client compiled to wasm pays
// nothing for it, and it does nothing: no I/O, no parsing beyond what the
// types say.
package wire

import "time"

// Headers the relay and its clients exchange.
const (
	// HeaderStream is the response header naming a new stream's id.
	HeaderStream = "X-Trickle-Stream"
	// HeaderStreamURL is the response header with the stream's resume URL,
	// relative to the request's (GET it with Last-Event-ID to resume, DELETE
	// it to stop).
	HeaderStreamURL = "X-Trickle-Stream-URL"
	// HeaderResume is the request header with which an HTTP client says
	// whether it will resume a stream it was cut from: ResumeOn keeps the
	// generation running for the relay's grace period after a disconnect;
	// ResumeOff, or no header, cancels it at once. WebSocket clients resume
	// by default.
	HeaderResume = "X-Trickle-Resume"
	// HeaderRequestID names the request in the relay's log and in every
	// error body (request_id).
	HeaderRequestID = "X-Request-Id"
	// HeaderRetryAfter is the standard header of a refusal that may
	// succeed later, in whole seconds.
	HeaderRetryAfter = "Retry-After"
	// HeaderLastEventID is the standard SSE header of a resuming client;
	// QueryLastEventID is its query-parameter form, for clients that
	// cannot set headers.
	HeaderLastEventID = "Last-Event-ID"
	QueryLastEventID  = "last_event_id"
)

// The values of HeaderResume.
const (
	ResumeOn  = "on"
	ResumeOff = "off"
)

// State is the state of a stream, as its info reports it.
type State string

// The states of a stream.
const (
	StateRunning   State = "running"   // the generation is going on
	StateComplete  State = "complete"  // the generator finished on its own
	StateStopped   State = "stopped"   // a client asked to stop
	StateCancelled State = "cancelled" // its client left and did not come back (at once, or within the grace period), or the relay shut down
	StateFailed    State = "failed"    // the upstream (or an injected fault) failed
	StateWithheld  State = "withheld"  // the hold-back checker blocked a sentence
)

// Ended reports whether s is a state a stream ends in.
func (s State) Ended() bool {
	switch s {
	case StateComplete, StateStopped, StateCancelled, StateFailed, StateWithheld:
		return true
	}
	return false
}

// StatusEvent is the SSE event type of the relay's own terminal event,
// whose data is a StatusData.
const StatusEvent = "trickle.status"

// Status is the status word of a StatusEvent.
type Status string

// The status words a client acts on.
const (
	StatusStopped Status = "stopped" // a client asked to stop
	StatusFailed  Status = "failed"  // the upstream or the relay failed, or the relay refused the request
	StatusGone    Status = "gone"    // the stream expired or never existed
	// StatusWithheld: the relay's hold-back checker blocked a sentence,
	// and the answer ends before it.
	StatusWithheld Status = "withheld"
)

// Known reports whether s is one of the status words above.
func (s Status) Known() bool {
	switch s {
	case StatusStopped, StatusFailed, StatusGone, StatusWithheld:
		return true
	}
	return false
}

// WithheldMessage is the message of a StatusWithheld event.
const WithheldMessage = "This answer was withheld."

// Usage is what a stream generated: its output tokens, Estimated when they
// are counted from the events the relay received (a real upstream's, one
// token an event or one per four bytes of its text, whichever is more)
// rather than known (the simulated model's, or the usage
// the upstream reported).
type Usage struct {
	CompletionTokens int  `json:"completion_tokens"`
	Estimated        bool `json:"estimated"`
}

// StatusData is the JSON data of a StatusEvent: the status word and the
// message the widget reads, and the same as an OpenAI-style "error" object,
// which the official SDKs raise on (they take any data event with an error
// for the provider's), so that a stream that was stopped, failed or is
// gone never ends like a complete one in SDK code. Usage, when present, is
// what was generated up to the end.
type StatusData struct {
	Status  Status      `json:"status"`
	Message string      `json:"message"`
	Error   StatusError `json:"error"`
	Usage   *Usage      `json:"usage,omitempty"`
}

// StatusError is StatusData's OpenAI-style error object: Type is always
// TypeStatus and Code the status word.
type StatusError struct {
	Message string    `json:"message"`
	Type    ErrorType `json:"type"`
	Code    string    `json:"code"`
}

// NewStatusData is the data of a StatusEvent saying status and message; u
// may be nil.
func NewStatusData(status Status, message string, u *Usage) StatusData {
	return StatusData{Status: status, Message: message, Usage: u,
		Error: StatusError{Message: message, Type: TypeStatus, Code: string(status)}}
}

// WSControl is a message a WebSocket client sends: as its first message,
// WSResume to resume a stream (instead of a chat request); at any time,
// WSStop to stop the stream.
type WSControl struct {
	Type        string `json:"type"`
	Stream      string `json:"stream,omitempty"`        // WSResume: the stream's id
	LastEventID string `json:"last_event_id,omitempty"` // WSResume: the id of the last event the client has ("<stream>:<seq>")
}

// The types of a WSControl.
const (
	WSResume = "resume"
	WSStop   = "stop"
)

// Info is the JSON answer of GET /v1/streams/{id}/info (and of a Stop).
type Info struct {
	ID                string `json:"id"`
	State             State  `json:"state"`
	Events            int    `json:"events"`             // events generated so far
	UpstreamCancelled bool   `json:"upstream_cancelled"` // the generation was cancelled before it ended by itself
	Readers           int    `json:"readers"`            // clients reading it on this instance now
	Message           string `json:"message,omitempty"`  // why it ended (stopped, failed, cancelled)
	// Created is when the generation started: the simulated model's
	// timings count from it (the load generator measures added latency
	// against it).
	Created time.Time `json:"created"`
	// Usage is what was generated so far: exact for the simulated model,
	// estimated (one token an event, or per four bytes of text) for a
	// real upstream's, until it reports its own; behind hold-back, until
	// the answer completes, only the tokens released to clients. On an instance following the stream from the store
	// it is known once the stream ended.
	Usage Usage `json:"usage"`
}
