// One admission pipeline for both transports: a POST on
// /v1/chat/completions (SSE, or one JSON answer) and the first message on
// /v1/ws walk the same steps, in the same order, and each transport keeps
// only its own way of saying no.

package relay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/trickle-dev/trickle/relay/internal/admit"
	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/registry"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/sim"
)

// admission is a request on its way in, checked: everything about it
// that can be refused has been, before anything is counted against its
// identity's limits.
type admission struct {
	req     chat.Request
	members map[string]json.RawMessage // the request's members as the operator's policy lets them reach the model
	drop    int                        // the drop_after fault (streamed answers)
	// With the simulated model: its parameters and its generator. With
	// an upstream: the body it is sent.
	sim     sim.Params
	gen     *sim.Generator
	payload []byte
	ticket  *limit.Ticket
	rid     string
}

// admit runs the admission of a request for a generation whose body is
// body (within the size limit): the relay draining, the body decoded
// once (the policy filters the client's JSON, and the filtered request is
// what the model reads), hold-back's rule, the test faults and the
// simulated model's parameters, then the identity's limits. streamed
// makes the answer streamed whatever the body says (the WebSocket). A
// refusal is an error carrying its wire.Error; a request refused counts
// against no limit.
func (s *Server) admit(r *http.Request, body []byte, streamed bool) (*admission, error) {
	members, err := s.decode(body)
	return s.admitMembers(r, members, err, streamed)
}

// decode is the one decode of a request's body, a POST's or a
// WebSocket's first message (admit.Decode): tests count them.
func (s *Server) decode(body []byte) (map[string]json.RawMessage, error) {
	s.bodyDecodes.Add(1)
	return admit.Decode(body)
}

// admitMembers is admit of a body already decoded (decode): its members,
// or the error decoding it gave, which is refused after the drain check
// as admit refuses it.
func (s *Server) admitMembers(r *http.Request, members map[string]json.RawMessage, decodeErr error, streamed bool) (*admission, error) {
	if s.reg.Draining() {
		return nil, registry.ErrShuttingDown
	}
	if decodeErr != nil {
		return nil, decodeErr
	}
	a := &admission{rid: reqlog.ID(r.Context())}
	var err error
	policy := s.cfg.guard.policy()
	policy.OnDecode = s.countDecode
	if a.members, err = policy.FilterFields(members); err != nil {
		return nil, err
	}
	if err := chat.Read(a.members, &a.req); err != nil {
		return nil, err
	}
	a.req.Stream = a.req.Stream || streamed
	if err := s.gates.Admit(a.req.Stream); err != nil { // hold-back: streamed answers only
		return nil, err
	}
	q := r.URL.Query()
	if a.req.Stream {
		if a.drop, err = chat.DropAfter(q); err != nil {
			return nil, err
		}
	}
	if u := s.cfg.upstream; u != nil {
		if a.req.Stream {
			if err := chat.UpstreamFaults(q, a.drop, s.cfg.allowFaults); err != nil {
				return nil, err
			}
		}
		if a.payload, err = u.Body(&a.req, a.members, a.req.Stream); err != nil {
			return nil, err
		}
	} else {
		if a.sim, err = s.simParams(&a.req, q); err != nil {
			return nil, err
		}
		if a.gen, err = sim.New(a.sim); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
	}
	// Counted last: a refused request reaches no model and uses no limit.
	// The request's output cap is held against its day's token budget
	// until the generation ends.
	if a.ticket, err = s.limits.Admit(r.Context(), Identity(r), outputCap(&a.req)); err != nil {
		return nil, err
	}
	return a, nil
}

// countDecode counts the policy's decodes of a request's messages
// (admit.Policy.OnDecode): the tests hold them to once a request.
func (s *Server) countDecode(field string) {
	if field == "messages" {
		s.messagesDecodes.Add(1)
	}
}

// outputCap is the most output tokens the filtered request may generate
// (the policy sets max_tokens to the relay's cap when the request names
// none): 0 when nothing caps it.
func outputCap(req *chat.Request) int64 {
	switch {
	case req.MaxCompletionTokens != nil:
		return int64(*req.MaxCompletionTokens)
	case req.MaxTokens != nil:
		return int64(*req.MaxTokens)
	}
	return 0
}

// start starts the admitted generation as a stream; when it cannot (the
// relay full, the store unavailable), the request's limits are given
// back.
func (s *Server) start(r *http.Request, a *admission) (*streamlog.Log, error) {
	var (
		l   *streamlog.Log
		err error
	)
	if s.cfg.upstream != nil {
		l, err = s.startUpstream(a.payload, a.drop, a.rid, s.owner(r), a.ticket)
	} else {
		l, err = s.startSim(a.gen, a.sim, a.drop, a.rid, s.owner(r), a.ticket)
	}
	if err != nil {
		a.ticket.Refund(r.Context())
	}
	return l, err
}

// simParams builds the simulated model's parameters from the request and
// the query string.
func (s *Server) simParams(req *chat.Request, q url.Values) (sim.Params, error) {
	d := s.cfg.sim
	return chat.SimParams(req, q, sim.Params{TTFT: d.TTFT, Gap: d.Gap, Jitter: d.Jitter, TokenChars: d.TokenChars})
}
