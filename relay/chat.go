package relay

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/sim"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// ChatRequest is the part of an OpenAI Chat Completions request the relay
// reads. The body is forwarded as it is to an OpenAI upstream.
type ChatRequest = chat.Request

// ChatMessage is one message of a ChatRequest; Content is a string or an
// array of parts (Text joins them).
type ChatMessage = chat.Message

// ErrBadRequest is wrapped by every request the relay refuses as malformed.
var ErrBadRequest = chat.ErrBadRequest

// readRequest reads and decodes the request body within the size limit.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) (ChatRequest, []byte, int, error) {
	var req ChatRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return req, nil, http.StatusRequestEntityTooLarge, fmt.Errorf("relay: request body over the limit of %d bytes", tooBig.Limit)
		}
		return req, nil, http.StatusBadRequest, fmt.Errorf("%w: reading the body: %w", ErrBadRequest, err)
	}
	return req, body, 0, decodeRequest(body, &req)
}

func decodeRequest(body []byte, req *ChatRequest) error { return chat.Decode(body, req) }

// simParams builds the simulated model's parameters from the request and
// the query string.
func (s *Server) simParams(req *ChatRequest, q url.Values) (sim.Params, error) {
	d := s.cfg.sim
	return chat.SimParams(req, q, sim.Params{TTFT: d.TTFT, Gap: d.Gap, Jitter: d.Jitter, TokenChars: d.TokenChars})
}

// ErrFaultRefused: a request asked a relay with a real upstream for a
// fault meant for tests (drop_after, or the simulated model's error_after,
// stall_after, stall_ms, no_end), which it does not allow (WithAllowFaults).
var ErrFaultRefused = chat.ErrFaultRefused

// ResumeHeader is the request header with which a client that will never
// resume (an SDK's stream, a script) says so: "off" makes its disconnect
// cancel the generation at once instead of after the grace period.
const ResumeHeader = chat.ResumeHeader

// chat is POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if s.reg.Draining() {
		w.Header().Set("Retry-After", "5")
		apierr.Write(w, http.StatusServiceUnavailable, "shutting_down", ErrShuttingDown.Error())
		return
	}
	req, body, code, err := s.readRequest(w, r)
	if err != nil {
		if code == 0 {
			apierr.Bad(err).Write(w)
			return
		}
		apierr.Write(w, code, "invalid_request_error", err.Error())
		return
	}
	if body, err = s.admitBody(&req, body); err != nil {
		if !refuseAdmit(w, err) {
			apierr.Write(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		}
		return
	}
	// Counted before anything is generated: a refused request reaches
	// no model.
	ticket, err := s.limits.Admit(r.Context(), Identity(r))
	if err != nil {
		s.refuse(w, err)
		return
	}
	if !req.Stream {
		ticket.End(s.answerOnce(w, r, &req, body))
		return
	}
	off, err := chat.NoResume(r.Header)
	if err != nil {
		ticket.End(0)
		s.refuse(w, err)
		return
	}
	l, err := s.startStream(&req, body, r.URL.Query(), reqlog.ID(r.Context()), ticket)
	if err != nil {
		ticket.End(0)
		s.refuse(w, err)
		return
	}
	if off {
		l.NoResume()
	}
	s.serveSSE(w, r, l, 0)
}

// answerOnce answers a stream:false request and returns the output
// tokens it cost.
func (s *Server) answerOnce(w http.ResponseWriter, r *http.Request, req *ChatRequest, body []byte) int {
	if s.cfg.upstream != nil {
		return s.forwardOnce(w, r, req, body)
	}
	p, err := s.simParams(req, r.URL.Query())
	if err != nil {
		apierr.Bad(err).Write(w)
		return 0
	}
	gen, err := sim.New(p)
	if err != nil {
		apierr.Write(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return 0
	}
	return chat.WriteCompletion(w, gen, p)
}

// startStream starts a generation for req: the upstream when one is
// configured, else the simulated model with the query's parameters. rid
// is the id of the request asking (reqlog.ID), t its limits' ticket.
func (s *Server) startStream(req *ChatRequest, body []byte, q url.Values, rid string, t *limit.Ticket) (*streamlog.Log, error) {
	drop, err := chat.DropAfter(q)
	if err != nil {
		return nil, err
	}
	if s.cfg.upstream != nil {
		if err := chat.UpstreamFaults(q, drop, s.cfg.allowFaults); err != nil {
			return nil, err
		}
		return s.startUpstream(req, body, drop, rid, t)
	}
	p, err := s.simParams(req, q)
	if err != nil {
		return nil, err
	}
	gen, err := sim.New(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	return s.startSim(gen, p, drop, rid, t)
}

// refuse answers a request the relay cannot admit now.
func (s *Server) refuse(w http.ResponseWriter, err error) {
	s.startRefusal(w.Header().Get(reqlog.Header), err).Write(w)
}

// startRefusal is what the client of request rid is told when its stream
// cannot start (apierr.OfStart).
func (s *Server) startRefusal(rid string, err error) apierr.Refusal {
	return apierr.OfStart(s.log, rid, err)
}

// startSim registers a stream and starts the simulated generation on it.
func (s *Server) startSim(gen *sim.Generator, p sim.Params, drop int, rid string, t *limit.Ticket) (*streamlog.Log, error) {
	l, err := s.register(p.Dialect.String(), drop, rid, t)
	if err != nil {
		return nil, err
	}
	s.log.Info("stream started", "stream", l.ID(), "model", "simulated", "dialect", p.Dialect, "answer", gen.Answer().Name)
	s.clocks.Start(l, gen)
	return l, nil
}
