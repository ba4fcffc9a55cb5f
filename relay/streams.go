// The /v1/streams handlers (resume, Stop, info) and the lookup and resume
// logic they share with the WebSocket endpoint.

package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"

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
)

// StatusEvent is the SSE event type of the relay's own terminal events;
// their status words are stream.RelayStatus.
const StatusEvent = stream.StatusEventType

// Info is the JSON answer of GET /v1/streams/{id}/info.
type Info = streamlog.Info

// Usage is what a stream generated (Info.Usage, and a stopped stream's
// trickle.status).
type Usage = store.Usage

// parseLastEventID turns "<stream>:<seq>" into the number of events the
// client has.
func parseLastEventID(l *streamlog.Log, last string) (int, error) {
	if last == "" {
		return 0, nil
	}
	sid, seqText, ok := strings.Cut(last, ":")
	seq, err := strconv.Atoi(seqText)
	if !ok || err != nil || seq < 0 || sid != l.ID() {
		return 0, fmt.Errorf("%w: last event id %q is not an id of stream %s (want %s:<seq>)", ErrBadRequest, last, l.ID(), l.ID())
	}
	if n := l.Count(); seq > n {
		return 0, fmt.Errorf("%w: last event id %q is ahead of stream %s, which has %d events", ErrBadRequest, last, l.ID(), n)
	}
	return seq, nil
}

func lastEventID(r *http.Request) string {
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		return v
	}
	return r.URL.Query().Get("last_event_id")
}

// goneMessage is the terminal status a client gets for a stream the relay
// no longer has.
func goneMessage(id string) string {
	return "stream " + id + " is gone: it expired or never existed here; send the request again"
}

// lostMessage says why a stream the store once held cannot be resumed.
func (s *Server) lostMessage(id string, err error) string {
	if errors.Is(err, store.ErrTrimmed) {
		return "stream " + id + " cannot be resumed: its first events were trimmed from the stream store (over --max-events, or removed by an operator); send the request again"
	}
	return "stream " + id + " cannot be resumed: its events expired from the stream store (kept " + s.cfg.retention.String() + " after the end, --retention); send the request again"
}

// statusData is the JSON data of a trickle.status event.
func statusData(status stream.RelayStatus, message string) string {
	return streamlog.StatusData(status, message, nil)
}

// refusal is why a request naming a stream cannot be served: the HTTP
// status, the error type and the message, and the trickle.status a
// streaming client gets instead.
type refusal struct {
	code    int
	typ     string
	status  stream.RelayStatus
	message string
	retry   string // the Retry-After header, if any
}

// refusalOf turns an error of find or resumeAt into what the client of
// request rid gets: what the store or the relay failed with goes to the
// log with rid, the client gets a plain message naming rid.
func (s *Server) refusalOf(rid, id string, err error) refusal {
	switch {
	case errors.Is(err, store.ErrUnknown):
		return refusal{code: http.StatusNotFound, typ: "stream_gone", status: stream.RelayGone, message: "relay: " + goneMessage(id)}
	case errors.Is(err, store.ErrExpired), errors.Is(err, store.ErrTrimmed):
		return refusal{code: http.StatusGone, typ: "stream_expired", status: stream.RelayGone, message: "relay: " + s.lostMessage(id, err)}
	case errors.Is(err, ErrBadRequest):
		return refusal{code: http.StatusBadRequest, typ: "invalid_request_error", status: stream.RelayFailed, message: err.Error()}
	case errors.Is(err, ErrStoreUnavailable):
		s.log.Warn("stream request refused: the store is unavailable", "request_id", rid, "stream", id, "err", err)
		return refusal{code: http.StatusServiceUnavailable, typ: "store_unavailable", status: stream.RelayFailed,
			message: ErrStoreUnavailable.Error() + "; try again shortly (request " + rid + ")", retry: "2"}
	default:
		s.log.Error("stream request failed", "request_id", rid, "stream", id, "err", err)
		return refusal{code: http.StatusInternalServerError, typ: "server_error", status: stream.RelayFailed,
			message: "relay: internal error (request " + rid + "); the relay's log has the details"}
	}
}

func (f refusal) write(w http.ResponseWriter) {
	if f.retry != "" {
		w.Header().Set("Retry-After", f.retry)
	}
	writeError(w, f.code, f.typ, f.message)
}

// streamOr404 finds the stream the request's {id} names, or answers the
// request with why not and returns nil.
func (s *Server) streamOr404(w http.ResponseWriter, r *http.Request) *streamlog.Log {
	id := mux.Vars(r)["id"]
	l, err := s.find(id)
	if err != nil {
		s.refusalOf(reqlog.ID(r.Context()), id, err).write(w)
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
	pos, err := parseLastEventID(l, last)
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
	l, pos, err := s.resumeAt(id, lastEventID(r), "sse")
	switch {
	case errors.Is(err, store.ErrUnknown):
		s.gone(w, r, id)
	case err != nil:
		s.refusalOf(reqlog.ID(r.Context()), id, err).write(w)
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
		writeError(w, http.StatusNotFound, "stream_gone", "relay: "+goneMessage(id))
		return
	}
	sseHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	w.Write(sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData(stream.RelayGone, goneMessage(id))}))
}

// stopStream is DELETE /v1/streams/{id}: Stop, on whichever instance
// generates the stream.
func (s *Server) stopStream(w http.ResponseWriter, r *http.Request) {
	l := s.streamOr404(w, r)
	if l == nil {
		return
	}
	if err := s.stop(l, "DELETE"); err != nil {
		s.refusalOf(reqlog.ID(r.Context()), l.ID(), err).write(w)
		return
	}
	writeJSON(w, l.Info())
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
		writeJSON(w, l.Info())
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
