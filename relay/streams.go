// The /v1/streams handlers (resume, Stop, info) and the lookup and resume
// logic they share with the WebSocket endpoint.

package relay

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/sse"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/wire"
)

// Stream states, as /v1/streams/{id}/info reports them (package wire has
// the contract).
const (
	StateRunning   = wire.StateRunning   // the generation is going on
	StateComplete  = wire.StateComplete  // the generator finished on its own
	StateStopped   = wire.StateStopped   // a client asked to stop
	StateCancelled = wire.StateCancelled // its client left and did not come back (at once, or within the grace period), or the relay shut down
	StateFailed    = wire.StateFailed    // the upstream (or an injected fault) failed
	StateWithheld  = wire.StateWithheld  // the hold-back checker blocked a sentence
)

// StatusEvent is the SSE event type of the relay's own terminal events;
// their data is a wire.StatusData.
const StatusEvent = wire.StatusEvent

// Info is the JSON answer of GET /v1/streams/{id}/info (package wire has
// the contract and documents its fields).
type Info = wire.Info

// Usage is what a stream generated (Info.Usage, and a stopped stream's
// trickle.status).
type Usage = wire.Usage

// statusData is the JSON data of a trickle.status event.
func statusData(status wire.Status, message string) string {
	return streamlog.StatusData(status, message, nil)
}

// streamOr404 finds the stream the request's {id} names, or answers the
// request with why not and returns nil.
func (s *Server) streamOr404(w http.ResponseWriter, r *http.Request) *streamlog.Log {
	id := mux.Vars(r)["id"]
	l, err := s.findFor(r, id)
	if err != nil {
		apierr.Write(w, s.streamRefusal(reqlog.ID(r.Context()), id, err))
		return nil
	}
	return l
}

// findFor finds stream id for the request r: with auth on, a stream made
// by another identity is refused (403 stream_not_owned), so that a
// stream's id alone lets no one else read, inspect or stop it.
func (s *Server) findFor(r *http.Request, id string) (*streamlog.Log, error) {
	l, err := s.find(id)
	if err != nil {
		return nil, err
	}
	if owner := l.Owner(); owner != "" && owner != Identity(r) {
		s.log.Info("stream refused to another identity", "stream", id, "request_id", reqlog.ID(r.Context()), "identity", Identity(r))
		return nil, &wire.Error{Type: wire.TypePermission, Code: wire.CodeStreamNotOwned,
			Message: "relay: stream " + id + " was started with another token's identity: only it may resume, inspect or stop the stream"}
	}
	return l, nil
}

// owner is the identity a stream started by r belongs to: its token's,
// with auth on; "" (anyone's) without.
func (s *Server) owner(r *http.Request) string {
	if !s.cfg.guard.authSecretSet {
		return ""
	}
	return Identity(r)
}

// resumeAt finds a stream for r and the position after the client's last
// event id, for GET /v1/streams/{id} and the WebSocket's resume message.
func (s *Server) resumeAt(r *http.Request, id, last, transport string) (*streamlog.Log, int, error) {
	l, err := s.findFor(r, id)
	if err != nil {
		return nil, 0, err
	}
	pos, err := chat.Position(l.ID(), l.Count(), last)
	if err != nil {
		return nil, 0, err
	}
	s.metrics.Resumes.Add(1)
	s.log.Info("stream resumed", "stream", id, "transport", transport, "after", pos, "followed", l.Followed())
	return l, pos, nil
}

// resume is GET /v1/streams/{id}: the events after Last-Event-ID, then live.
func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	l, pos, err := s.resumeAt(r, id, chat.LastEventID(r), "sse")
	switch {
	case errors.Is(err, store.ErrUnknown):
		s.gone(w, r, id)
	case err != nil:
		apierr.Write(w, s.streamRefusal(reqlog.ID(r.Context()), id, err))
	default:
		s.serveSSE(w, r, l, pos)
	}
}

// gone answers a resume of an unknown stream: an SSE client gets one
// terminal trickle.status "gone" event (so the widget shows why), a JSON
// client a 404.
func (s *Server) gone(w http.ResponseWriter, r *http.Request, id string) {
	accept := r.Header.Get("Accept")
	if strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/event-stream") {
		apierr.Write(w, s.streamRefusal(reqlog.ID(r.Context()), id, store.ErrUnknown))
		return
	}
	sseHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	w.Write(sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData(wire.StatusGone, apierr.Gone(id))}))
}

// stopStream is DELETE /v1/streams/{id}: Stop, on whichever instance
// generates the stream.
func (s *Server) stopStream(w http.ResponseWriter, r *http.Request) {
	l := s.streamOr404(w, r)
	if l == nil {
		return
	}
	if err := s.stop(r.Context(), l, "DELETE"); err != nil {
		apierr.Write(w, s.streamRefusal(reqlog.ID(r.Context()), l.ID(), err))
		return
	}
	apierr.JSON(w, l.Info())
}

// stopWait is how long a Stop of a stream generated on another instance
// waits for that instance to write the end, so that the answer reports it.
const stopWait = 2 * time.Second

// stop stops l (Stop from a client) and logs it. A stream generated on
// another instance is stopped through the store; stop then waits for its
// end to arrive here: woken by the log when it ends, for at most
// stopWait, and no longer than ctx (the asking request) lives.
func (s *Server) stop(ctx context.Context, l *streamlog.Log, by string) error {
	start := time.Now()
	if l.Followed() {
		if l.State() != wire.StateRunning {
			return nil
		}
		sctx, cancel := context.WithTimeout(ctx, storeTimeout)
		err := s.store.Stop(sctx, l.ID())
		cancel()
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, stopWait)
		l.WaitEnded(wctx)
		cancel()
		s.log.Info("stream stop requested from the instance generating it", "stream", l.ID(), "by", by,
			"state", l.Info().State, "took", time.Since(start).Round(time.Microsecond))
		return nil
	}
	if l.Stop(streamlog.StateStopped, "stopped by the client") {
		s.log.Info("stream stopped", "stream", l.ID(), "by", by, "events", l.Count(),
			"upstream_cancelled", l.Info().UpstreamCancelled, "took", time.Since(start).Round(time.Microsecond))
	}
	return nil
}

// streamInfo is GET /v1/streams/{id}/info.
func (s *Server) streamInfo(w http.ResponseWriter, r *http.Request) {
	if l := s.streamOr404(w, r); l != nil {
		apierr.JSON(w, l.Info())
	}
}
