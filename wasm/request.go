package wasm

import (
	"encoding/json"
	"errors"
	"fmt"
)

// DefaultModel is the model named in requests built from a prompt when the
// element has no model attribute: the relay's simulated model answers any
// name.
const DefaultModel = "trickle-sim"

// ErrBadRequestBody means ask() got an object that is not a JSON object.
var ErrBadRequestBody = errors.New("trickle: the request body must be a JSON object")

// PromptBody is the OpenAI Chat Completions request for one user prompt,
// streaming.
func PromptBody(prompt, model string) string {
	if model == "" {
		model = DefaultModel
	}
	b, _ := json.Marshal(map[string]any{ // a map of strings and slices cannot fail
		"model":    model,
		"stream":   true,
		"messages": []map[string]string{{"role": "user", "content": prompt}},
	})
	return string(b)
}

// StreamingBody takes a request body the page gave as JSON and makes sure it
// asks for a stream (stream: true) and names a model, keeping every other
// field as it was.
func StreamingBody(body, model string) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil || m == nil {
		return "", fmt.Errorf("%w: %v", ErrBadRequestBody, err)
	}
	m["stream"] = json.RawMessage("true")
	if _, ok := m["model"]; !ok {
		if model == "" {
			model = DefaultModel
		}
		q, _ := json.Marshal(model)
		m["model"] = q
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadRequestBody, err)
	}
	return string(b), nil
}
