package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trickle-dev/trickle/relay/sim"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// ChatRequest is the part of an OpenAI Chat Completions request the relay
// reads. The body is forwarded as it is to an OpenAI upstream.
type ChatRequest struct {
	Model               string        `json:"model"`
	Messages            []ChatMessage `json:"messages"`
	Stream              bool          `json:"stream"`
	Seed                *int64        `json:"seed,omitempty"`
	MaxTokens           *int          `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int          `json:"max_completion_tokens,omitempty"`
}

// ChatMessage is one message of a ChatRequest; Content is a string or an
// array of parts.
type ChatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Text is the message's text: the string, or its text parts joined.
func (m ChatMessage) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func (c *ChatRequest) lastUser() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Text()
		}
	}
	return ""
}

// check refuses what the OpenAI API refuses before any model runs: a
// request without messages, or without a user message to answer.
func (c *ChatRequest) check() error {
	if len(c.Messages) == 0 {
		return fmt.Errorf(`%w: the request has no "messages": send at least one, e.g. {"messages":[{"role":"user","content":"Hello"}]}`, ErrBadRequest)
	}
	for _, m := range c.Messages {
		if m.Role == "user" {
			return nil
		}
	}
	return fmt.Errorf(`%w: "messages" has no message with "role":"user": add the question to answer, e.g. {"role":"user","content":"Hello"}`, ErrBadRequest)
}

// ErrBadRequest is wrapped by every request the relay refuses as malformed.
var ErrBadRequest = errors.New("relay: bad request")

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

func decodeRequest(body []byte, req *ChatRequest) error {
	if err := json.Unmarshal(body, req); err != nil {
		return fmt.Errorf("%w: the body is not an OpenAI chat request: %w", ErrBadRequest, err)
	}
	return nil
}

// simParams builds the simulated model's parameters from the request and
// the query string.
func (s *Server) simParams(req *ChatRequest, q url.Values) (sim.Params, error) {
	d := s.cfg.sim
	p := sim.Params{
		Dialect:    q.Get("dialect"),
		Answer:     q.Get("answer"),
		Model:      req.Model,
		Created:    1767225600, // fixed, so that a request always streams the same bytes
		TTFT:       d.TTFT,
		Gap:        d.Gap,
		Jitter:     d.Jitter,
		TokenChars: d.TokenChars,
		NoEnd:      q.Get("no_end") == "1" || q.Get("no_end") == "true",
	}
	if err := req.check(); err != nil {
		return p, err
	}
	last := req.lastUser()
	if name, ok := strings.CutPrefix(strings.TrimSpace(last), "/answer "); ok && p.Answer == "" {
		p.Answer = strings.TrimSpace(name)
	}
	if req.Seed != nil {
		// A seed picks the answer (when none is named) and the jitter.
		p.Seed = uint64(*req.Seed)
	} else {
		// Without one the answer fits the question, and the prompt seeds
		// the jitter: the same request streams the same events.
		if p.Answer == "" {
			p.Answer = sim.Choose(last)
		}
		h := fnv.New64a()
		io.WriteString(h, last)
		p.Seed = h.Sum64()
	}
	for _, m := range req.Messages {
		p.PromptTokens += (len(m.Text()) + 3) / 4
	}
	switch {
	case req.MaxCompletionTokens != nil:
		p.MaxTokens = *req.MaxCompletionTokens
	case req.MaxTokens != nil:
		p.MaxTokens = *req.MaxTokens
	}
	ints := []struct {
		name string
		dst  *int
	}{{"token_chars", &p.TokenChars}, {"error_after", &p.ErrorAfter}, {"stall_after", &p.StallAfter}}
	for _, f := range ints {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return p, fmt.Errorf("%w: %s=%q is not a non-negative integer", ErrBadRequest, f.name, v)
			}
			*f.dst = n
		}
	}
	durs := []struct {
		name string
		dst  *time.Duration
	}{{"ttft_ms", &p.TTFT}, {"gap_ms", &p.Gap}, {"jitter_ms", &p.Jitter}, {"stall_ms", &p.Stall}}
	for _, f := range durs {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil || n < 0 || n > 3600e3 {
				return p, fmt.Errorf("%w: %s=%q is not a number of milliseconds between 0 and 3600000", ErrBadRequest, f.name, v)
			}
			*f.dst = time.Duration(n * float64(time.Millisecond))
		}
	}
	return p, nil
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
		s.writeCompletion(w, gen, p)
		return
	}
	l, err := s.startStream(&req, body, r.URL.Query())
	if err != nil {
		s.refuse(w, err)
		return
	}
	s.serveSSE(w, r, l, 0)
}

// startStream starts a generation for req: the upstream when one is
// configured, else the simulated model with the query's parameters.
func (s *Server) startStream(req *ChatRequest, body []byte, q url.Values) (*streamlog.Log, error) {
	drop, err := dropAfter(q)
	if err != nil {
		return nil, err
	}
	if s.cfg.upstream != nil {
		return s.startUpstream(req, body, drop)
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
	switch {
	case errors.Is(err, errTooMany):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", err.Error())
	case errors.Is(err, ErrBadRequest):
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
	case errors.Is(err, ErrStoreUnavailable):
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, "store_unavailable", err.Error()+"; try again shortly")
	case errors.Is(err, ErrShuttingDown):
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "shutting_down", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "server_error", err.Error())
	}
}

// startSim registers a stream and starts the simulated generation on it.
func (s *Server) startSim(gen *sim.Generator, p sim.Params, drop int) (*streamlog.Log, error) {
	l, err := s.register(p.Dialect, drop)
	if err != nil {
		return nil, err
	}
	clock := s.clocks[s.nextClk.Add(1)%uint32(len(s.clocks))]
	src := &simSource{l: l, g: gen, start: l.Created(), clock: clock, index: -1}
	l.SetCancel(src.cancel)
	s.log.Info("stream started", "stream", l.ID(), "model", "simulated", "dialect", p.Dialect, "answer", gen.Answer().Name)
	src.step(time.Now(), false)
	return l, nil
}

// simSource drives a sim.Generator on the server's simClock: between two
// events a generation holds no goroutine and no timer of its own, so ten
// thousand idle generations cost little. Events are due at absolute offsets
// from the start, so lateness never accumulates.
type simSource struct {
	l     *streamlog.Log
	g     *sim.Generator
	start time.Time
	clock *simClock

	mu      sync.Mutex
	due     time.Duration
	pending sim.Message
	has     bool
	stopped bool

	// Owned by the clock (under its lock).
	index int // in the clock's heap; -1 when not in it
}

// step emits the pending event and every next one already due at now,
// then schedules the first that is not. inline lets the readers that are
// caught up be sent the event from this goroutine (see genLog.emitAt).
func (s *simSource) step(now time.Time, inline bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.stopped {
		if s.has {
			s.has = false
			if !s.l.EmitAt(now, s.pending.Event, s.pending.Data, s.pending.Token, inline) {
				s.stopped = true
				return
			}
		}
		m, ok := s.g.Next()
		if !ok {
			s.stopped = true
			if s.g.Failed() {
				s.l.End(streamlog.StateFailed, "simulated upstream failure (error_after)")
			} else {
				s.l.End(streamlog.StateComplete, "")
			}
			return
		}
		s.due += m.Delay
		s.pending, s.has = m, true
		if at := s.start.Add(s.due); at.After(now) {
			s.clock.at(s, at)
			return
		}
	}
}

func (s *simSource) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.clock.remove(s)
}

// writeCompletion answers stream:false with one chat.completion object.
func (s *Server) writeCompletion(w http.ResponseWriter, gen *sim.Generator, p sim.Params) {
	a := gen.Answer()
	type toolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	msg := struct {
		Role      string     `json:"role"`
		Content   string     `json:"content"`
		Reasoning string     `json:"reasoning_content,omitempty"`
		ToolCalls []toolCall `json:"tool_calls,omitempty"`
	}{Role: "assistant", Content: a.Text, Reasoning: a.Thinking}
	finish := "stop"
	if a.Tool != nil {
		var tc toolCall
		tc.ID, tc.Type = a.Tool.ID, "function"
		tc.Function.Name, tc.Function.Arguments = a.Tool.Name, a.Tool.Arguments
		msg.ToolCalls, finish = []toolCall{tc}, "tool_calls"
	}
	completion := (len(a.Thinking) + len(a.Text) + 3) / 4
	model := p.Model
	if model == "" {
		model = "trickle-sim"
	}
	out := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-sim%016x", p.Seed),
		"object":  "chat.completion",
		"created": p.Created,
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]int{"prompt_tokens": p.PromptTokens, "completion_tokens": completion,
			"total_tokens": p.PromptTokens + completion},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
