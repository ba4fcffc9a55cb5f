// Package admit decides what of a client's chat request may reach the
// model: the request fields the relay knows pass and every other is
// dropped, the model must be one the operator allows, max_tokens is
// capped (and set to the cap when the client names none), and the
// conversation is bounded in characters. It never sends anything: the
// relay forwards what Filter returns.
package admit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/wire"
)

// Fields are the request fields that pass to the model (OpenAI Chat
// Completions); any other is dropped. n is not one: it multiplies the cost
// and the relay streams one choice.
var Fields = []string{
	"frequency_penalty", "max_completion_tokens", "max_tokens", "messages", "model",
	"parallel_tool_calls", "presence_penalty", "reasoning_effort", "response_format",
	"seed", "stop", "stream", "stream_options", "temperature", "tool_choice", "tools",
	"top_p", "user",
}

// MessageFields are the fields of a message that pass; any other is
// dropped.
var MessageFields = []string{"content", "name", "role", "tool_call_id", "tool_calls"}

// Policy is what the operator allows. A zero Policy only drops unknown
// fields.
type Policy struct {
	Models        []string // the models a request may name (empty: any); one that names none gets the first
	MaxTokens     int      // the most output tokens a request may ask for (0: no cap)
	MaxInputChars int      // the most characters of the conversation (0: no bound)
}

// Refusal is a request the policy refuses: Code says which rule, Param
// names the request field.
type Refusal struct {
	Code    wire.Code
	Param   string
	Message string
}

func (r *Refusal) Error() string { return "relay: " + r.Message }

// Refusal is how the relay refuses the request: 400 with the rule's code
// and the field it is about.
func (r *Refusal) Refusal() wire.Error {
	return wire.Error{Type: wire.TypeInvalidRequest, Code: r.Code, Param: r.Param, Message: r.Error()}
}

// Refusal codes (package wire has the contract).
const (
	ModelNotAllowed  = wire.CodeModelNotAllowed
	MaxTokensOverCap = wire.CodeMaxTokensOverCap
	BadMaxTokens     = wire.CodeInvalidMaxTokens
	InputTooLong     = wire.CodeInputTooLong
	NotAnObject      = wire.CodeInvalidJSON
	BadMessages      = wire.CodeInvalidMessages
)

// Decode decodes a request body: its members, each as its raw JSON, or a
// *Refusal when the body is not a JSON object. The relay decodes a body
// once, here; the policy and everything after it read these members.
func Decode(body []byte) (map[string]json.RawMessage, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &Refusal{Code: NotAnObject, Message: "the body is not an OpenAI chat request (a JSON object): " + err.Error()}
	}
	return in, nil
}

// Filter returns the request body as it may reach the model, or a
// *Refusal: Decode, FilterFields and the JSON of what passes.
func (p Policy) Filter(body []byte) ([]byte, error) {
	in, err := Decode(body)
	if err != nil {
		return nil, err
	}
	out, err := p.FilterFields(in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// FilterFields returns the members of a decoded request (Decode) that may
// reach the model, or a *Refusal. in is left as it is.
func (p Policy) FilterFields(in map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(in))
	for k, v := range in {
		if slices.Contains(Fields, k) {
			out[k] = v
		}
	}
	if err := p.model(out); err != nil {
		return nil, err
	}
	if err := p.maxTokens(out); err != nil {
		return nil, err
	}
	msgs, chars, err := messages(out["messages"])
	if err != nil {
		return nil, err
	}
	if msgs != nil {
		out["messages"] = msgs
	}
	if p.MaxInputChars > 0 && chars > p.MaxInputChars {
		return nil, &Refusal{Code: InputTooLong, Param: "messages", Message: fmt.Sprintf(
			"the conversation has %d characters, over this relay's limit of %d: send a shorter one (drop or summarise earlier messages)", chars, p.MaxInputChars)}
	}
	return out, nil
}

func (p Policy) model(out map[string]json.RawMessage) error {
	if len(p.Models) == 0 {
		return nil
	}
	var name string
	if raw, ok := out["model"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &name) != nil {
			return &Refusal{Code: ModelNotAllowed, Param: "model", Message: `"model" is not a string; this relay allows ` + list(p.Models)}
		}
	}
	if name == "" {
		out["model"], _ = json.Marshal(p.Models[0])
		return nil
	}
	if !slices.Contains(p.Models, name) {
		return &Refusal{Code: ModelNotAllowed, Param: "model", Message: fmt.Sprintf("the model %q is not allowed here; this relay allows %s", name, list(p.Models))}
	}
	return nil
}

func list(models []string) string {
	q := make([]string, len(models))
	for i, m := range models {
		q[i] = fmt.Sprintf("%q", m)
	}
	return strings.Join(q, ", ")
}

func (p Policy) maxTokens(out map[string]json.RawMessage) error {
	named := false
	for _, f := range []string{"max_tokens", "max_completion_tokens"} {
		raw, ok := out[f]
		if !ok || string(raw) == "null" {
			delete(out, f)
			continue
		}
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil || n <= 0 {
			return &Refusal{Code: BadMaxTokens, Param: f, Message: fmt.Sprintf("%q is %s, not a positive integer", f, raw)}
		}
		if p.MaxTokens > 0 && n > int64(p.MaxTokens) {
			return &Refusal{Code: MaxTokensOverCap, Param: f, Message: fmt.Sprintf("%q asks for %d tokens, over this relay's cap of %d: ask for at most %d", f, n, p.MaxTokens, p.MaxTokens)}
		}
		named = true
	}
	if !named && p.MaxTokens > 0 {
		out["max_tokens"], _ = json.Marshal(p.MaxTokens)
	}
	return nil
}

// messages drops the unknown fields of each message and counts the
// conversation's characters: text counted as characters, any other
// content part (an image, a file) and tool calls by their JSON's length.
func messages(raw json.RawMessage) (json.RawMessage, int, error) {
	if raw == nil {
		return nil, 0, nil
	}
	var in []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, 0, &Refusal{Code: BadMessages, Param: "messages", Message: `"messages" is not an array of objects`}
	}
	chars := 0
	for i, m := range in {
		for k := range m {
			if !slices.Contains(MessageFields, k) {
				delete(m, k)
			}
		}
		chars += contentChars(m["content"]) + len(m["tool_calls"])
		in[i] = m
	}
	b, err := json.Marshal(in)
	return b, chars, err
}

func contentChars(raw json.RawMessage) int {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return utf8.RuneCountInString(s)
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return len(raw)
	}
	n := 0
	for _, part := range parts {
		var p struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(part, &p) == nil && (p.Type == "text" || p.Type == "input_text") {
			n += utf8.RuneCountInString(p.Text)
			continue
		}
		n += len(part)
	}
	return n
}
