package stream

import (
	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/sse"
)

// ollamaDecoder reads Ollama's /api/chat stream: one JSON object per line
// with message.content, message.thinking and message.tool_calls (whole
// calls, arguments as an object), and a last object with done:true,
// done_reason and the eval counts. /api/generate's "response" field is
// read as text too.
type ollamaDecoder struct {
	calls int
}

//jsonx:reader
type ollamaChunk struct {
	Message         *ollamaMessage `json:"message"`
	Response        *string        `json:"response"`
	Thinking        string         `json:"thinking"`
	Done            *bool          `json:"done"`
	DoneReason      string         `json:"done_reason"`
	PromptEvalCount int            `json:"prompt_eval_count"`
	EvalCount       int            `json:"eval_count"`
	Error           rawJSON        `json:"error"`
}

type ollamaMessage struct {
	Content   string           `json:"content"`
	Thinking  string           `json:"thinking"`
	ToolCalls []ollamaToolCall `json:"tool_calls"`
}

type ollamaToolCall struct {
	_        incomparable
	ID       string         `json:"id"`
	Function ollamaFunction `json:"function"`
}

type ollamaFunction struct {
	_         incomparable
	Index     *int    `json:"index"`
	Name      string  `json:"name"`
	Arguments rawJSON `json:"arguments"`
}

func (d *ollamaDecoder) Dialect() Dialect  { return DialectOllama }
func (d *ollamaDecoder) EndMarker() string { return `"done":true` }
func (d *ollamaDecoder) Close(func(Event)) {}

func (d *ollamaDecoder) Decode(ev sse.Event, emit func(Event)) error {
	var c ollamaChunk
	if err := eventError(c.decode(ev.Data)); err != nil {
		return err
	}
	if c.Error != "" && c.Error != "null" {
		emit(Event{Kind: KindError, Err: bareError(DialectOllama, c.Error)})
		return nil
	}
	if c.Message == nil && c.Response == nil && c.Done == nil {
		return errtext.Wrap(ErrUnknownEvent.Error()+": neither message, response nor done", ErrUnknownEvent)
	}
	thinking, text := c.Thinking, ""
	if c.Response != nil {
		text = *c.Response
	}
	if m := c.Message; m != nil {
		thinking += m.Thinking
		text += m.Content
	}
	if thinking != "" {
		emit(Event{Kind: KindThinking, Text: thinking})
	}
	if text != "" {
		emit(Event{Kind: KindText, Text: text})
	}
	if m := c.Message; m != nil {
		for _, tc := range m.ToolCalls {
			i := d.calls
			if tc.Function.Index != nil {
				i = *tc.Function.Index
			}
			d.calls++
			args := rawArgs(tc.Function.Arguments)
			emit(Event{Kind: KindToolCallDelta, Index: i, ID: tc.ID, Name: tc.Function.Name, Text: args})
			emit(Event{Kind: KindToolCallDone, Index: i, ID: tc.ID, Name: tc.Function.Name, Text: args})
		}
	}
	if c.Done != nil && *c.Done {
		if c.DoneReason != "" {
			emit(Event{Kind: KindFinish, Reason: c.DoneReason})
		}
		if c.PromptEvalCount != 0 || c.EvalCount != 0 {
			emit(Event{Kind: KindUsage, Usage: Usage{InputTokens: c.PromptEvalCount, OutputTokens: c.EvalCount}})
		}
		emit(Event{Kind: KindEnd})
	}
	return nil
}
