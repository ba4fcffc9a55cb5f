// The /v1/streams handlers (resume, Stop, info) and the lookup and resume
// logic they share with the WebSocket endpoint.

package relay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/trickle-dev/trickle/sse"
)

// client has.
func parseLastEventID(l *genLog, last string) (int, error) {
	if last == "" {
		return 0, nil
	}
	sid, seqText, ok := strings.Cut(last, ":")
	seq, err := strconv.Atoi(seqText)
	if !ok || err != nil || seq < 0 || sid != l.id {
		return 0, fmt.Errorf("%w: last event id %q is not an id of stream %s (want %s:<seq>)", ErrBadRequest, last, l.id, l.id)
	}
	if n := l.count(); seq > n {
		return 0, fmt.Errorf("%w: last event id %q is ahead of stream %s, which has %d events", ErrBadRequest, last, l.id, n)
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

func statusData(status, message string) string {
	b, _ := json.Marshal(struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}{status, message})
	return string(b)
}

// resume is GET /v1/streams/{id}: the events after Last-Event-ID, then live.
func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	l := s.lookup(id)
	if l == nil {
		s.gone(w, r, id)
		return
	}
	pos, err := parseLastEventID(l, lastEventID(r))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	s.metrics.resumes.Add(1)
	s.log.Info("stream resumed", "stream", id, "transport", "sse", "after", pos)
	s.serveSSE(w, r, l, pos)
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
	w.Write(sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData("gone", goneMessage(id))}))
}

// stopStream is DELETE /v1/streams/{id}: Stop.
func (s *Server) stopStream(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	l := s.lookup(id)
	if l == nil {
		writeError(w, http.StatusNotFound, "stream_gone", "relay: "+goneMessage(id))
		return
	}
	s.stop(l, "DELETE")
	writeJSON(w, l.info())
}

// stop stops l (Stop from a client) and logs it.
func (s *Server) stop(l *genLog, by string) {
	start := time.Now()
	if l.stop(StateStopped, "stopped by the client") {
		s.log.Info("stream stopped", "stream", l.id, "by", by, "events", l.count(),
			"upstream_cancelled", l.info().UpstreamCancelled, "took", time.Since(start).Round(time.Microsecond))
	}
}

// streamInfo is GET /v1/streams/{id}/info.
func (s *Server) streamInfo(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	l := s.lookup(id)
	if l == nil {
		writeError(w, http.StatusNotFound, "stream_gone", "relay: "+goneMessage(id))
		return
	}
	writeJSON(w, l.info())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
