package stream

import (
	"cmp"
	"errors"
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/sse"
)

// Dialect names a wire format of a model's streamed answer. Its values are
// the Dialect constants; ParseDialect reads one from text (a flag, an
// attribute, a query parameter).
type Dialect string

// The dialects. DialectAuto is not a format: it asks for detection.
const (
	// DialectAuto detects the dialect from the content type and the first
	// event.
	DialectAuto Dialect = "auto"
	// DialectOpenAI is OpenAI Chat Completions: chat.completion.chunk
	// events ending with data: [DONE].
	DialectOpenAI Dialect = "openai"
	// DialectResponses is the OpenAI Responses API: response.* events
	// ending with response.completed.
	DialectResponses Dialect = "responses"
	// DialectAnthropic is Anthropic Messages: message_* and
	// content_block_* events ending with message_stop.
	DialectAnthropic Dialect = "anthropic"
	// DialectGemini is Gemini streamGenerateContent?alt=sse: candidates
	// ending with a finish reason and a clean close.
	DialectGemini Dialect = "gemini"
	// DialectOllama is Ollama /api/chat: NDJSON lines ending with
	// done:true.
	DialectOllama Dialect = "ollama"
	// DialectPlain is {"delta":…} events ending with data: [DONE].
	DialectPlain Dialect = "plain"
)

// dialectList is the one list of dialects (besides DialectAuto), in the
// order Dialects gives them; decoders holds how each is read.
var dialectList = []Dialect{DialectOpenAI, DialectResponses, DialectAnthropic, DialectGemini, DialectOllama, DialectPlain, DialectText, DialectAISDK, DialectAGUI}

var decoders = map[Dialect]func() Decoder{
	DialectOpenAI:    func() Decoder { return &openaiDecoder{} },
	DialectResponses: func() Decoder { return &responsesDecoder{} },
	DialectAnthropic: func() Decoder { return &anthropicDecoder{} },
	DialectGemini:    func() Decoder { return &geminiDecoder{} },
	DialectOllama:    func() Decoder { return &ollamaDecoder{} },
	DialectPlain:     func() Decoder { return &plainDecoder{} },
	DialectText:      func() Decoder { return &textDecoder{} },
	DialectAISDK:     func() Decoder { return &aisdkDecoder{} },
	DialectAGUI:      func() Decoder { return &aguiDecoder{} },
}

// trailer is a Decoder whose dialect sends closing events after its end
// marker that are neither news nor a problem: they are not counted as
// events after the end.
type trailer interface {
	trailer(ev sse.Event) bool
}

// Dialects lists the dialects NewDecoder and WithDialect accept besides
// DialectAuto: the one list every other part of Trickle (the relay, its
// simulated model, the widget's dialect attribute, the trickle command's
// flags) takes its names from.
func Dialects() []Dialect { return append([]Dialect(nil), dialectList...) }

// String is the dialect's name.
func (d Dialect) String() string { return string(d) }

// Known reports whether d is DialectAuto or one of Dialects.
func (d Dialect) Known() bool { return d == DialectAuto || decoders[d] != nil }

// ParseDialect reads a dialect's name, in any case and with spaces around
// it; "" is DialectAuto. An unknown name is an error wrapping
// ErrUnknownDialect that names it and the valid ones.
func ParseDialect(s string) (Dialect, error) {
	d := Dialect(strings.ToLower(stdlite.TrimSpace(s)))
	if d == "" {
		return DialectAuto, nil
	}
	if !d.Known() {
		return "", unknownDialect(s)
	}
	return d, nil
}

// DialectNames joins names with ", " ("openai, responses, …"), for messages
// that list the valid values.
func DialectNames(ds []Dialect) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}

func unknownDialect(s string) error {
	return errtext.Wrap(ErrUnknownDialect.Error()+" "+strconv.Quote(s)+" (want auto or one of "+DialectNames(dialectList)+")", ErrUnknownDialect)
}

// A Decoder interprets one dialect: it turns the dialect's events into
// unified Events. A Decoder keeps per-answer state (open tool calls and
// content blocks); use a new one for each answer.
type Decoder interface {
	// Dialect is the decoder's dialect.
	Dialect() Dialect
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

// NewDecoder returns a fresh decoder for a dialect of Dialects.
// DialectAuto and unknown values are an error wrapping ErrUnknownDialect.
func NewDecoder(d Dialect) (Decoder, error) {
	mk, ok := decoders[d]
	if !ok {
		return nil, unknownDialect(string(d))
	}
	return mk(), nil
}

// eventError sorts what a payload's decode returned into ErrBadJSON
// (data that is not JSON at all) and ErrUnknownEvent (JSON of an
// unexpected shape).
//
// The decoders read with jsonx rather than encoding/json so the widget
// does not link encoding/json and its reflection (which
// TestTheDefaultWidgetLinksNoneOfTheHeavyPackagesItDropped in
// wasm/internal/build keeps out, for the widget's size; docs/notes/widget-size.md)
// and an event's fields cost no allocation (see BenchmarkPipeline): each
// payload's decode keeps its Reader on the stack. The structs' json tags
// are where each wire name is written: the readers and decode are
// generated from them (readers_gen.go, go generate), and the tests decode
// the same structs with encoding/json as the oracle.
func eventError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, jsonx.ErrType) {
		return errtext.Wrap(ErrUnknownEvent.Error()+": unexpected shape: "+errtext.Text(err), ErrUnknownEvent)
	}
	return errtext.Wrap(ErrBadJSON.Error()+": "+errtext.Text(err), ErrBadJSON)
}

// rawJSON is a JSON value kept as its text, as json.RawMessage keeps it
// (null is "null", a missing value "").
type rawJSON string

// readRaw keeps a value's text (the generated readers hand it over).
func (j *rawJSON) readRaw(text string) { *j = rawJSON(text) }

// apiError is the error object the OpenAI-style APIs and Gemini put in a
// stream: {"message","type","code","status"}; code may be a number.
//
//jsonx:reader
type apiError struct {
	_       incomparable
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Code    rawJSON `json:"code"`
	Status  string  `json:"status"`
}

func (e *apiError) provider(dialect Dialect) *ProviderError {
	typ := cmp.Or(e.Type, e.Status, rawString(e.Code), "error")
	msg := cmp.Or(e.Message, "the provider reported an error without a message")
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
//
//jsonx:reader
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
	ErrorText      rawJSON `json:"errorText"`
}

// Detect names the dialect an event belongs to, from its SSE type and the
// shape of its data, or returns "" when this event does not tell (the
// relay's "trickle.status", an unrecognised object).
func Detect(ev sse.Event) Dialect {
	switch {
	case anthropicTypes[ev.Type]:
		return DialectAnthropic
	case strings.HasPrefix(ev.Type, "response."):
		return DialectResponses
	case ev.Type == StatusEventType:
		return ""
	}
	data := stdlite.TrimSpace(ev.Data)
	if data == "[DONE]" {
		return DialectOpenAI
	}
	var p detectProbe
	if p.decode(data) != nil {
		return ""
	}
	switch {
	case anthropicTypes[p.Type]:
		return DialectAnthropic
	case strings.HasPrefix(p.Type, "response."):
		return DialectResponses
	case isAGUIType(p.Type):
		return DialectAGUI // {"type":"RUN_STARTED","threadId":…,"runId":…}
	case isAISDKPart(p.Type) || (p.Type == "error" && len(p.ErrorText) > 0):
		return DialectAISDK // {"type":"start"}, {"type":"text-delta","delta":…}, {"type":"error","errorText":…}
	case p.Type == "error" && len(p.Error) > 0 && p.Error[0] == '{':
		return DialectAnthropic // {"type":"error","error":{"type":"overloaded_error",…}}
	case p.Type == "error":
		return DialectResponses // {"type":"error","code":…,"message":…}
	case len(p.Choices) > 0 || p.Object == "chat.completion.chunk":
		return DialectOpenAI
	case len(p.Candidates) > 0 || len(p.UsageMetadata) > 0 || len(p.PromptFeedback) > 0:
		return DialectGemini
	case p.Done != nil || (len(p.Message) > 0 && len(p.CreatedAt) > 0):
		return DialectOllama
	case len(p.Delta) > 0 && p.Delta[0] == '"':
		return DialectPlain
	case len(p.Error) > 0 && p.Error[0] == '"':
		return DialectOllama // {"error":"model not found"}
	case len(p.Error) > 0 && strings.Contains(string(p.Error), `"status"`):
		return DialectGemini // {"error":{"code":503,"message":…,"status":"UNAVAILABLE"}}
	case len(p.Error) > 0:
		return DialectOpenAI
	}
	return ""
}
