// Why an answer did not complete, in the words a reader is told: each way
// an answer can fail or end early is one Reason, said in one sentence of
// Strings, with the technical chain kept for the developer (trickle-error's
// detail, the console).

package element

import (
	"errors"
	"fmt"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/stream"
)

// Reason is why an answer did not complete, as a reader is told it. Its
// String is the key of its sentence in Strings and trickle-error's
// detail.reason.
type Reason int

// The reasons. ReasonNone is an answer that completed or was stopped.
const (
	ReasonNone        Reason = iota
	ReasonRefused            // HTTP 401 or 403: not allowed
	ReasonNotFound           // HTTP 404 or 410: nothing at the endpoint
	ReasonRateLimited        // HTTP 429: too many requests
	ReasonServerError        // HTTP 5xx
	ReasonRejected           // any other HTTP status that is not a success
	ReasonNetwork            // no connection to the server at all
	ReasonDropped            // the connection broke after the answer began, and resuming did not bring it back
	ReasonCutOff             // the body ended without the answer's end marker
	ReasonEmpty              // the body ended with nothing in it
	ReasonUnreadable         // bytes came, but none could be read as an answer
	ReasonUpstream           // the model's service reported a failure in the stream
	ReasonRelay              // the relay itself failed the stream (its store, its generator, its limits), not the model
	ReasonTooLarge           // an event over the size bound was dropped, and the answer ended without its end
	ReasonExpired            // the relay no longer has the stream to resume
	ReasonWithheld           // the relay's hold-back checker blocked the rest of the answer
	ReasonIdle               // no byte came for the element's idle-timeout
	ReasonUnknown            // anything else (a fault in the widget itself)
	reasonCount
)

var reasonKeys = [reasonCount]string{
	"", "refused", "notFound", "rateLimited", "serverError", "rejected", "network", "dropped",
	"cutOff", "empty", "unreadable", "upstream", "relayFailed", "tooLarge", "expired", "withheld", "idle", "unknown",
}

func (r Reason) String() string {
	if r < 0 || r >= reasonCount {
		return "unknown"
	}
	return reasonKeys[r]
}

// Retry reports whether asking again can help: not when the server
// refused the request or cannot read it, nor when the answer cannot be
// read; yes after a dropped connection, an overloaded or failing server,
// a model's error.
func (r Reason) Retry() bool {
	switch r {
	case ReasonNone, ReasonRefused, ReasonNotFound, ReasonRejected, ReasonUnreadable, ReasonTooLarge, ReasonWithheld:
		return false
	}
	return true
}

// StatusError is a response with a status other than 2xx: the status and
// what its body says (HTTPError).
type StatusError struct {
	_ incomparable
	// Status is the HTTP status code.
	Status int
	// Message is the start of the body, or its JSON error's message ("" for
	// an empty body).
	Message string
	// URL is the address that answered ("" when not known).
	URL string
}

func (e *StatusError) Error() string {
	at := ""
	if e.URL != "" {
		at = " at " + e.URL
	}
	if e.Message == "" {
		if e.URL != "" {
			return fmt.Sprintf("trickle: the server answered HTTP %d with an empty body%s", e.Status, at)
		}
		return fmt.Sprintf("trickle: the server answered HTTP %d", e.Status)
	}
	return fmt.Sprintf("trickle: the server answered HTTP %d%s: %s", e.Status, at, e.Message)
}

// ErrConnection is wrapped by every error of a connection that failed or
// was cut (ConnError, WSClose): the network, not the server's answer.
var ErrConnection = errors.New("trickle: the connection failed")

// ConnError is a fetch or a body read that failed with the browser's
// message text (a TypeError's "Failed to fetch", an aborted body).
func ConnError(url, text string) error {
	return errtext.Wrap(ErrConnection.Error()+": "+url+": "+text, ErrConnection)
}

// Outcome is how an answer ended, for the page: the status, the technical
// error and the reason a reader is told, in the element's words.
type Outcome struct {
	Status stream.Status
	// Err is the technical chain (nil for a complete answer): for
	// trickle-error's detail and the console, never for the page's text.
	Err error
	// Reason is why it did not complete (ReasonNone when it did, or was
	// stopped); HTTPStatus is the response's status when one explains it.
	Reason     Reason
	HTTPStatus int
	// Words are the element's strings.
	Words *Strings
}

// Explain finds the reason an answer ended as it did: st and err are the
// answer's status and error, a the answer (what it decoded and skipped),
// bytes how many response bytes arrived. An answer that completed, is
// still going or was stopped has ReasonNone.
func Explain(st stream.Status, err error, a *stream.Answer, bytes int) (Reason, int) {
	if st != stream.Incomplete && st != stream.Failed {
		return ReasonNone, 0
	}
	if se, ok := errors.AsType[*StatusError](err); ok {
		switch s := se.Status; {
		case s == 401 || s == 403:
			return ReasonRefused, s
		case s == 404 || s == 410:
			return ReasonNotFound, s
		case s == 429:
			return ReasonRateLimited, s
		case s >= 500 && s <= 599:
			return ReasonServerError, s
		default:
			return ReasonRejected, s
		}
	}
	events, skipped := 0, 0
	var problems []error
	if a != nil {
		events, skipped, problems = a.Events(), a.Skipped(), a.Problems()
	}
	switch {
	case errors.Is(err, ErrIdle):
		return ReasonIdle, 0
	case errors.Is(err, stream.ErrGone):
		return ReasonExpired, 0
	case errors.Is(err, stream.ErrWithheld):
		return ReasonWithheld, 0
	case errors.Is(err, stream.ErrProvider):
		return ReasonUpstream, 0
	case errors.Is(err, stream.ErrRelay):
		// The relay's own status without the provider's error before it:
		// the relay failed (a fleet's relay died, its store was lost), not
		// the model.
		return ReasonRelay, 0
	case errors.Is(err, stream.ErrUnreadable):
		return ReasonUnreadable, 0
	case errors.Is(err, ErrConnection):
		if events > 0 || bytes > 0 {
			return ReasonDropped, 0
		}
		return ReasonNetwork, 0
	}
	for _, p := range problems {
		if errors.Is(p, stream.ErrEventTooLarge) && st == stream.Incomplete {
			return ReasonTooLarge, 0
		}
	}
	switch {
	case events == 0 && bytes == 0 && st == stream.Incomplete:
		return ReasonEmpty, 0
	case events == 0 && (bytes > 0 || skipped > 0):
		// Bytes that gave no event: not a stream the widget can read
		// (an HTML page, JSON that is no dialect's).
		return ReasonUnreadable, 0
	case st == stream.Incomplete:
		return ReasonCutOff, 0
	}
	return ReasonUnknown, 0
}

// Sentence is what the reader is told of the reason ("" for ReasonNone).
func (o Outcome) Sentence() string { return o.words().Reason(o.Reason, o.HTTPStatus) }

// Notice is the visible text for how the answer ended: the reason's
// sentence, "Stopped." for a stopped answer, nothing for a complete one.
func (o Outcome) Notice() string {
	if o.Status == stream.Stopped {
		return o.words().StoppedNotice
	}
	return o.Sentence()
}

// Retry reports whether the notice offers to retry.
func (o Outcome) Retry() bool { return o.Reason.Retry() }

// Shown is the visible status line: the status in a few words; the why is
// the notice's, so the line never repeats it.
func (o Outcome) Shown() string { return o.words().Status(o.Status) }

// Spoken is the status a screen reader hears at the end: the status, then
// the reason's sentence (the notice is not a live region).
func (o Outcome) Spoken() string {
	st := o.Shown()
	if s := o.Sentence(); s != "" {
		return st + " " + s
	}
	return st
}

// Detail is the technical chain for a developer ("" when there is none).
func (o Outcome) Detail() string {
	if o.Err == nil || o.Status == stream.Complete || o.Status == stream.Stopped {
		return ""
	}
	return o.Err.Error()
}

func (o Outcome) words() *Strings {
	if o.Words == nil {
		return &English
	}
	return o.Words
}
