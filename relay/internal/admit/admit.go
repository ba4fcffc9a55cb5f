// Package admit decides what of a client's chat request may reach the
// model: the request fields the relay knows pass and every other is
// dropped, the model must be one the operator allows, max_tokens is
// capped (and set to the cap when the client names none), and the text
// the request sends the model, in every field, is bounded in characters. It never sends anything: the
// relay forwards what Filter returns.
package admit

import (
	"bytes"
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
	MaxInputChars int      // the most characters of text the request sends the model, every field counted (0: no bound)
	// OnDecode, when set, is told the request field each time the policy
	// decodes one's JSON: the relay's tests count them (each field is
	// decoded once, "messages" included, however many rules read it).
	OnDecode func(field string)
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
	conv, err := p.messages(out)
	if err != nil {
		return nil, err
	}
	if p.MaxInputChars > 0 {
		chars, most := p.count(out, conv)
		if chars > p.MaxInputChars {
			return nil, &Refusal{Code: InputTooLong, Param: most, Message: fmt.Sprintf(
				"the request has %d characters of text (the most in %q), over this relay's limit of %d: send a shorter one (drop or summarise earlier messages, trim the tools)", chars, most, p.MaxInputChars)}
		}
	}
	return out, nil
}

func (p Policy) model(out map[string]json.RawMessage) error {
	if len(p.Models) == 0 {
		return nil
	}
	var name string
	if raw, ok := out["model"]; ok && string(raw) != "null" {
		p.decoded("model")
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
		p.decoded(f)
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

// PartFields are the fields of a content part that pass; any other is
// dropped.
var PartFields = []string{"file", "image_url", "input_audio", "refusal", "text", "type"}

// messages decodes the request's messages, once: it drops the unknown
// fields of each message and of each of its content parts, puts what
// passes back in out, and returns the decoded messages for count. Numbers
// keep their text (json.Number).
func (p Policy) messages(out map[string]json.RawMessage) ([]any, error) {
	raw, ok := out["messages"]
	if !ok {
		return nil, nil
	}
	p.decoded("messages")
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var in []any
	if err := d.Decode(&in); err != nil {
		return nil, &Refusal{Code: BadMessages, Param: "messages", Message: `"messages" is not an array of objects`}
	}
	for _, v := range in {
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return nil, &Refusal{Code: BadMessages, Param: "messages", Message: `"messages" is not an array of objects`}
		}
		for k := range m {
			if !slices.Contains(MessageFields, k) {
				delete(m, k)
			}
		}
		if parts, ok := m["content"].([]any); ok && objects(parts) {
			for _, part := range parts {
				part, _ := part.(map[string]any)
				for k := range part {
					if !slices.Contains(PartFields, k) {
						delete(part, k)
					}
				}
			}
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	out["messages"] = b
	return in, nil
}

// decoded tells OnDecode that field is being decoded.
func (p Policy) decoded(field string) {
	if p.OnDecode != nil {
		p.OnDecode(field)
	}
}

// objects reports whether every element is a JSON object (or null): a
// content array that is not is passed as it came.
func objects(vs []any) bool {
	for _, v := range vs {
		if _, ok := v.(map[string]any); !ok && v != nil {
			return false
		}
	}
	return true
}

// Words of the request's own vocabulary, which count for nothing: a
// message's role and a content part's type (any other value counts by
// its characters).
var (
	roles     = []string{"assistant", "developer", "function", "system", "tool", "user"}
	partTypes = []string{"file", "image_url", "input_audio", "input_text", "refusal", "text"}
)

// count is the characters of text in the filtered request out, and the
// field holding the most; conv is its messages, decoded (messages). Everything that reaches the model counts: each
// string by its characters, wherever it is (the messages' text, names and
// tool call ids, tools, response_format, stop, user, a content part's
// data); the keys of objects below the request's own structure (a tool's
// JSON schema) by their characters too. Numbers, booleans and null count
// for nothing, and so do the request's and messages' field names, the
// roles and part types of the vocabulary, and the model's name when the
// operator's allow-list holds it.
func (p Policy) count(out map[string]json.RawMessage, conv []any) (int, string) {
	total, most, mostN := 0, "", -1
	for k, raw := range out {
		n := 0
		switch {
		case k == "model" && len(p.Models) > 0:
		case k == "max_tokens" || k == "max_completion_tokens":
			// A positive integer (maxTokens read it): no text.
		case k == "messages":
			n = conversation(conv)
		default:
			p.decoded(k)
			var v any
			if json.Unmarshal(raw, &v) != nil {
				continue // out holds only what was decoded from JSON
			}
			n = chars(v)
		}
		total += n
		if n > mostN || n == mostN && k < most {
			most, mostN = k, n
		}
	}
	return total, most
}

// conversation counts the messages' text: their fields and content
// parts by value, not by their field names.
func conversation(msgs []any) int {
	n := 0
	for _, m := range msgs {
		fields, _ := m.(map[string]any)
		for k, f := range fields {
			switch k {
			case "role":
				n += word(f, roles)
			case "content":
				parts, ok := f.([]any)
				if !ok {
					n += chars(f)
					continue
				}
				for _, part := range parts {
					pf, ok := part.(map[string]any)
					if !ok {
						n += chars(part)
						continue
					}
					for pk, pv := range pf {
						if pk == "type" {
							n += word(pv, partTypes)
						} else {
							n += chars(pv)
						}
					}
				}
			default:
				n += chars(f)
			}
		}
	}
	return n
}

// word counts a vocabulary word for nothing, any other value by chars.
func word(v any, vocabulary []string) int {
	if s, ok := v.(string); ok && slices.Contains(vocabulary, s) {
		return 0
	}
	return chars(v)
}

// chars counts a JSON value's text: its strings' characters and its
// objects' keys'.
func chars(v any) int {
	switch v := v.(type) {
	case string:
		return utf8.RuneCountInString(v)
	case []any:
		n := 0
		for _, e := range v {
			n += chars(e)
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			n += utf8.RuneCountInString(k) + chars(e)
		}
		return n
	}
	return 0
}
