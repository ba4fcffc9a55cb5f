package stream

import (
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/sse"
)

// DialectAISDK is the AI SDK's UI message stream, what its useChat backends
// send (streamText(…).toUIMessageStreamResponse(): SSE with the header
// x-vercel-ai-ui-message-stream: v1): one JSON part per event — text-*,
// reasoning-* (the thinking), tool-input-* and tool-output-* (tool calls
// and their results), error, abort, finish — and data: [DONE].
const DialectAISDK Dialect = "ai-sdk"

// UIMessageStreamHeader is the response header the AI SDK sets on a UI
// message stream ("v1").
const UIMessageStreamHeader = "x-vercel-ai-ui-message-stream"

// aisdkDecoder reads DialectAISDK. Tool calls are keyed by toolCallId; each
// gets the next index in the order they open.
type aisdkDecoder struct {
	tools map[string]int
	// textLen is the bytes of answer text so far, texts the text blocks
	// by id: where each starts in the answer and its text, which ai@7's
	// citations index in UTF-16 code units (JavaScript's).
	textLen int
	texts   map[string]*responsesPart
}

//jsonx:reader
type aisdkPart struct {
	Type           string          `json:"type"`
	ID             string          `json:"id"`
	Delta          string          `json:"delta"`
	ToolCallID     string          `json:"toolCallId"`
	ToolName       string          `json:"toolName"`
	InputTextDelta string          `json:"inputTextDelta"`
	Input          rawJSON         `json:"input"`
	Output         rawJSON         `json:"output"`
	ErrorText      string          `json:"errorText"`
	FinishReason   string          `json:"finishReason"`
	SourceID       string          `json:"sourceId"`
	URL            string          `json:"url"`
	Title          string          `json:"title"`
	MediaType      string          `json:"mediaType"`
	Filename       string          `json:"filename"`
	ApprovalID     string          `json:"approvalId"`
	Reason         string          `json:"reason"`
	Citations      []aisdkCitation `json:"citations"`
}

// aisdkCitation is one of ai@7's citations on text-end: the source a span
// of the text cites, the span (startIndex, endIndex: UTF-16 code units of
// the text block) and the cited text.
type aisdkCitation struct {
	_          incomparable
	Source     aisdkSource `json:"source"`
	StartIndex int         `json:"startIndex"`
	EndIndex   *int        `json:"endIndex"`
	CitedText  string      `json:"citedText"`
}

// aisdkSource is a citation's source: a URL or a document.
type aisdkSource struct {
	_         incomparable
	ID        string `json:"id"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	MediaType string `json:"mediaType"`
	Filename  string `json:"filename"`
}

// aisdkQuiet are the parts that carry nothing the answer shows: a message's
// and a step's bounds, the bounds of a text or reasoning block (their
// deltas carry the text), metadata, and the later majors' parts the
// answer has no place for yet (an approval's response, which the reader
// gave; a reasoning file; custom and steering parts).
var aisdkQuiet = map[string]bool{
	"start": true, "start-step": true, "finish-step": true, "reset-step": true,
	"text-start": true, "text-end": true, "reasoning-start": true, "reasoning-end": true,
	"message-metadata": true, "tool-approval-response": true, "reasoning-file": true,
	"custom": true, "steering-message": true,
}

// isAISDKPart reports whether a part type is one of the UI message stream's
// (for Detect): the ones the decoder reads, and the custom data-* parts.
func isAISDKPart(typ string) bool {
	switch typ {
	case "text-delta", "reasoning-delta", "tool-input-start", "tool-input-delta", "tool-input-available",
		"tool-input-error", "tool-output-available", "tool-output-error", "tool-output-denied", "tool-approval-request",
		"source-url", "source-document", "file", "abort", "finish":
		return true
	}
	return aisdkQuiet[typ] || strings.HasPrefix(typ, "data-")
}

func (d *aisdkDecoder) Dialect() Dialect  { return DialectAISDK }
func (d *aisdkDecoder) EndMarker() string { return "finish" }
func (d *aisdkDecoder) Close(func(Event)) {}

// text returns the text block id, opening it where the answer's text is
// now.
func (d *aisdkDecoder) text(id string) *responsesPart {
	if t := d.texts[id]; t != nil {
		return t
	}
	if d.texts == nil {
		d.texts = make(map[string]*responsesPart)
	}
	t := &responsesPart{start: d.textLen}
	d.texts[id] = t
	return t
}

// utf16Offset is the byte offset in s after n UTF-16 code units, or len(s)
// when s is shorter; an offset inside a surrogate pair counts the whole
// character.
func utf16Offset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i, r := range s {
		if n <= 0 {
			return i
		}
		if r >= 0x10000 {
			n -= 2
		} else {
			n--
		}
	}
	return len(s)
}

// trailer: after the end the SDK still sends [DONE], and after an error
// or an abort its finish-step and finish; none of them is news.
func (d *aisdkDecoder) trailer(ev sse.Event) bool {
	data := stdlite.TrimSpace(ev.Data)
	if data == "[DONE]" {
		return true
	}
	var c aisdkPart
	return c.decode(data) == nil && (c.Type == "finish" || c.Type == "finish-step")
}

func (d *aisdkDecoder) Decode(ev sse.Event, emit func(Event)) error {
	if stdlite.TrimSpace(ev.Data) == "[DONE]" {
		emit(Event{Kind: KindEnd}) // a stream without its finish part still ends here
		return nil
	}
	var c aisdkPart
	if err := eventError(c.decode(ev.Data)); err != nil {
		return err
	}
	switch {
	case c.Type == "text-end":
		// ai@7 puts the text's citations here: their sources are the
		// answer's (each once), each marked where its span ends.
		t := d.texts[c.ID]
		for _, ct := range c.Citations {
			s := ct.Source
			at := CiteHere
			if t != nil && ct.EndIndex != nil {
				if o := t.text.at(*ct.EndIndex, utf16Offset); o != CiteHere {
					at = t.start + o
				}
			}
			emit(Event{Kind: KindCitation, ID: s.ID, URL: s.URL, Title: s.Title, MediaType: s.MediaType, Name: s.Filename, Index: at, Text: ct.CitedText})
		}
	case aisdkQuiet[c.Type] || strings.HasPrefix(c.Type, "data-"):
	case c.Type == "text-delta":
		d.text(c.ID).text.add(c.Delta)
		d.textLen += len(c.Delta)
		emit(Event{Kind: KindText, Text: c.Delta})
	case c.Type == "reasoning-delta":
		emit(Event{Kind: KindThinking, Text: c.Delta})
	case c.Type == "tool-input-start":
		emit(Event{Kind: KindToolCallDelta, Index: d.open(c.ToolCallID), ID: c.ToolCallID, Name: c.ToolName})
	case c.Type == "tool-input-delta":
		i, ok := d.tools[c.ToolCallID]
		if !ok {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": tool-input-delta for "+strconv.Quote(c.ToolCallID)+", which no tool-input-start opened", ErrUnknownToolCall)
		}
		emit(Event{Kind: KindToolCallDelta, Index: i, Text: c.InputTextDelta})
	case c.Type == "tool-input-available" || c.Type == "tool-input-error":
		// A call whose input was not streamed opens here, whole.
		i := d.open(c.ToolCallID)
		emit(Event{Kind: KindToolCallDone, Index: i, ID: c.ToolCallID, Name: c.ToolName, Text: rawArgs(c.Input)})
		if c.Type == "tool-input-error" {
			emit(Event{Kind: KindToolResult, Index: i, Reason: ToolResultError, Text: c.ErrorText})
		}
	case c.Type == "tool-output-available" || c.Type == "tool-output-error":
		i, ok := d.tools[c.ToolCallID]
		if !ok {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": "+c.Type+" for "+strconv.Quote(c.ToolCallID)+", a call that never started", ErrUnknownToolCall)
		}
		if c.Type == "tool-output-error" {
			emit(Event{Kind: KindToolResult, Index: i, Reason: ToolResultError, Text: c.ErrorText})
		} else {
			emit(Event{Kind: KindToolResult, Index: i, Text: string(c.Output)})
		}
	case c.Type == "tool-output-denied":
		i, ok := d.tools[c.ToolCallID]
		if !ok {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": "+c.Type+" for "+strconv.Quote(c.ToolCallID)+", a call that never started", ErrUnknownToolCall)
		}
		emit(Event{Kind: KindToolResult, Index: i, Reason: ToolResultDenied})
	case c.Type == "tool-approval-request":
		emit(Event{Kind: KindApproval, ID: c.ApprovalID, CallID: c.ToolCallID, Reason: ApprovalToolCall, Text: c.Reason})
	case c.Type == "source-url":
		emit(Event{Kind: KindSource, ID: c.SourceID, URL: c.URL, Title: c.Title})
	case c.Type == "source-document":
		emit(Event{Kind: KindSource, ID: c.SourceID, Title: c.Title, MediaType: c.MediaType, Name: c.Filename})
	case c.Type == "file":
		emit(Event{Kind: KindFile, URL: c.URL, MediaType: c.MediaType})
	case c.Type == "error":
		msg := c.ErrorText
		if msg == "" {
			msg = "the server reported an error without a message"
		}
		emit(Event{Kind: KindError, Err: &ProviderError{Dialect: DialectAISDK, Type: "error", Message: msg}})
	case c.Type == "abort":
		emit(Event{Kind: KindAbort})
	case c.Type == "finish":
		if c.FinishReason != "" {
			emit(Event{Kind: KindFinish, Reason: c.FinishReason})
		}
		emit(Event{Kind: KindEnd})
	default:
		return errtext.Wrap(ErrUnknownEvent.Error()+": a UI message stream part of type "+strconv.Quote(c.Type), ErrUnknownEvent)
	}
	return nil
}

// open returns the index of the tool call id, giving a new one the next.
func (d *aisdkDecoder) open(id string) int {
	if i, ok := d.tools[id]; ok {
		return i
	}
	if d.tools == nil {
		d.tools = make(map[string]int)
	}
	i := len(d.tools)
	d.tools[id] = i
	return i
}
