// How the relay says no: every refusal is a wire.Error, which the error
// that caused it carries (wire.Refuser); the store's errors, which are
// the store's contract and not the client's, are worded here.

package relay

import (
	"errors"
	"net/http"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/wire"
)

// refusal is what the client of request rid is told when its request
// cannot be served over err: the words of a refusal it can act on, and
// for anything else (the store's or the relay's own failure) a plain
// message naming the request, whose log line has the error.
func (s *Server) refusal(rid string, err error) wire.Error {
	if errors.Is(err, store.ErrUnavailable) {
		s.log.Warn("request refused: the store is unavailable", "request_id", rid, "err", err)
		return storeUnavailable(rid)
	}
	if e, ok := apierr.Of(err); ok {
		return e
	}
	s.log.Error("request failed", "request_id", rid, "err", err)
	return apierr.Internal(rid)
}

// streamRefusal is what the client of request rid is told when stream id
// cannot be found or resumed over err.
func (s *Server) streamRefusal(rid, id string, err error) wire.Error {
	switch {
	case errors.Is(err, store.ErrUnknown):
		return wire.Error{Type: wire.TypeStreamGone, Message: "relay: " + apierr.Gone(id)}
	case errors.Is(err, store.ErrTrimmed):
		return wire.Error{Type: wire.TypeStreamExpired,
			Message: "relay: stream " + id + " cannot be resumed: its first events were trimmed from the stream store (over --max-events, or removed by an operator); send the request again"}
	case errors.Is(err, store.ErrExpired):
		return wire.Error{Type: wire.TypeStreamExpired,
			Message: "relay: stream " + id + " cannot be resumed: its events expired from the stream store (kept " + s.cfg.retention.String() + " after the end, --retention); send the request again"}
	}
	return s.refusal(rid, err)
}

func storeUnavailable(rid string) wire.Error {
	return wire.Error{Type: wire.TypeStoreUnavailable, RetryAfter: 2,
		Message: store.ErrUnavailable.Error() + "; try again shortly (request " + rid + ")"}
}

// refuse answers the request with why err refuses it.
func (s *Server) refuse(w http.ResponseWriter, err error) {
	apierr.Write(w, s.refusal(w.Header().Get(reqlog.Header), err))
}
