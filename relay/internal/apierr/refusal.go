package apierr

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/registry"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/stream"
)

// Refusal is why a request cannot be served: the HTTP status, the error
// type and the message, and the trickle.status a streaming client (the
// WebSocket) gets instead.
type Refusal struct {
	Code    int
	Type    string
	Status  stream.RelayStatus
	Message string
	Retry   string // the Retry-After header, if any
	ErrCode string // the error body's code, if any ("rate_limited")
	Param   string // the request field it is about, if any
}

// Write answers the request with the refusal.
func (f Refusal) Write(w http.ResponseWriter) {
	if f.Retry != "" {
		w.Header().Set("Retry-After", f.Retry)
	}
	WriteCoded(w, f.Code, f.Type, f.ErrCode, f.Param, f.Message)
}

// OfStart is what a client is told when its stream cannot start: the
// words of a refusal it can act on, and for anything else (the store's
// or the relay's own failure) a plain message naming the request rid,
// whose log line has the error.
func OfStart(log *slog.Logger, rid string, err error) Refusal {
	var over *limit.Refusal
	switch {
	case errors.As(err, &over):
		return Refusal{Code: http.StatusTooManyRequests, Type: "rate_limit_exceeded", ErrCode: over.Code, Status: stream.RelayFailed,
			Message: over.Message, Retry: strconv.Itoa(limit.RetryAfter(over.RetryAfter))}
	case errors.Is(err, registry.ErrTooMany):
		return Refusal{Code: http.StatusTooManyRequests, Type: "rate_limit_exceeded", Status: stream.RelayFailed, Message: err.Error(), Retry: "1"}
	case errors.Is(err, chat.ErrBadRequest):
		return Bad(err)
	case errors.Is(err, registry.ErrShuttingDown):
		return Refusal{Code: http.StatusServiceUnavailable, Type: "shutting_down", Status: stream.RelayFailed, Message: err.Error(), Retry: "5"}
	case errors.Is(err, store.ErrUnavailable):
		log.Warn("stream refused: the store is unavailable", "request_id", rid, "err", err)
		return unavailable(rid)
	}
	log.Error("stream refused", "request_id", rid, "err", err)
	return internal(rid)
}

// Bad is the refusal of a malformed request (chat.ErrBadRequest): 400
// invalid_request_error, with the field and code of a chat.RequestError.
func Bad(err error) Refusal {
	f := Refusal{Code: http.StatusBadRequest, Type: "invalid_request_error", Status: stream.RelayFailed, Message: err.Error()}
	var re *chat.RequestError
	if errors.As(err, &re) {
		f.Param, f.ErrCode = re.Param, re.Code
	}
	return f
}

// OfStream turns an error finding or resuming stream id into what the
// client of request rid gets; retention is how long the store keeps an
// ended stream.
func OfStream(log *slog.Logger, rid, id string, retention time.Duration, err error) Refusal {
	switch {
	case errors.Is(err, store.ErrUnknown):
		return Refusal{Code: http.StatusNotFound, Type: "stream_gone", Status: stream.RelayGone, Message: "relay: " + Gone(id)}
	case errors.Is(err, store.ErrTrimmed):
		return Refusal{Code: http.StatusGone, Type: "stream_expired", Status: stream.RelayGone,
			Message: "relay: stream " + id + " cannot be resumed: its first events were trimmed from the stream store (over --max-events, or removed by an operator); send the request again"}
	case errors.Is(err, store.ErrExpired):
		return Refusal{Code: http.StatusGone, Type: "stream_expired", Status: stream.RelayGone,
			Message: "relay: stream " + id + " cannot be resumed: its events expired from the stream store (kept " + retention.String() + " after the end, --retention); send the request again"}
	case errors.Is(err, chat.ErrBadRequest):
		return Refusal{Code: http.StatusBadRequest, Type: "invalid_request_error", Status: stream.RelayFailed, Message: err.Error()}
	case errors.Is(err, store.ErrUnavailable):
		log.Warn("stream request refused: the store is unavailable", "request_id", rid, "stream", id, "err", err)
		return unavailable(rid)
	}
	log.Error("stream request failed", "request_id", rid, "stream", id, "err", err)
	return internal(rid)
}

// Gone is the terminal status a client gets for a stream the relay no
// longer has.
func Gone(id string) string {
	return "stream " + id + " is gone: it expired or never existed here; send the request again"
}

func unavailable(rid string) Refusal {
	return Refusal{Code: http.StatusServiceUnavailable, Type: "store_unavailable", Status: stream.RelayFailed,
		Message: store.ErrUnavailable.Error() + "; try again shortly (request " + rid + ")", Retry: "2"}
}

func internal(rid string) Refusal {
	return Refusal{Code: http.StatusInternalServerError, Type: "server_error", Status: stream.RelayFailed,
		Message: "relay: internal error (request " + rid + "); the relay's log has the details"}
}
