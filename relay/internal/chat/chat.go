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
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/wire"

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
	// Tools the model may call (OpenAI's function tools), ToolChoice
	// ("auto", "none", "required" or {"type":"function","function":{"name"}})
	// and Stop (a string or up to four): the simulated model honours them.
	Tools      []ToolDecl      `json:"tools,omitempty"`
	ToolChoice json.RawMessage `json:"tool_choice,omitempty"`
	Stop       json.RawMessage `json:"stop,omitempty"`
}

// ToolDecl is one entry of a request's tools.
type ToolDecl struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
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
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
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

// Check refuses what the OpenAI API refuses before any model runs (and
// what other providers refuse where OpenAI is lenient), as the simulated
// model does: see docs/relay.md, "What the simulated model refuses".
func (c *Request) Check() error {
	if len(c.Messages) == 0 {
		return badf("messages", "missing_required_parameter", `the request has no "messages": send at least one, e.g. {"messages":[{"role":"user","content":"Hello"}]}`)
	}
	user := false
	for i, m := range c.Messages {
		at := fmt.Sprintf("messages.[%d]", i)
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return badf(at+".role", "invalid_value", "Invalid value for %s.role: %q. Supported values are: 'system', 'developer', 'user', 'assistant' and 'tool'.", at, m.Role)
		}
		user = user || m.Role == "user"
		if c := strings.TrimSpace(string(m.Content)); c != "" && c != "null" && c[0] != '"' && c[0] != '[' {
			return badf(at+".content", "invalid_type", "Invalid type for '%s.content': expected a string or an array of parts, but got %.40s instead.", at, c)
		}
		empty := m.empty()
		switch {
		case m.Role == "assistant" && empty && len(m.ToolCalls) == 0:
			return badf(at+".content", "invalid_value", "%s: an assistant message must have content or tool_calls; this one has neither (an empty answer, such as a failed turn, must not be sent back)", at)
		case m.Role == "tool":
			if err := c.checkToolMessage(i); err != nil {
				return err
			}
		case m.Role != "assistant" && (len(m.Content) == 0 || string(m.Content) == "null"):
			return badf(at+".content", "invalid_type", "Invalid type for '%s.content': expected a string or an array of parts, but got null instead.", at)
		}
		if len(m.ToolCalls) > 0 {
			if err := c.checkAnswered(i); err != nil {
				return err
			}
		}
	}
	if !user {
		return badf("messages", "invalid_value", `"messages" has no message with "role":"user": add the question to answer, e.g. {"role":"user","content":"Hello"}`)
	}
	for i, t := range c.Tools {
		at := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return badf(at+".type", "invalid_value", "Invalid value for '%s.type': %q. Supported value: 'function'.", at, t.Type)
		}
		if !toolName.MatchString(t.Function.Name) {
			return badf(at+".function.name", "invalid_value", "Invalid '%s.function.name': %q does not match the pattern '^[a-zA-Z0-9_-]{1,64}$'.", at, t.Function.Name)
		}
		if p := t.Function.Parameters; len(p) > 0 && string(p) != "null" {
			var obj map[string]json.RawMessage
			if json.Unmarshal(p, &obj) != nil {
				return badf(at+".function.parameters", "invalid_type", "Invalid type for '%s.function.parameters': expected a JSON Schema object.", at)
			}
		}
	}
	if _, err := c.toolChoice(); err != nil {
		return err
	}
	if _, err := c.stop(); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_tokens", c.MaxTokens}, {"max_completion_tokens", c.MaxCompletionTokens}} {
		if f.v != nil && *f.v < 1 {
			return badf(f.name, "integer_below_min_value", "Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", f.name, *f.v)
		}
	}
	return nil
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// empty reports a message with no content: none, null, "" or no parts.
func (m Message) empty() bool {
	switch strings.TrimSpace(string(m.Content)) {
	case "", "null", `""`, "[]":
		return true
	}
	return false
}

// checkToolMessage refuses a tool message that answers no call: it must
// follow (with only other tool messages between) the assistant message
// whose tool_calls has its tool_call_id.
func (c *Request) checkToolMessage(i int) error {
	at := fmt.Sprintf("messages.[%d]", i)
	id := c.Messages[i].ToolCallID
	for j := i - 1; j >= 0; j-- {
		p := c.Messages[j]
		if p.Role == "tool" {
			continue
		}
		if p.Role == "assistant" {
			for _, call := range p.ToolCalls {
				if call.ID == id {
					return nil
				}
			}
		}
		break
	}
	return badf(at+".role", "invalid_value", "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls': %s answers tool_call_id %q, which no such message has.", at, id)
}

// checkAnswered refuses an assistant message whose tool calls are not all
// answered by the tool messages right after it (unless it is the last).
func (c *Request) checkAnswered(i int) error {
	if i == len(c.Messages)-1 {
		return nil
	}
	answered := map[string]bool{}
	for j := i + 1; j < len(c.Messages) && c.Messages[j].Role == "tool"; j++ {
		answered[c.Messages[j].ToolCallID] = true
	}
	var missing []string
	for _, call := range c.Messages[i].ToolCalls {
		if !answered[call.ID] {
			missing = append(missing, call.ID)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return badf(fmt.Sprintf("messages.[%d].role", i+1), "invalid_value", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(missing, ", "))
}

// ToolChoiceName is the request's tool_choice as a word: "", "auto",
// "none", "required" or the tool's name (Check refuses any other).
func (c *Request) ToolChoiceName() string {
	s, _ := c.toolChoice()
	return s
}

// StopSequences is the request's stop: none, one or up to four.
func (c *Request) StopSequences() []string {
	s, _ := c.stop()
	return s
}

// toolChoice is the request's tool_choice as the simulated model reads it:
// "", "auto", "none", "required" or a declared tool's name.
func (c *Request) toolChoice() (string, error) {
	raw := c.ToolChoice
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			if s == "required" && len(c.Tools) == 0 {
				return "", badf("tool_choice", "invalid_value", "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
			}
			return s, nil
		}
		return "", badf("tool_choice", "invalid_value", "Invalid value for 'tool_choice': %q. Supported values are: 'none', 'auto', 'required' or a named function.", s)
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) != nil || named.Type != "function" {
		return "", badf("tool_choice", "invalid_value", `Invalid value for 'tool_choice': expected a string or {"type":"function","function":{"name":...}}.`)
	}
	for _, t := range c.Tools {
		if t.Function.Name == named.Function.Name {
			return named.Function.Name, nil
		}
	}
	return "", badf("tool_choice", "invalid_value", "Invalid value for 'tool_choice': function %q is not in 'tools'.", named.Function.Name)
}

// stop is the request's stop sequences: a string or an array of up to 4.
func (c *Request) stop() ([]string, error) {
	raw := c.Stop
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		return nil, badf("stop", "invalid_type", "Invalid type for 'stop': expected a string or an array of strings.")
	}
	if len(many) > 4 {
		return nil, badf("stop", "array_above_max_length", "Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length %d instead.", len(many))
	}
	return many, nil
}

// RequestError is a request refused as malformed, in the OpenAI API's
// terms: the field it is about (Param, e.g. "messages.[2].content") and
// a code. It wraps ErrBadRequest.
type RequestError struct {
	Param, Code, Message string
}

func (e *RequestError) Error() string { return ErrBadRequest.Error() + ": " + e.Message }
func (e *RequestError) Unwrap() error { return ErrBadRequest }

// Refusal makes a RequestError a wire.Refuser: 400 invalid_request_error
// with the field it is about and its code, as OpenAI's errors have them.
func (e *RequestError) Refusal() wire.Error {
	return wire.Error{Type: wire.TypeInvalidRequest, Code: wire.Code(e.Code), Param: e.Param, Message: e.Error()}
}

func badf(param, code, format string, args ...any) error {
	return &RequestError{Param: param, Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrBadRequest is wrapped by every request the relay refuses as malformed
// (400, invalid_request_error).
var ErrBadRequest error = &wire.Error{Type: wire.TypeInvalidRequest, Message: "relay: bad request"}

// Read reads an OpenAI chat request from its members, each as its raw
// JSON (the body decoded once, as admit.Decode does): each field of
// Request from the member its json tag names, so that no name is written
// twice. A member of the wrong type is refused as invalid JSON, naming it.
func Read(members map[string]json.RawMessage, req *Request) error {
	v := reflect.ValueOf(req).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := members[name]
		if !ok || name == "" || name == "-" {
			continue
		}
		if err := json.Unmarshal(raw, v.FieldByIndex(f.Index).Addr().Interface()); err != nil {
			return &RequestError{Param: name, Code: "invalid_json", Message: fmt.Sprintf("the body is not an OpenAI chat request (We could not parse the JSON body of your request): %q: %v", name, err)}
		}
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
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, sim.Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	p.ToolChoice, _ = req.toolChoice() // Check refused a bad one
	p.Stop, _ = req.stop()
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

// WriteCompletion answers stream:false with one chat.completion object:
// the generation drained, so max_tokens, stop and the tools apply as they
// do to a stream.
func WriteCompletion(w http.ResponseWriter, gen *sim.Generator, p sim.Params) (completionTokens int) {
	whole := gen.Drain()
	if gen.Failed() {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"simulated upstream failure","type":"server_error","param":null,"code":"upstream_error"}}`+"\n")
		return whole.Tokens
	}
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
		Content   *string    `json:"content"`
		Reasoning string     `json:"reasoning_content,omitempty"`
		ToolCalls []toolCall `json:"tool_calls,omitempty"`
	}{Role: "assistant", Content: &whole.Text, Reasoning: whole.Thinking}
	if t := whole.Tool; t != nil {
		var tc toolCall
		tc.ID, tc.Type = t.ID, "function"
		tc.Function.Name, tc.Function.Arguments = t.Name, t.Arguments
		msg.ToolCalls = []toolCall{tc}
		if whole.Text == "" {
			msg.Content = nil // as the API sends a call alone
		}
	}
	model := p.Model
	if model == "" {
		model = "trickle-sim"
	}
	out := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-sim%016x", p.Seed),
		"object":  "chat.completion",
		"created": p.Created,
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": whole.FinishReason}},
		"usage": map[string]int{"prompt_tokens": p.PromptTokens, "completion_tokens": whole.Tokens,
			"total_tokens": p.PromptTokens + whole.Tokens},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
	return whole.Tokens
}
