package stream

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
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
	// cites are the text block's citations, given before its text and
	// placed at its end.
	cites []Event
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
	_        incomparable
	Type     string  `json:"type"`
	Text     string  `json:"text"`
	Thinking string  `json:"thinking"`
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Input    rawJSON `json:"input"`
	// Content is a web_search_tool_result's results (an array), or its
	// error (an object).
	Content rawJSON `json:"content"`
}

// anthropicSearchResult is one result of the web search tool (read from
// the raw content by searchResults).
//
//jsonx:reader
type anthropicSearchResult struct {
	_     incomparable
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

// anthropicCitation is a citations_delta's citation: a web search result
// (web_search_result_location: url, title), a search result given to the
// model (search_result_location: source, title), or a passage of a
// document in the request (char_location, page_location,
// content_block_location: document_index, document_title), each with the
// cited_text.
type anthropicCitation struct {
	_             incomparable
	Type          string `json:"type"`
	CitedText     string `json:"cited_text"`
	URL           string `json:"url"`
	Title         string `json:"title"`
	Source        string `json:"source"`
	DocumentIndex *int   `json:"document_index"`
	DocumentTitle string `json:"document_title"`
}

// event is the citation as a KindCitation at the end of its block, or
// false when it names no source.
func (c *anthropicCitation) event() (Event, bool) {
	ev := Event{Kind: KindCitation, Index: CiteHere, Text: c.CitedText, Title: c.Title}
	switch {
	case c.URL != "":
		ev.URL = c.URL
	case c.Source != "":
		ev.URL = c.Source
	case c.DocumentIndex != nil:
		ev.ID = fmt.Sprintf("document-%d", *c.DocumentIndex)
		ev.Title = c.DocumentTitle
	default:
		return Event{}, false
	}
	return ev, true
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
	_           incomparable
	Type        string             `json:"type"`
	Text        string             `json:"text"`
	Thinking    string             `json:"thinking"`
	PartialJSON string             `json:"partial_json"`
	StopReason  string             `json:"stop_reason"`
	Citation    *anthropicCitation `json:"citation"`
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
			return errtext.Wrap(ErrUnknownEvent.Error()+": content_block_start without content_block", ErrUnknownEvent)
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
		case "web_search_tool_result":
			// The pages the search found are the answer's sources, in
			// the order found, whether or not a passage cites them.
			for _, res := range searchResults(cb.Content) {
				emit(Event{Kind: KindSource, URL: res.URL, Title: res.Title})
			}
		}
	case "content_block_delta":
		dl := e.Delta
		if dl == nil {
			return errtext.Wrap(ErrUnknownEvent.Error()+": content_block_delta without delta", ErrUnknownEvent)
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
				return errtext.Wrap(ErrUnknownToolCall.Error()+": input_json_delta for content block "+strconv.Itoa(e.Index)+", which is not an open tool_use", ErrUnknownToolCall)
			}
			b.tool.args.WriteString(dl.PartialJSON)
			emit(Event{Kind: KindToolCallDelta, Index: e.Index, Text: dl.PartialJSON})
		case "citations_delta":
			if dl.Citation == nil {
				return errtext.Wrap(ErrUnknownEvent.Error()+": citations_delta without a citation", ErrUnknownEvent)
			}
			ev, ok := dl.Citation.event()
			switch b := d.blocks[e.Index]; {
			case !ok:
			case b == nil:
				emit(ev) // a block that never started has no end to wait for
			case len(b.cites) < maxCitations:
				b.cites = append(b.cites, ev)
			}
		case "signature_delta":
			// The thinking block's signature matters when the
			// conversation is sent back, not for what is shown.
		default:
			return errtext.Wrap(ErrUnknownEvent.Error()+": content_block_delta of type "+strconv.Quote(dl.Type), ErrUnknownEvent)
		}
	case "content_block_stop":
		b := d.blocks[e.Index]
		if b == nil {
			return errtext.Wrap(ErrUnknownEvent.Error()+": content_block_stop for content block "+strconv.Itoa(e.Index)+", which never started", ErrUnknownEvent)
		}
		for _, c := range b.cites {
			emit(c)
		}
		b.cites = nil
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
		return errtext.Wrap(ErrUnknownEvent.Error()+": "+strconv.Quote(typ), ErrUnknownEvent)
	}
	return nil
}

// searchResults reads a web_search_tool_result's content: its results, or
// none when it is the tool's error.
func searchResults(content rawJSON) []anthropicSearchResult {
	if len(content) == 0 || content[0] != '[' {
		return nil
	}
	var out []anthropicSearchResult
	r, err := jsonx.NewReader(string(content))
	if err != nil {
		return nil
	}
	jsonx.Slice(&r, &out, func(v *anthropicSearchResult) { v.read(&r) })
	if r.Err() != nil {
		return nil
	}
	kept := out[:0]
	for _, res := range out {
		if res.Type == "web_search_result" && res.URL != "" {
			kept = append(kept, res)
		}
	}
	return kept
}
