// Package chat is the part of the OpenAI Chat Completions API the relay
// reads: the request, its check, the simulated model's parameters from it
// and the query string, and the one-shot answer of the simulated model.
// It never streams: the relay does.
package chat

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/relay/wire"

	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/stream"
)

// Request is the part of an OpenAI Chat Completions request the relay
// reads. The body is forwarded as it is to an OpenAI upstream.
type Request struct {
	Model               string    `json:"model"`
	Messages            []Message `json:"messages"`
	Stream              bool      `json:"stream"`
	Seed                *int64    `json:"seed,omitempty"`
	MaxTokens           *int      `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int      `json:"max_completion_tokens,omitempty"`
}

// Message is one message of a Request; Content is a string or an
// array of parts.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// Text is the message's text: the string, or its text parts joined.
func (m Message) Text() string {
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

// LastUser is the text of the last user message.
func (c *Request) LastUser() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Text()
		}
	}
	return ""
}

// ToolResult is the tool message the conversation ends with, if it does:
// the tool's name (from the message, or from the assistant's call it
// answers) and what the tool returned.
func (c *Request) ToolResult() (name, content string, ok bool) {
	n := len(c.Messages)
	if n == 0 || c.Messages[n-1].Role != "tool" {
		return "", "", false
	}
	m := c.Messages[n-1]
	name = m.Name
	for i := n - 2; i >= 0 && name == ""; i-- {
		for _, call := range c.Messages[i].ToolCalls {
			if call.ID == m.ToolCallID {
				name = call.Function.Name
			}
		}
	}
	return name, m.Text(), true
}

// Check refuses what the OpenAI API refuses before any model runs: a
// request without messages, or without a user message to answer.
func (c *Request) Check() error {
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

// ErrBadRequest is wrapped by every request the relay refuses as malformed
// (400, invalid_request_error).
var ErrBadRequest error = &wire.Error{Type: wire.TypeInvalidRequest, Message: "relay: bad request"}

// Decode reads an OpenAI chat request.
func Decode(body []byte, req *Request) error {
	if err := json.Unmarshal(body, req); err != nil {
		return fmt.Errorf("%w: the body is not an OpenAI chat request: %w", ErrBadRequest, err)
	}
	return nil
}

// SimParams builds the simulated model's parameters from the request, the
// query string and the defaults d (its timings and TokenChars).
func SimParams(req *Request, q url.Values, d sim.Params) (sim.Params, error) {
	p := sim.Params{
		Answer:     q.Get("answer"),
		Model:      req.Model,
		Created:    1767225600, // fixed, so that a request always streams the same bytes
		TTFT:       d.TTFT,
		Gap:        d.Gap,
		Jitter:     d.Jitter,
		TokenChars: d.TokenChars,
		NoEnd:      q.Get("no_end") == "1" || q.Get("no_end") == "true",
	}
	// ?dialect= names one of the simulated model's dialects; auto (or none)
	// is its default, openai.
	if d, err := stream.ParseDialect(q.Get("dialect")); err != nil {
		return p, fmt.Errorf("%w: %w", ErrBadRequest, err)
	} else if d != stream.DialectAuto {
		p.Dialect = d
	}
	if err := req.Check(); err != nil {
		return p, err
	}
	last := req.LastUser()
	if name, ok := strings.CutPrefix(strings.TrimSpace(last), "/answer "); ok && p.Answer == "" {
		p.Answer = strings.TrimSpace(name)
	}
	if name, content, ok := req.ToolResult(); ok && p.Answer == "" {
		// The conversation goes on after a tool ran: the model answers
		// with what the tool returned, and calls no tool again.
		p.ToolResult = &sim.ToolResult{Name: name, Content: content}
	}
	if req.Seed != nil {
		// A seed picks the answer (when none is named) and the jitter.
		p.Seed = uint64(*req.Seed)
	} else {
		// Without one the answer fits the question, and the prompt seeds
		// the jitter: the same request streams the same events.
		if p.Answer == "" && p.ToolResult == nil {
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

// WriteCompletion answers stream:false with one chat.completion object.
func WriteCompletion(w http.ResponseWriter, gen *sim.Generator, p sim.Params) (completionTokens int) {
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
	return completion
}
