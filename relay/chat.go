package relay

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/stream"

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
var ErrFaultRefused = errors.New("relay: test faults are not allowed on this relay, which forwards to a real model")

// simFaults are the faults only the simulated model can play.
var simFaults = []string{"error_after", "stall_after", "stall_ms", "no_end"}

// upstreamFaults refuses the faults q asks of a real upstream: the
// simulated model's always, drop_after unless faults are allowed.
func (s *Server) upstreamFaults(q url.Values, drop int) error {
	for _, f := range simFaults {
		if q.Has(f) {
			return fmt.Errorf("%w: %w: %s is the simulated model's", ErrBadRequest, ErrFaultRefused, f)
		}
	}
	if drop > 0 && !s.cfg.allowFaults {
		return fmt.Errorf("%w: %w: drop_after=%d", ErrBadRequest, ErrFaultRefused, drop)
	}
	return nil
}

// ResumeHeader is the request header with which a client that will never
// resume (an SDK's stream, a script) says so: "off" makes its disconnect
// cancel the generation at once instead of after the grace period.
const ResumeHeader = "X-Trickle-Resume"

// noResume reads ResumeHeader: "off" or "on" (the default), any case.
func noResume(h http.Header) (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(h.Get(ResumeHeader))); v {
	case "", "on":
		return false, nil
	case "off":
		return true, nil
	default:
		return false, fmt.Errorf("%w: %s must be on or off, not %q", ErrBadRequest, ResumeHeader, v)
	}
}

func dropAfter(q url.Values) (int, error) {
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

// chat is POST /v1/chat/completions.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "shutting_down", ErrShuttingDown.Error())
		return
	}
	req, body, code, err := s.readRequest(w, r)
	if err != nil {
		if code == 0 {
			code = http.StatusBadRequest
		}
		writeError(w, code, "invalid_request_error", err.Error())
		return
	}
	if body, err = s.admitBody(&req, body); err != nil {
		if !refuseAdmit(w, err) {
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		}
		return
	}
	if !req.Stream {
		if s.cfg.upstream != nil {
			s.forwardOnce(w, r, &req, body)
			return
		}
		p, err := s.simParams(&req, r.URL.Query())
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		gen, err := sim.New(p)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		chat.WriteCompletion(w, gen, p)
		return
	}
	off, err := noResume(r.Header)
	if err != nil {
		s.refuse(w, err)
		return
	}
	l, err := s.startStream(&req, body, r.URL.Query(), reqlog.ID(r.Context()))
	if err != nil {
		s.refuse(w, err)
		return
	}
	if off {
		l.NoResume()
	}
	s.serveSSE(w, r, l, 0)
}

// startStream starts a generation for req: the upstream when one is
// configured, else the simulated model with the query's parameters. rid
// is the id of the request asking (reqlog.ID).
func (s *Server) startStream(req *ChatRequest, body []byte, q url.Values, rid string) (*streamlog.Log, error) {
	drop, err := dropAfter(q)
	if err != nil {
		return nil, err
	}
	if s.cfg.upstream != nil {
		if err := s.upstreamFaults(q, drop); err != nil {
			return nil, err
		}
		return s.startUpstream(req, body, drop, rid)
	}
	p, err := s.simParams(req, q)
	if err != nil {
		return nil, err
	}
	gen, err := sim.New(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	l, err := s.startSim(gen, p, drop)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// refuse answers a request the relay cannot admit now.
func (s *Server) refuse(w http.ResponseWriter, err error) {
	f := s.startRefusal(w.Header().Get(reqlog.Header), err)
	if f.retry != "" {
		w.Header().Set("Retry-After", f.retry)
	}
	writeError(w, f.code, f.typ, f.message)
}

// startRefusal is what a client is told when its stream cannot start:
// the words of a refusal it can act on, and for anything else (the
// store's or the relay's own failure) a plain message naming the request
// rid, whose log line has the error.
func (s *Server) startRefusal(rid string, err error) refusal {
	switch {
	case errors.Is(err, errTooMany):
		return refusal{code: http.StatusTooManyRequests, typ: "rate_limit_exceeded", status: stream.RelayFailed, message: err.Error(), retry: "1"}
	case errors.Is(err, ErrBadRequest):
		return refusal{code: http.StatusBadRequest, typ: "invalid_request_error", status: stream.RelayFailed, message: err.Error()}
	case errors.Is(err, ErrShuttingDown):
		return refusal{code: http.StatusServiceUnavailable, typ: "shutting_down", status: stream.RelayFailed, message: err.Error(), retry: "5"}
	case errors.Is(err, ErrStoreUnavailable):
		s.log.Warn("stream refused: the store is unavailable", "request_id", rid, "err", err)
		return refusal{code: http.StatusServiceUnavailable, typ: "store_unavailable", status: stream.RelayFailed,
			message: ErrStoreUnavailable.Error() + "; try again shortly (request " + rid + ")", retry: "2"}
	}
	s.log.Error("stream refused", "request_id", rid, "err", err)
	return refusal{code: http.StatusInternalServerError, typ: "server_error", status: stream.RelayFailed,
		message: "relay: internal error (request " + rid + "); the relay's log has the details"}
}

// startSim registers a stream and starts the simulated generation on it.
func (s *Server) startSim(gen *sim.Generator, p sim.Params, drop int) (*streamlog.Log, error) {
	l, err := s.register(p.Dialect.String(), drop)
	if err != nil {
		return nil, err
	}
	s.log.Info("stream started", "stream", l.ID(), "model", "simulated", "dialect", p.Dialect, "answer", gen.Answer().Name)
	s.clocks.Start(l, gen)
	return l, nil
}
