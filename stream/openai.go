package stream

import (
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/stdlite"
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
	text citable
}

// openTool is a tool call whose arguments are still arriving.
type openTool struct {
	index    int
	id, name string
	args     strings.Builder
	done     bool
}

//jsonx:reader
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
	_           incomparable
	Type        string             `json:"type"`
	URLCitation *openaiURLCitation `json:"url_citation"`
}

type openaiURLCitation struct {
	_          incomparable
	StartIndex int    `json:"start_index"`
	EndIndex   *int   `json:"end_index"`
	URL        string `json:"url"`
	Title      string `json:"title"`
}

// emitText emits a delta's (or a whole message's) thinking, then its
// text or refusal, which it adds to text (the answer's text so far), then
// its url_citation annotations, placed in that text.
func (dl *openaiDelta) emitText(text *citable, emit func(Event)) {
	if t := dl.ReasoningContent + dl.Reasoning; t != "" {
		emit(Event{Kind: KindThinking, Text: t})
	}
	if dl.Content != nil && *dl.Content != "" {
		text.add(*dl.Content)
		emit(Event{Kind: KindText, Text: *dl.Content})
	}
	if dl.Refusal != "" {
		text.add(dl.Refusal)
		emit(Event{Kind: KindText, Text: dl.Refusal})
	}
	for _, an := range dl.Annotations {
		if u := an.URLCitation; an.Type == "url_citation" && u != nil && u.URL != "" {
			at := CiteHere
			if u.EndIndex != nil {
				at = text.at(*u.EndIndex, byteOffset)
			}
			emit(Event{Kind: KindCitation, URL: u.URL, Title: u.Title, Index: at})
		}
	}
}

type openaiToolCall struct {
	_        incomparable
	Index    int            `json:"index"`
	ID       string         `json:"id"`
	Function openaiFunction `json:"function"`
}

type openaiFunction struct {
	_         incomparable
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

func (d *openaiDecoder) Dialect() Dialect  { return DialectOpenAI }
func (d *openaiDecoder) EndMarker() string { return "data: [DONE]" }
func (d *openaiDecoder) Close(func(Event)) {}

func (d *openaiDecoder) Decode(ev sse.Event, emit func(Event)) error {
	if stdlite.TrimSpace(ev.Data) == "[DONE]" {
		d.finishTools(emit)
		emit(Event{Kind: KindEnd})
		return nil
	}
	var c openaiChunk
	if err := eventError(c.decode(ev.Data)); err != nil {
		return err
	}
	if c.Error != nil {
		emit(Event{Kind: KindError, Err: c.Error.provider(DialectOpenAI)})
		return nil
	}
	if c.Choices == nil && c.Usage == nil && c.Object == "" {
		return errtext.Wrap(ErrUnknownEvent.Error()+": neither choices, usage nor error", ErrUnknownEvent)
	}
	var skipErr error
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // n > 1: the answer is the first choice
		}
		dl := ch.Delta
		dl.emitText(&d.text, emit)
		for _, tc := range dl.ToolCalls {
			t := d.tools.get(tc.Index)
			if t == nil {
				if tc.ID == "" && tc.Function.Name == "" {
					skipErr = errtext.Wrap(ErrUnknownToolCall.Error()+": tool_calls index "+strconv.Itoa(tc.Index)+" arrived without an id or name first", ErrUnknownToolCall)
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

//jsonx:reader
type plainChunk struct {
	Delta *string `json:"delta"`
	Error rawJSON `json:"error"`
}

func (plainDecoder) Dialect() Dialect  { return DialectPlain }
func (plainDecoder) EndMarker() string { return "data: [DONE]" }
func (plainDecoder) Close(func(Event)) {}

func (plainDecoder) Decode(ev sse.Event, emit func(Event)) error {
	if stdlite.TrimSpace(ev.Data) == "[DONE]" {
		emit(Event{Kind: KindEnd})
		return nil
	}
	var c plainChunk
	if err := eventError(c.decode(ev.Data)); err != nil {
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
		return errtext.Wrap(ErrUnknownEvent.Error()+": no \"delta\" string", ErrUnknownEvent)
	}
	return nil
}

// bareError reads an "error" value that is either a message string or an
// error object.
func bareError(dialect Dialect, raw rawJSON) *ProviderError {
	var obj apiError
	if obj.decode(string(raw)) == nil {
		return obj.provider(dialect)
	}
	return &ProviderError{Dialect: dialect, Type: "error", Message: rawString(raw)}
}
