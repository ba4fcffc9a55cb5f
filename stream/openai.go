package stream

import (
	"fmt"
	"strings"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/sse"
)

// openaiDecoder reads Chat Completions chunks ("chat.completion.chunk"):
// choices[0].delta.content, tool_calls keyed by index (id and name only on
// the first delta of each), finish_reason, the final usage chunk with empty
// choices, a mid-stream {"error":…}, and data: [DONE].
type openaiDecoder struct {
	tools openTools
	// text is the answer's text so far, which a search model's
	// url_citation annotations index by character.
	text strings.Builder
}

// openTool is a tool call whose arguments are still arriving.
type openTool struct {
	index    int
	id, name string
	args     strings.Builder
	done     bool
}

type openaiChunk struct {
	Object  string         `json:"object"`
	Choices []openaiChoice `json:"choices"`
	Usage   *openaiUsage   `json:"usage"`
	Error   *apiError      `json:"error"`
}

type openaiChoice struct {
	Index        int         `json:"index"`
	Delta        openaiDelta `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

type openaiDelta struct {
	Content *string `json:"content"`
	// reasoning_content (DeepSeek, vLLM) and reasoning (OpenRouter,
	// Ollama's compatibility layer) carry thinking in the same chunk.
	ReasoningContent string           `json:"reasoning_content"`
	Reasoning        string           `json:"reasoning"`
	Refusal          string           `json:"refusal"`
	ToolCalls        []openaiToolCall `json:"tool_calls"`
	// Annotations are a search model's citations (url_citation).
	Annotations []openaiAnnotation `json:"annotations"`
}

// openaiAnnotation is a Chat Completions annotation: a url_citation with
// the url, title and the span it supports (characters of the content).
type openaiAnnotation struct {
	Type        string             `json:"type"`
	URLCitation *openaiURLCitation `json:"url_citation"`
}

type openaiURLCitation struct {
	StartIndex int    `json:"start_index"`
	EndIndex   *int   `json:"end_index"`
	URL        string `json:"url"`
	Title      string `json:"title"`
}

var openaiAnnotationFields = []string{"type", "url_citation"}

func (a *openaiAnnotation) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiAnnotationFields) {
		case "type":
			r.Str(&a.Type)
		case "url_citation":
			readObject(r, &a.URLCitation)
		}
	})
}

var openaiURLCitationFields = []string{"start_index", "end_index", "url", "title"}

func (u *openaiURLCitation) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiURLCitationFields) {
		case "start_index":
			r.Int(&u.StartIndex)
		case "end_index":
			jsonx.Ptr(r, &u.EndIndex)
			if u.EndIndex != nil {
				r.Int(u.EndIndex)
			}
		case "url":
			r.Str(&u.URL)
		case "title":
			r.Str(&u.Title)
		}
	})
}

type openaiToolCall struct {
	Index    int            `json:"index"`
	ID       string         `json:"id"`
	Function openaiFunction `json:"function"`
}

type openaiFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type openaiUsage struct {
	PromptTokens            int                 `json:"prompt_tokens"`
	CompletionTokens        int                 `json:"completion_tokens"`
	TotalTokens             int                 `json:"total_tokens"`
	CompletionTokensDetails openaiTokensDetails `json:"completion_tokens_details"`
}

type openaiTokensDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

var openaiChunkFields = []string{"object", "choices", "usage", "error"}

func (c *openaiChunk) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiChunkFields) {
		case "object":
			r.Str(&c.Object)
		case "choices":
			jsonx.Slice(r, &c.Choices, func(v *openaiChoice) { v.read(r) })
		case "usage":
			readObject(r, &c.Usage)
		case "error":
			readObject(r, &c.Error)
		}
	})
}

var openaiChoiceFields = []string{"index", "delta", "finish_reason"}

func (ch *openaiChoice) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiChoiceFields) {
		case "index":
			r.Int(&ch.Index)
		case "delta":
			ch.Delta.read(r)
		case "finish_reason":
			r.Str(&ch.FinishReason)
		}
	})
}

var openaiDeltaFields = []string{"content", "reasoning_content", "reasoning", "refusal", "tool_calls", "annotations"}

func (d *openaiDelta) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiDeltaFields) {
		case "content":
			r.StrPtr(&d.Content)
		case "reasoning_content":
			r.Str(&d.ReasoningContent)
		case "reasoning":
			r.Str(&d.Reasoning)
		case "refusal":
			r.Str(&d.Refusal)
		case "tool_calls":
			jsonx.Slice(r, &d.ToolCalls, func(v *openaiToolCall) { v.read(r) })
		case "annotations":
			jsonx.Slice(r, &d.Annotations, func(v *openaiAnnotation) { v.read(r) })
		}
	})
}

var openaiToolCallFields = []string{"index", "id", "function"}

func (tc *openaiToolCall) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiToolCallFields) {
		case "index":
			r.Int(&tc.Index)
		case "id":
			r.Str(&tc.ID)
		case "function":
			tc.Function.read(r)
		}
	})
}

var openaiFunctionFields = []string{"name", "arguments"}

func (f *openaiFunction) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiFunctionFields) {
		case "name":
			r.Str(&f.Name)
		case "arguments":
			r.Str(&f.Arguments)
		}
	})
}

var openaiUsageFields = []string{"prompt_tokens", "completion_tokens", "total_tokens", "completion_tokens_details"}

func (u *openaiUsage) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, openaiUsageFields) {
		case "prompt_tokens":
			r.Int(&u.PromptTokens)
		case "completion_tokens":
			r.Int(&u.CompletionTokens)
		case "total_tokens":
			r.Int(&u.TotalTokens)
		case "completion_tokens_details":
			u.CompletionTokensDetails.read(r)
		}
	})
}

var openaiTokensDetailsFields = []string{"reasoning_tokens"}

func (t *openaiTokensDetails) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		if jsonx.Match(key, openaiTokensDetailsFields) == "reasoning_tokens" {
			r.Int(&t.ReasoningTokens)
		}
	})
}

func (d *openaiDecoder) Dialect() Dialect  { return DialectOpenAI }
func (d *openaiDecoder) EndMarker() string { return "data: [DONE]" }
func (d *openaiDecoder) Close(func(Event)) {}

func (d *openaiDecoder) Decode(ev sse.Event, emit func(Event)) error {
	if strings.TrimSpace(ev.Data) == "[DONE]" {
		d.finishTools(emit)
		emit(Event{Kind: KindEnd})
		return nil
	}
	var c openaiChunk
	r, err := jsonx.NewReader(ev.Data)
	if err == nil {
		c.read(&r)
		err = r.Err()
	}
	if err := eventError(err); err != nil {
		return err
	}
	if c.Error != nil {
		emit(Event{Kind: KindError, Err: c.Error.provider(DialectOpenAI)})
		return nil
	}
	if c.Choices == nil && c.Usage == nil && c.Object == "" {
		return fmt.Errorf("%w: neither choices, usage nor error", ErrUnknownEvent)
	}
	var skipErr error
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // n > 1: the answer is the first choice
		}
		dl := ch.Delta
		if t := dl.ReasoningContent + dl.Reasoning; t != "" {
			emit(Event{Kind: KindThinking, Text: t})
		}
		if dl.Content != nil && *dl.Content != "" {
			d.text.WriteString(*dl.Content)
			emit(Event{Kind: KindText, Text: *dl.Content})
		}
		if dl.Refusal != "" {
			d.text.WriteString(dl.Refusal)
			emit(Event{Kind: KindText, Text: dl.Refusal})
		}
		for _, an := range dl.Annotations {
			if u := an.URLCitation; an.Type == "url_citation" && u != nil && u.URL != "" {
				at := CiteHere
				if u.EndIndex != nil {
					at = byteOffset(d.text.String(), *u.EndIndex)
				}
				emit(Event{Kind: KindCitation, URL: u.URL, Title: u.Title, Index: at})
			}
		}
		for _, tc := range dl.ToolCalls {
			t := d.tools.get(tc.Index)
			if t == nil {
				if tc.ID == "" && tc.Function.Name == "" {
					skipErr = fmt.Errorf("%w: tool_calls index %d arrived without an id or name first", ErrUnknownToolCall, tc.Index)
					continue
				}
				t = d.tools.open(tc.Index)
			}
			if tc.ID != "" {
				t.id = tc.ID
			}
			if tc.Function.Name != "" {
				t.name = tc.Function.Name
			}
			t.args.WriteString(tc.Function.Arguments)
			emit(Event{Kind: KindToolCallDelta, Index: tc.Index, ID: tc.ID, Name: tc.Function.Name, Text: tc.Function.Arguments})
		}
		if ch.FinishReason != "" {
			// Chat Completions has no per-call end: the finish reason closes
			// every call of the choice.
			d.finishTools(emit)
			emit(Event{Kind: KindFinish, Reason: ch.FinishReason})
		}
	}
	if u := c.Usage; u != nil {
		emit(Event{Kind: KindUsage, Usage: Usage{
			InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
			TotalTokens: u.TotalTokens, ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens,
		}})
	}
	return skipErr
}

// openTools are the tool calls of an answer keyed by index, kept in the
// order they were opened.
type openTools struct {
	byIndex map[int]*openTool
	order   []*openTool
}

func (o *openTools) get(index int) *openTool { return o.byIndex[index] }

// open returns the call with this index, opening it if needed.
func (o *openTools) open(index int) *openTool {
	if t := o.byIndex[index]; t != nil {
		return t
	}
	if o.byIndex == nil {
		o.byIndex = make(map[int]*openTool)
	}
	t := &openTool{index: index}
	o.byIndex[index] = t
	o.order = append(o.order, t)
	return t
}

func (d *openaiDecoder) finishTools(emit func(Event)) {
	for _, t := range d.tools.order {
		if !t.done {
			t.done = true
			emit(Event{Kind: KindToolCallDone, Index: t.index, ID: t.id, Name: t.name, Text: t.args.String()})
		}
	}
}

// plainDecoder reads the simplest stream: {"delta":"…"} events and
// data: [DONE]. {"error":…} (a string or an object) is an error.
type plainDecoder struct{}

type plainChunk struct {
	Delta *string `json:"delta"`
	Error rawJSON `json:"error"`
}

var plainChunkFields = []string{"delta", "error"}

func (c *plainChunk) read(r *jsonx.Reader) {
	r.Object(func(key string) {
		switch jsonx.Match(key, plainChunkFields) {
		case "delta":
			r.StrPtr(&c.Delta)
		case "error":
			c.Error = rawJSON(r.Raw())
		}
	})
}

func (plainDecoder) Dialect() Dialect  { return DialectPlain }
func (plainDecoder) EndMarker() string { return "data: [DONE]" }
func (plainDecoder) Close(func(Event)) {}

func (plainDecoder) Decode(ev sse.Event, emit func(Event)) error {
	if strings.TrimSpace(ev.Data) == "[DONE]" {
		emit(Event{Kind: KindEnd})
		return nil
	}
	var c plainChunk
	if err := unmarshal(ev.Data, c.read); err != nil {
		return err
	}
	switch {
	case c.Error != "" && c.Error != "null":
		emit(Event{Kind: KindError, Err: bareError(DialectPlain, c.Error)})
	case c.Delta != nil:
		if *c.Delta != "" {
			emit(Event{Kind: KindText, Text: *c.Delta})
		}
	default:
		return fmt.Errorf("%w: no \"delta\" string", ErrUnknownEvent)
	}
	return nil
}

// bareError reads an "error" value that is either a message string or an
// error object.
func bareError(dialect Dialect, raw rawJSON) *ProviderError {
	var obj apiError
	if jsonx.Decode(string(raw), obj.read) == nil {
		return obj.provider(dialect)
	}
	return &ProviderError{Dialect: dialect, Type: "error", Message: rawString(raw)}
}
