package stream

import (
	"github.com/trickle-dev/trickle/internal/jsonx"
)

// A backend that ignores stream: true answers with one JSON completion:
// OpenAI's chat.completion, the Responses API's response object,
// Anthropic's message (Gemini's generateContent response and Ollama's
// done:true object have their streamed chunks' shape, and their own
// decoders read them). completion is the union of the three shapes the
// streaming decoders do not read; completionEvents turns one into the
// whole answer's events, end marker included.
//
//jsonx:reader
type completion struct {
	Object            string                  `json:"object"` // "chat.completion", "response"
	Type              string                  `json:"type"`   // "message" (Anthropic)
	Role              string                  `json:"role"`
	Status            string                  `json:"status"` // Responses: "completed", "incomplete", "failed"
	Choices           []completionChoice      `json:"choices"`
	Output            []completionItem        `json:"output"`
	Content           []anthropicContentBlock `json:"content"` // Anthropic's blocks, as content_block_start has them
	StopReason        string                  `json:"stop_reason"`
	Usage             *completionUsage        `json:"usage"`
	Error             rawJSON                 `json:"error"`
	IncompleteDetails *responsesIncomplete    `json:"incomplete_details"`
}

// completionChoice is an OpenAI chat.completion's choice: its message has
// a streamed chunk's delta's fields (tool calls without an index).
type completionChoice struct {
	Message      openaiDelta `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

// completionItem is a Responses output item: a message (content), a
// reasoning item (summary) or a function call.
type completionItem struct {
	Type      string           `json:"type"`
	Content   []completionPart `json:"content"`
	Summary   []completionPart `json:"summary"`
	CallID    string           `json:"call_id"`
	Name      string           `json:"name"`
	Arguments string           `json:"arguments"`
}

type completionPart struct {
	_       incomparable
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

// completionUsage holds OpenAI chat's names and the Responses and
// Anthropic ones.
type completionUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
}

// completionDialect says which dialect's completion data is ("" for none
// of the three shapes): read only as far as its kind.
func completionDialect(c *completion) Dialect {
	switch {
	case c.Object == "chat.completion" && len(c.Choices) > 0:
		return DialectOpenAI
	case c.Object == "response" && (c.Output != nil || c.Status != ""):
		return DialectResponses
	case c.Type == "message" && c.Role == "assistant":
		return DialectAnthropic
	}
	return ""
}

// completionEvents reads data as one JSON completion: its dialect and the
// whole answer's events, the end marker last; ok is false when data is
// none of the shapes.
func completionEvents(data string, emit func(Event)) (d Dialect, ok bool) {
	var c completion
	if c.decode(data) != nil {
		return "", false
	}
	d = completionDialect(&c)
	switch d {
	case DialectOpenAI:
		ch := c.Choices[0]
		m := ch.Message
		var text citable
		m.emitText(&text, emit)
		for i, tc := range m.ToolCalls {
			emit(Event{Kind: KindToolCallDelta, Index: i, ID: tc.ID, Name: tc.Function.Name, Text: tc.Function.Arguments})
			emit(Event{Kind: KindToolCallDone, Index: i, ID: tc.ID, Name: tc.Function.Name, Text: tc.Function.Arguments})
		}
		if u := c.Usage; u != nil {
			emit(Event{Kind: KindUsage, Usage: Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}})
		}
		if ch.FinishReason != "" {
			emit(Event{Kind: KindFinish, Reason: ch.FinishReason})
		}
	case DialectResponses:
		if c.Status == "failed" || (c.Error != "" && c.Error != "null") {
			emit(Event{Kind: KindError, Err: bareError(DialectResponses, c.Error)})
			return d, true
		}
		thought := false
		for i, it := range c.Output {
			switch it.Type {
			case "message":
				for _, p := range it.Content {
					if t := p.Text + p.Refusal; t != "" {
						emit(Event{Kind: KindText, Text: t})
					}
				}
			case "reasoning":
				for _, p := range it.Summary {
					if p.Text == "" {
						continue
					}
					if thought {
						emit(Event{Kind: KindThinking, Text: "\n\n"})
					}
					emit(Event{Kind: KindThinking, Text: p.Text})
					thought = true
				}
			case "function_call":
				emit(Event{Kind: KindToolCallDelta, Index: i, ID: it.CallID, Name: it.Name, Text: it.Arguments})
				emit(Event{Kind: KindToolCallDone, Index: i, ID: it.CallID, Name: it.Name, Text: it.Arguments})
			}
		}
		if u := c.Usage; u != nil {
			emit(Event{Kind: KindUsage, Usage: Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens}})
		}
		reason := c.Status
		if c.IncompleteDetails != nil && c.IncompleteDetails.Reason != "" {
			reason = c.IncompleteDetails.Reason
		}
		if reason != "" {
			emit(Event{Kind: KindFinish, Reason: reason})
		}
	case DialectAnthropic:
		for i, b := range c.Content {
			b.emitText(emit)
			if b.Type == "tool_use" {
				args := string(jsonx.AppendCompact(nil, string(b.Input)))
				if b.Input == "" || b.Input == "null" {
					args = "{}"
				}
				emit(Event{Kind: KindToolCallDelta, Index: i, ID: b.ID, Name: b.Name, Text: args})
				emit(Event{Kind: KindToolCallDone, Index: i, ID: b.ID, Name: b.Name, Text: args})
			}
		}
		if u := c.Usage; u != nil {
			emit(Event{Kind: KindUsage, Usage: Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}})
		}
		if c.StopReason != "" {
			emit(Event{Kind: KindFinish, Reason: c.StopReason})
		}
	default:
		return "", false
	}
	emit(Event{Kind: KindEnd})
	return d, true
}
