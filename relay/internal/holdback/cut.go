package holdback

import (
	"encoding/json"

	"github.com/trickle-dev/trickle/internal/jsonx"
)

// cut rewrites the data of an event that carries text so that it carries
// text[:n] instead: the one JSON string of data that is a value (not an
// object's key) and decodes to text gets text[:n]. It works for every
// dialect whose events are JSON with the text as one string (OpenAI's
// content, Anthropic's and Gemini's text, Ollama's content, the plain
// delta, the Responses API's delta), however the upstream escaped it. It
// reports false when data holds no such string, or more than one: then
// which one is the text is unknown, and the event cannot be cut.
func cut(data, text string, n int) (string, bool) {
	at, end := -1, -1
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		j := i + 1
		for ; j < len(data) && data[j] != '"'; j++ {
			if data[j] == '\\' {
				j++
			}
		}
		if j >= len(data) {
			return "", false // not JSON
		}
		k := j + 1
		for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r') {
			k++
		}
		var s string
		if (k == len(data) || data[k] != ':') && json.Unmarshal([]byte(data[i:j+1]), &s) == nil && s == text {
			if at >= 0 {
				return "", false
			}
			at, end = i, j+1
		}
		i = j
	}
	if at < 0 {
		return "", false
	}
	return data[:at] + string(jsonx.AppendStringKeepHTML(nil, text[:n])) + data[end:], true
}
