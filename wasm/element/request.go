package element

import (
	"errors"
	"sort"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
)

// ErrBadRequestBody means ask() got an object that is not a JSON object.
var ErrBadRequestBody = errors.New("trickle: the request body must be a JSON object")

// PromptBody is the OpenAI Chat Completions request for one user prompt,
// streaming. It names model only when the page gave one (the element's
// model attribute): which model answers a request without one is the
// backend's setting, never the widget's. It is written as
// encoding/json.Marshal writes the equivalent map (keys sorted, <, > and &
// escaped), without linking encoding/json into the widget.
func PromptBody(prompt, model string) string {
	b := make([]byte, 0, 64+len(prompt)+len(model))
	b = append(b, `{"messages":[{"content":`...)
	b = jsonx.AppendString(b, prompt)
	b = append(b, `,"role":"user"}]`...)
	if model != "" {
		b = append(b, `,"model":`...)
		b = jsonx.AppendString(b, model)
	}
	b = append(b, `,"stream":true}`...)
	return string(b)
}

// StreamingBody takes a request body the page gave as JSON and makes sure it
// asks for a stream (stream: true), keeping every other field as it was and
// adding none: the page's body is the whole request. The result is what encoding/json gives for the body
// read as a map of raw values and written back: keys sorted, a repeated
// key's last value kept, values compacted with <, > and & escaped.
func StreamingBody(body string) (string, error) {
	type member struct {
		_        incomparable
		key, raw string
	}
	var members []member
	index := make(map[string]int) // a repeated key keeps its last value
	set := func(key, raw string) {
		if i, ok := index[key]; ok {
			members[i].raw = raw
			return
		}
		index[key] = len(members)
		members = append(members, member{key: key, raw: raw})
	}
	isObject := false
	err := jsonx.Decode(body, func(r *jsonx.Reader) {
		isObject = r.Object(func(key string) { set(key, r.Raw()) })
	})
	if err != nil || !isObject {
		return "", errtext.Wrap(ErrBadRequestBody.Error()+": "+errtext.Text(err), ErrBadRequestBody)
	}
	set("stream", "true")
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
