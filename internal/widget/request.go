package widget

import (
	"errors"
	"fmt"
	"sort"

	"github.com/trickle-dev/trickle/internal/jsonx"
)

// DefaultModel is the model named in requests built from a prompt when the
// element has no model attribute: the relay's simulated model answers any
// name.
const DefaultModel = "trickle-sim"

// ErrBadRequestBody means ask() got an object that is not a JSON object.
var ErrBadRequestBody = errors.New("trickle: the request body must be a JSON object")

// PromptBody is the OpenAI Chat Completions request for one user prompt,
// streaming. It is written as encoding/json.Marshal writes the equivalent
// map (keys sorted, <, > and & escaped), without linking encoding/json
// into the widget.
func PromptBody(prompt, model string) string {
	if model == "" {
		model = DefaultModel
	}
	b := make([]byte, 0, 64+len(prompt)+len(model))
	b = append(b, `{"messages":[{"content":`...)
	b = jsonx.AppendString(b, prompt)
	b = append(b, `,"role":"user"}],"model":`...)
	b = jsonx.AppendString(b, model)
	b = append(b, `,"stream":true}`...)
	return string(b)
}

// StreamingBody takes a request body the page gave as JSON and makes sure it
// asks for a stream (stream: true) and names a model, keeping every other
// field as it was. The result is what encoding/json gives for the body
// read as a map of raw values and written back: keys sorted, a repeated
// key's last value kept, values compacted with <, > and & escaped.
func StreamingBody(body, model string) (string, error) {
	type member struct{ key, raw string }
	var members []member
	index := make(map[string]int) // a repeated key keeps its last value
	set := func(key, raw string) {
		if i, ok := index[key]; ok {
			members[i].raw = raw
			return
		}
		index[key] = len(members)
		members = append(members, member{key, raw})
	}
	isObject := false
	err := jsonx.Decode(body, func(r *jsonx.Reader) {
		isObject = r.Object(func(key string) { set(key, r.Raw()) })
	})
	if err != nil || !isObject {
		return "", fmt.Errorf("%w: %v", ErrBadRequestBody, err)
	}
	set("stream", "true")
	if _, ok := index["model"]; !ok {
		if model == "" {
			model = DefaultModel
		}
		set("model", string(jsonx.AppendString(nil, model)))
	}
	// sort.Slice shares its code with the widget's other sorts; a generic
	// sort of members would be a pdqsort of its own in the .wasm.
	sort.Slice(members, func(i, j int) bool { return members[i].key < members[j].key })
	b := make([]byte, 0, len(body)+32)
	b = append(b, '{')
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, m.key)
		b = append(b, ':')
		b = jsonx.AppendCompact(b, m.raw)
	}
	b = append(b, '}')
	return string(b), nil
}
