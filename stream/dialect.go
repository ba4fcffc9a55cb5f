package stream

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/sse"
)

// A Decoder interprets one dialect: it turns the dialect's events into
// unified Events. A Decoder keeps per-answer state (open tool calls and
// content blocks); use a new one for each answer.
type Decoder interface {
	// Dialect is the decoder's name ("openai", "anthropic", …).
	Dialect() string
	// Decode interprets one event — an SSE event, or one NDJSON line given
	// as an event of type "message" — and calls emit for each unified
	// event it carries. A non-nil error (wrapping ErrBadJSON,
	// ErrUnknownEvent or ErrUnknownToolCall) means the event, or the part
	// of it named by the error, was skipped; the stream goes on.
	Decode(ev sse.Event, emit func(Event)) error
	// Close is called when the byte stream ended cleanly. Gemini, whose end
	// is a clean close after a finish reason, emits its end marker here.
	Close(emit func(Event))
	// EndMarker names what ends this dialect's answer, for messages.
	EndMarker() string
}

var dialects = map[string]func() Decoder{
	"openai":    func() Decoder { return &openaiDecoder{} },
	"responses": func() Decoder { return &responsesDecoder{} },
	"anthropic": func() Decoder { return &anthropicDecoder{} },
	"gemini":    func() Decoder { return &geminiDecoder{} },
	"ollama":    func() Decoder { return &ollamaDecoder{} },
	"plain":     func() Decoder { return &plainDecoder{} },
}

// Dialects lists the dialect names NewDecoder and WithDialect accept
// (besides "auto"), sorted.
func Dialects() []string {
	names := make([]string, 0, len(dialects))
	for n := range dialects {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewDecoder returns a fresh decoder for the named dialect: "openai"
// (Chat Completions), "responses" (OpenAI Responses), "anthropic"
// (Messages), "gemini" (streamGenerateContent?alt=sse), "ollama"
// (/api/chat NDJSON) or "plain" ({"delta":…} + [DONE]).
func NewDecoder(dialect string) (Decoder, error) {
	mk, ok := dialects[strings.ToLower(dialect)]
	if !ok {
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownDialect, dialect, strings.Join(Dialects(), ", "))
	}
	return mk(), nil
}

// unmarshal decodes an event's JSON data through read, telling apart data
// that is not JSON at all (ErrBadJSON) from JSON of an unexpected shape
// (ErrUnknownEvent).
//
// The decoders read with jsonx rather than encoding/json so the widget
// does not link encoding/json and its reflection (which
// TestTheDefaultWidgetLinksNoneOfTheHeavyPackagesItDropped in
// wasm/internal/build keeps out, for the widget's size; docs/notes/widget-size.md)
// and an event's fields cost no allocation (see BenchmarkPipeline). The
// structs keep their json tags: they document the wire names, and the
// tests decode the same structs with encoding/json as the oracle.
func unmarshal(data string, read func(r *jsonx.Reader)) error {
	r, err := jsonx.NewReader(data)
	if err == nil {
		read(&r)
		err = r.Err()
	}
	return eventError(err)
}

// object is a payload type that reads itself from a jsonx.Reader.
type object[T any] interface {
	*T
	read(r *jsonx.Reader)
}

// readObject reads an object (or null) into the pointer field *dst the way
// encoding/json fills a pointer: null leaves it nil, an object is read into
// the existing value or a new one.
func readObject[T any, P object[T]](r *jsonx.Reader, dst **T) {
	if jsonx.Ptr(r, dst) {
		P(*dst).read(r)
	}
}

// eventError sorts what jsonx returned into ErrBadJSON and ErrUnknownEvent.
// The hot decoders call jsonx.NewReader and their read method directly,
// rather than unmarshal, so the Reader stays on the stack.
func eventError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, jsonx.ErrType) {
		return fmt.Errorf("%w: unexpected shape: %v", ErrUnknownEvent, err)
	}
	return fmt.Errorf("%w: %v", ErrBadJSON, err)
}

// rawJSON is a JSON value kept as its text, as json.RawMessage keeps it
// (null is "null", a missing value "").
type rawJSON string

// apiError is the error object the OpenAI-style APIs and Gemini put in a
// stream: {"message","type","code","status"}; code may be a number.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    rawJSON `json:"code"`
	Status  string  `json:"status"`
}

var apiErrorFields = []string{"message", "type", "code", "status"}

func (e *apiError) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, apiErrorFields) {
		case "message":
			r.Str(&e.Message)
		case "type":
			r.Str(&e.Type)
		case "code":
			e.Code = rawJSON(r.Raw())
		case "status":
			r.Str(&e.Status)
		}
	})
}

func (e *apiError) provider(dialect string) *ProviderError {
	typ := e.Type
	if typ == "" {
		typ = e.Status
	}
	if typ == "" {
		typ = rawString(e.Code)
	}
	if typ == "" {
		typ = "error"
	}
	msg := e.Message
	if msg == "" {
		msg = "the provider reported an error without a message"
	}
	return &ProviderError{Dialect: dialect, Type: typ, Message: msg}
}

// rawString turns a JSON string or number into its text ("" for null).
func rawString(raw rawJSON) string {
	if raw == "" || raw == "null" {
		return ""
	}
	var s string
	if jsonx.Decode(string(raw), func(r *jsonx.Reader) { r.Str(&s) }) == nil {
		return s
	}
	return string(raw)
}

// rawArgs turns a JSON arguments value (an object, as Gemini and Ollama
// send it whole) into its text; a missing value is the empty object.
func rawArgs(raw rawJSON) string {
	if raw == "" || raw == "null" {
		return "{}"
	}
	return string(raw)
}

// anthropicTypes are the Messages streaming event types.
var anthropicTypes = map[string]bool{
	"message_start": true, "message_delta": true, "message_stop": true,
	"content_block_start": true, "content_block_delta": true, "content_block_stop": true,
	"ping": true,
}

// detectProbe is the union of the top-level keys that tell the dialects
// apart.
type detectProbe struct {
	Type           string  `json:"type"`
	Object         string  `json:"object"`
	Choices        rawJSON `json:"choices"`
	Candidates     rawJSON `json:"candidates"`
	UsageMetadata  rawJSON `json:"usageMetadata"`
	PromptFeedback rawJSON `json:"promptFeedback"`
	Message        rawJSON `json:"message"`
	Done           *bool   `json:"done"`
	CreatedAt      rawJSON `json:"created_at"`
	Delta          rawJSON `json:"delta"`
	Error          rawJSON `json:"error"`
	Code           rawJSON `json:"code"`
}

var detectProbeFields = []string{"type", "object", "choices", "candidates", "usageMetadata", "promptFeedback",
	"message", "done", "created_at", "delta", "error", "code"}

func (p *detectProbe) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, detectProbeFields) {
		case "type":
			r.Str(&p.Type)
		case "object":
			r.Str(&p.Object)
		case "choices":
			p.Choices = rawJSON(r.Raw())
		case "candidates":
			p.Candidates = rawJSON(r.Raw())
		case "usageMetadata":
			p.UsageMetadata = rawJSON(r.Raw())
		case "promptFeedback":
			p.PromptFeedback = rawJSON(r.Raw())
		case "message":
			p.Message = rawJSON(r.Raw())
		case "done":
			r.BoolPtr(&p.Done)
		case "created_at":
			p.CreatedAt = rawJSON(r.Raw())
		case "delta":
			p.Delta = rawJSON(r.Raw())
		case "error":
			p.Error = rawJSON(r.Raw())
		case "code":
			p.Code = rawJSON(r.Raw())
		}
	})
}

// Detect names the dialect an event belongs to, from its SSE type and the
// shape of its data, or returns "" when this event does not tell (the
// relay's "trickle.status", an unrecognised object).
func Detect(ev sse.Event) string {
	switch {
	case anthropicTypes[ev.Type]:
		return "anthropic"
	case strings.HasPrefix(ev.Type, "response."):
		return "responses"
	case ev.Type == StatusEventType:
		return ""
	}
	data := strings.TrimSpace(ev.Data)
	if data == "[DONE]" {
		return "openai"
	}
	var p detectProbe
	if jsonx.Decode(data, p.read) != nil {
		return ""
	}
	switch {
	case anthropicTypes[p.Type]:
		return "anthropic"
	case strings.HasPrefix(p.Type, "response."):
		return "responses"
	case p.Type == "error" && len(p.Error) > 0 && p.Error[0] == '{':
		return "anthropic" // {"type":"error","error":{"type":"overloaded_error",…}}
	case p.Type == "error":
		return "responses" // {"type":"error","code":…,"message":…}
	case len(p.Choices) > 0 || p.Object == "chat.completion.chunk":
		return "openai"
	case len(p.Candidates) > 0 || len(p.UsageMetadata) > 0 || len(p.PromptFeedback) > 0:
		return "gemini"
	case p.Done != nil || (len(p.Message) > 0 && len(p.CreatedAt) > 0):
		return "ollama"
	case len(p.Delta) > 0 && p.Delta[0] == '"':
		return "plain"
	case len(p.Error) > 0 && p.Error[0] == '"':
		return "ollama" // {"error":"model not found"}
	case len(p.Error) > 0 && strings.Contains(string(p.Error), `"status"`):
		return "gemini" // {"error":{"code":503,"message":…,"status":"UNAVAILABLE"}}
	case len(p.Error) > 0:
		return "openai"
	}
	return ""
}
