// Package apierr writes the relay's JSON answers: a refusal (wire.Error)
// as the OpenAI-style error body, with the request's id where the OpenAI
// SDKs read it and its Retry-After, and plain JSON values, never cached.
// It knows no refusal itself: an error says how it is refused by carrying
// a wire.Error (wire.Refuser), and anything else is the relay's own fault.
package apierr

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/wire"
)

// Write answers the request with the refusal e: its status, its
// Retry-After and its body.
func Write(w http.ResponseWriter, e wire.Error) {
	var b wire.Body
	b.Error = wire.BodyError{Message: e.Message, Type: e.Type, Code: e.Code, Param: e.Param, RequestID: w.Header().Get(reqlog.Header)}
	h := w.Header()
	if v := e.RetryAfterHeader(); v != "" {
		h.Set(wire.HeaderRetryAfter, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.HTTPStatus())
	json.NewEncoder(w).Encode(b)
}

// Of is how err is refused: the first refusal in its chain (a
// wire.Refuser), with the whole error's message. ok is false when err
// carries none: the relay's own failure, which Internal words.
func Of(err error) (e wire.Error, ok bool) {
	var r wire.Refuser
	if !errors.As(err, &r) {
		return wire.Error{}, false
	}
	e = r.Refusal()
	e.Message = err.Error()
	return e, true
}

// Internal is what a client is told of the relay's own failure in the
// request rid: a plain message naming the request, whose log line has the
// details (never the error itself, which may name secrets).
func Internal(rid string) wire.Error {
	return wire.Error{Type: wire.TypeServer, Message: "relay: internal error (request " + rid + "); the relay's log has the details"}
}

// Gone is the message of a stream the relay no longer has.
func Gone(id string) string {
	return "stream " + id + " is gone: it expired or never existed here; send the request again"
}

// JSON answers 200 with v.
func JSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
