package stream

import (
	"cmp"
	"fmt"

	"github.com/trickle-dev/trickle/sse"
)

// anthropicDecoder reads the Messages stream: message_start, then per
// content block content_block_start (text, thinking, tool_use),
// content_block_delta (text_delta, thinking_delta, signature_delta,
// input_json_delta) and content_block_stop, then message_delta (stop
// reason, usage) and message_stop; ping at any time; error events such as
// overloaded_error.
type anthropicDecoder struct {
	blocks map[int]*anthropicBlock
}

type anthropicBlock struct {
	typ   string
	tool  *openTool
	input string // the input object given in content_block_start
}

//jsonx:reader
type anthropicEvent struct {
	Type         string                 `json:"type"`
	Index        int                    `json:"index"`
	Message      *anthropicMessage      `json:"message"`
	ContentBlock *anthropicContentBlock `json:"content_block"`
	Delta        *anthropicDelta        `json:"delta"`
	Usage        *anthropicUsage        `json:"usage"`
	Error        *apiError              `json:"error"`
}

type anthropicMessage struct {
	Usage *anthropicUsage `json:"usage"`
}

type anthropicContentBlock struct {
	Type     string  `json:"type"`
	Text     string  `json:"text"`
	Thinking string  `json:"thinking"`
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Input    rawJSON `json:"input"`
}

// emitText emits a text or thinking block's text (a block that starts
// with some, or a whole message's block).
func (cb *anthropicContentBlock) emitText(emit func(Event)) {
	switch {
	case cb.Type == "text" && cb.Text != "":
		emit(Event{Kind: KindText, Text: cb.Text})
	case cb.Type == "thinking" && cb.Thinking != "":
		emit(Event{Kind: KindThinking, Text: cb.Thinking})
	}
}

type anthropicDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

type anthropicUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

func (d *anthropicDecoder) Dialect() Dialect  { return DialectAnthropic }
func (d *anthropicDecoder) EndMarker() string { return "message_stop" }

// trailer: after the relay's terminal trickle.status of an Anthropic
// stream comes Anthropic's own "error" event, for Anthropic's SDKs (which
// ignore the status), and after an error the relay's failure closes with
// message_stop; the end already said how the answer ended.
func (d *anthropicDecoder) trailer(ev sse.Event) bool {
	return ev.Type == "error" || ev.Type == "message_stop"
}
func (d *anthropicDecoder) Close(func(Event)) {}

func (d *anthropicDecoder) Decode(ev sse.Event, emit func(Event)) error {
	var e anthropicEvent
	if err := eventError(e.decode(ev.Data)); err != nil {
		return err
	}
	typ := cmp.Or(e.Type, ev.Type) // the data's type, else the SSE event's
	switch typ {
	case "ping":
		emit(Event{Kind: KindKeepAlive})
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil {
			emit(Event{Kind: KindUsage, Usage: Usage{InputTokens: e.Message.Usage.InputTokens, OutputTokens: e.Message.Usage.OutputTokens}})
		}
	case "content_block_start":
		cb := e.ContentBlock
		if cb == nil {
			return fmt.Errorf("%w: content_block_start without content_block", ErrUnknownEvent)
		}
		if d.blocks == nil {
			d.blocks = make(map[int]*anthropicBlock)
		}
		b := &anthropicBlock{typ: cb.Type}
		d.blocks[e.Index] = b
		cb.emitText(emit)
		switch cb.Type {
		case "tool_use", "server_tool_use", "mcp_tool_use":
			b.tool = &openTool{index: e.Index, id: cb.ID, name: cb.Name}
			if cb.Input != "" && cb.Input != "{}" && cb.Input != "null" {
				b.input = string(cb.Input)
			}
			emit(Event{Kind: KindToolCallDelta, Index: e.Index, ID: cb.ID, Name: cb.Name})
		}
	case "content_block_delta":
		dl := e.Delta
		if dl == nil {
			return fmt.Errorf("%w: content_block_delta without delta", ErrUnknownEvent)
		}
		switch dl.Type {
		case "text_delta":
			// Text is never dropped, even for a block that never started.
			emit(Event{Kind: KindText, Text: dl.Text})
		case "thinking_delta":
			emit(Event{Kind: KindThinking, Text: dl.Thinking})
		case "input_json_delta":
			b := d.blocks[e.Index]
			if b == nil || b.tool == nil {
				return fmt.Errorf("%w: input_json_delta for content block %d, which is not an open tool_use", ErrUnknownToolCall, e.Index)
			}
			b.tool.args.WriteString(dl.PartialJSON)
			emit(Event{Kind: KindToolCallDelta, Index: e.Index, Text: dl.PartialJSON})
		case "signature_delta", "citations_delta":
			// The thinking block's signature and citations matter when the
			// conversation is sent back, not for what is shown.
		default:
			return fmt.Errorf("%w: content_block_delta of type %q", ErrUnknownEvent, dl.Type)
		}
	case "content_block_stop":
		b := d.blocks[e.Index]
		if b == nil {
			return fmt.Errorf("%w: content_block_stop for content block %d, which never started", ErrUnknownEvent, e.Index)
		}
		if t := b.tool; t != nil && !t.done {
			t.done = true
			args := t.args.String()
			if args == "" {
				// No input_json_delta: the input is the one given at the
				// start, or the empty object.
				args = b.input
				if args == "" {
					args = "{}"
				}
			}
			emit(Event{Kind: KindToolCallDone, Index: t.index, ID: t.id, Name: t.name, Text: args})
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			emit(Event{Kind: KindFinish, Reason: e.Delta.StopReason})
		}
		if e.Usage != nil {
			emit(Event{Kind: KindUsage, Usage: Usage{InputTokens: e.Usage.InputTokens, OutputTokens: e.Usage.OutputTokens}})
		}
	case "message_stop":
		emit(Event{Kind: KindEnd})
	case "error":
		perr := &ProviderError{Dialect: DialectAnthropic, Type: "error", Message: "the provider reported an error"}
		if e.Error != nil {
			perr = e.Error.provider(DialectAnthropic)
		}
		emit(Event{Kind: KindError, Err: perr})
	default:
		return fmt.Errorf("%w: %q", ErrUnknownEvent, typ)
	}
	return nil
}
