package chat

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/wire"
)

// ErrFaultRefused: a request asked a relay with a real upstream for a
// fault meant for tests (drop_after, or the simulated model's error_after,
// stall_after, stall_ms, no_end), which it does not allow.
var ErrFaultRefused = errors.New("relay: test faults are not allowed on this relay, which forwards to a real model")

// simFaults are the faults only the simulated model can play.
var simFaults = []string{"error_after", "stall_after", "stall_ms", "no_end"}

// DropAfter reads the drop_after fault: cut the client's connection after
// that many events (0: never).
func DropAfter(q url.Values) (int, error) {
	v := q.Get("drop_after")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: drop_after=%q is not a non-negative integer", ErrBadRequest, v)
	}
	return n, nil
}

// UpstreamFaults refuses the faults q asks of a real upstream: the
// simulated model's always, drop_after (drop) unless allowed.
func UpstreamFaults(q url.Values, drop int, allowed bool) error {
	for _, f := range simFaults {
		if q.Has(f) {
			return fmt.Errorf("%w: %w: %s is the simulated model's", ErrBadRequest, ErrFaultRefused, f)
		}
	}
	if drop > 0 && !allowed {
		return fmt.Errorf("%w: %w: drop_after=%d", ErrBadRequest, ErrFaultRefused, drop)
	}
	return nil
}

// Resumes reads wire.HeaderResume: true for "on", false for "off", any
// case; any other value is a bad request. Without it, a client resumes
// when it asks for text/event-stream (Accept), as an SSE client does: the
// SSE standard's clients (EventSource, the widget, whose first request to
// a relay on another origin cannot send a custom header without a
// preflight its backend may refuse) reconnect with Last-Event-ID, while the
// OpenAI SDKs (Accept: application/json), curl and scripts (*/*) never
// come back, and their disconnect cancels at once.
func Resumes(h http.Header) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(h.Get(wire.HeaderResume))); v {
	case wire.ResumeOn:
		return true, nil
	case wire.ResumeOff:
		return false, nil
	case "":
		for _, a := range h.Values("Accept") {
			if strings.Contains(strings.ToLower(a), "text/event-stream") {
				return true, nil
			}
		}
		return false, nil
	default:
		return false, fmt.Errorf("%w: %s must be %s or %s, not %q", ErrBadRequest, wire.HeaderResume, wire.ResumeOn, wire.ResumeOff, v)
	}
}

// LastEventID is the id of the last event a resuming client has: the
// Last-Event-ID header, or the last_event_id query parameter of a client
// that cannot set headers.
func LastEventID(r *http.Request) string {
	if v := r.Header.Get(wire.HeaderLastEventID); v != "" {
		return v
	}
	return r.URL.Query().Get(wire.QueryLastEventID)
}

// Position turns a last event id "<stream>:<seq>" of stream id, which has
// count events so far, into the number of events the client has.
func Position(id string, count int, last string) (int, error) {
	if last == "" {
		return 0, nil
	}
	sid, seqText, ok := strings.Cut(last, ":")
	seq, err := strconv.Atoi(seqText)
	if !ok || err != nil || seq < 0 || sid != id {
		return 0, fmt.Errorf("%w: last event id %q is not an id of stream %s (want %s:<seq>)", ErrBadRequest, last, id, id)
	}
	if seq > count {
		return 0, fmt.Errorf("%w: last event id %q is ahead of stream %s, which has %d events", ErrBadRequest, last, id, count)
	}
	return seq, nil
}
