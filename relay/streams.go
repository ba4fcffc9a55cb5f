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
	"github.com/trickle-dev/trickle/stream"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/store"
)

// Stream states, as /v1/streams/{id}/info reports them.
const (
	StateRunning   = streamlog.StateRunning   // the generation is going on
	StateComplete  = streamlog.StateComplete  // the generator finished on its own
	StateStopped   = streamlog.StateStopped   // a client asked to stop
	StateCancelled = streamlog.StateCancelled // nobody came back within the grace period, or the relay shut down
	StateFailed    = streamlog.StateFailed    // the upstream (or an injected fault) failed
	StateWithheld  = streamlog.StateWithheld  // the hold-back checker blocked a sentence
)

// StatusEvent is the SSE event type of the relay's own terminal events;
// their status words are stream.RelayStatus.
const StatusEvent = stream.StatusEventType

// Info is the JSON answer of GET /v1/streams/{id}/info.
type Info = streamlog.Info

// Usage is what a stream generated (Info.Usage, and a stopped stream's
// trickle.status).
type Usage = store.Usage

// statusData is the JSON data of a trickle.status event.
func statusData(status stream.RelayStatus, message string) string {
	return streamlog.StatusData(status, message, nil)
}

// refusalOf turns an error of find or resumeAt into what the client of
// request rid gets (apierr.OfStream).
func (s *Server) refusalOf(rid, id string, err error) apierr.Refusal {
	return apierr.OfStream(s.log, rid, id, s.cfg.retention, err)
}

// streamOr404 finds the stream the request's {id} names, or answers the
// request with why not and returns nil.
func (s *Server) streamOr404(w http.ResponseWriter, r *http.Request) *streamlog.Log {
	id := mux.Vars(r)["id"]
	l, err := s.find(id)
	if err != nil {
		s.refusalOf(reqlog.ID(r.Context()), id, err).Write(w)
		return nil
	}
	return l
}

// resumeAt finds a stream and the position after the client's last event
// id, for GET /v1/streams/{id} and the WebSocket's resume message.
func (s *Server) resumeAt(id, last, transport string) (*streamlog.Log, int, error) {
	l, err := s.find(id)
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
	l, pos, err := s.resumeAt(id, chat.LastEventID(r), "sse")
	switch {
	case errors.Is(err, store.ErrUnknown):
		s.gone(w, r, id)
	case err != nil:
		s.refusalOf(reqlog.ID(r.Context()), id, err).Write(w)
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
		apierr.Write(w, http.StatusNotFound, "stream_gone", "relay: "+apierr.Gone(id))
		return
	}
	sseHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	w.Write(sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData(stream.RelayGone, apierr.Gone(id))}))
}

// stopStream is DELETE /v1/streams/{id}: Stop, on whichever instance
// generates the stream.
func (s *Server) stopStream(w http.ResponseWriter, r *http.Request) {
	l := s.streamOr404(w, r)
	if l == nil {
		return
	}
	if err := s.stop(l, "DELETE"); err != nil {
		s.refusalOf(reqlog.ID(r.Context()), l.ID(), err).Write(w)
		return
	}
	apierr.JSON(w, l.Info())
}

// stopWait is how long a Stop of a stream generated on another instance
// waits for that instance to write the end, so that the answer reports it.
const stopWait = 2 * time.Second

// stop stops l (Stop from a client) and logs it. A stream generated on
// another instance is stopped through the store; stop then waits (at most
// stopWait) for its end to arrive here.
func (s *Server) stop(l *streamlog.Log, by string) error {
	start := time.Now()
	if l.Followed() {
		if l.Info().State != streamlog.StateRunning {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err := s.store.Stop(ctx, l.ID())
		cancel()
		if err != nil {
			return err
		}
		for l.Info().State == streamlog.StateRunning && time.Since(start) < stopWait {
			time.Sleep(2 * time.Millisecond)
		}
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
