package relay

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/wire"
)

// ErrBadRequest is wrapped by every request the relay refuses as malformed.
var ErrBadRequest = chat.ErrBadRequest

// ErrFaultRefused: a request asked a relay with a real upstream for a
// fault meant for tests (drop_after, or the simulated model's error_after,
// stall_after, stall_ms, no_end), which it does not allow (WithAllowFaults).
var ErrFaultRefused = chat.ErrFaultRefused

// ResumeHeader (wire.HeaderResume) is the request header with which an
// HTTP client that will resume a cut stream (the widget) says so: "on"
// keeps the generation running for the grace period after a disconnect.
// Without it (or with "off") a disconnect cancels the generation at once,
// so a plain SDK's abort spends nothing more. WebSocket clients resume by
// default.
const ResumeHeader = wire.HeaderResume

// readBody reads the request body within the size limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	// The body has its own deadline (a slow client's bytes would hold the
	// connection for ever), lifted once it is read: the answer that
	// follows may stream for minutes.
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(s.cfg.bodyTimeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.maxBodyBytes))
	if deadline && err == nil {
		rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The deadline stays: the server would otherwise wait for the
			// rest of the body before it sends the refusal.
			w.Header().Set("Connection", "close")
			return nil, &wire.Error{Type: wire.TypeInvalidRequest, Status: http.StatusRequestTimeout,
				Message: fmt.Sprintf("relay: the request body did not arrive within %s", s.cfg.bodyTimeout)}
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &wire.Error{Type: wire.TypeInvalidRequest, Status: http.StatusRequestEntityTooLarge,
				Message: fmt.Sprintf("relay: request body over the limit of %d bytes", tooBig.Limit)}
		}
		return nil, fmt.Errorf("%w: reading the body: %w", ErrBadRequest, err)
	}
	return body, nil
}

// chat is POST /v1/chat/completions: the admission, then an SSE stream or
// one JSON answer.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	resumes, err := chat.Resumes(r.Header)
	if err != nil {
		s.refuse(w, err)
		return
	}
	body, err := s.readBody(w, r)
	if err != nil {
		s.refuse(w, err)
		return
	}
	a, err := s.admit(r, body, false)
	if err != nil {
		s.refuse(w, err)
		return
	}
	if !a.req.Stream {
		a.ticket.End(s.answerOnce(w, r, a))
		return
	}
	l, err := s.start(r, a)
	if err != nil {
		s.refuse(w, err)
		return
	}
	if !resumes {
		l.NoResume()
	}
	s.serveSSE(w, r, l, 0)
}

// answerOnce answers a stream:false request and returns the output
// tokens it cost.
func (s *Server) answerOnce(w http.ResponseWriter, r *http.Request, a *admission) int {
	if s.cfg.upstream != nil {
		return s.forwardOnce(w, r, a.payload)
	}
	return chat.WriteCompletion(w, a.gen, a.sim)
}

// startSim registers a stream and starts the simulated generation on it.
func (s *Server) startSim(gen *sim.Generator, p sim.Params, drop int, rid, owner string, t *limit.Ticket) (*streamlog.Log, error) {
	l, err := s.register(p.Dialect.String(), drop, rid, owner, t)
	if err != nil {
		return nil, err
	}
	s.log.Info("stream started", "stream", l.ID(), "model", "simulated", "dialect", p.Dialect, "answer", gen.Answer().Name)
	s.clocks.Start(l, gen)
	return l, nil
}
