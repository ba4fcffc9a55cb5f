package element

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// AppendMessage appends the answer as an assistant message, the JSON
// object the element's message property and trickle-end's detail carry:
// role, content (the markdown), status, incomplete (stopped, cut off or
// failed with text shown: the next turn must not take it for a finished
// answer), finish_reason and usage (null when the stream gave none),
// tool_calls (id, name, arguments parsed — null until complete or when
// not JSON — and the raw text) and thinking; and, when the answer has
// them, approvals (id, tool_call_id, reason, message: what the backend
// waits on the reader for), sources (id, url, title, media_type,
// filename: those given) and
// citations (source: its number, 1 for the first; end: the byte offset in
// content where the cited passage ends; quote).
func AppendMessage(b []byte, a *stream.Answer) []byte { return appendMessage(b, a, true) }

// AppendEndMessage appends the answer as AppendMessage does, without its
// content unless content is true. An answer's end sends the page its
// message (Ending.Message, trickle-end's detail); the page already has
// the content, the sum of the text updates (el.text), and puts it back
// (answer.js): a long answer's end then does not carry the whole text
// twice more, to be written on Go's thread and parsed on the page's.
// content must be true when the text updates' sum differs from the
// text (one of them was not valid UTF-8 by itself: Element.textSplit).
func AppendEndMessage(b []byte, a *stream.Answer, content bool) []byte {
	return appendMessage(b, a, content)
}

func appendMessage(b []byte, a *stream.Answer, content bool) []byte {
	st := a.Status()
	b = append(b, `{"role":"assistant"`...)
	if content {
		b = append(b, `,"content":`...)
		b = jsonx.AppendString(b, a.Text())
	}
	b = append(b, `,"status":`...)
	b = jsonx.AppendString(b, st.String())
	b = append(b, `,"incomplete":`...)
	b = strconv.AppendBool(b, st != stream.Complete && st.Terminal() && a.Text() != "")
	b = append(b, `,"finish_reason":`...)
	b = appendStringOrNull(b, a.FinishReason())
	b = append(b, `,"usage":`...)
	b = appendUsage(b, a.Usage())
	b = append(b, `,"tool_calls":[`...)
	for i, c := range a.ToolCalls() {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendToolCall(b, c)
	}
	b = append(b, `],"thinking":`...)
	b = jsonx.AppendString(b, a.Thinking())
	if srcs := a.Sources(); len(srcs) > 0 {
		b = append(b, `,"sources":[`...)
		for i, s := range srcs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSource(b, s)
		}
		b = append(b, ']')
	}
	if aps := a.Approvals(); len(aps) > 0 {
		// What the backend waits on the reader for (the AI SDK's
		// tool-approval-request, an AG-UI interrupt): the chat asks, and
		// sends the answer with the next request.
		b = append(b, `,"approvals":[`...)
		for i, ap := range aps {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = jsonx.AppendString(b, ap.ID)
			b = append(b, `,"tool_call_id":`...)
			b = appendStringOrNull(b, ap.ToolCallID)
			b = append(b, `,"reason":`...)
			b = appendStringOrNull(b, ap.Reason)
			b = append(b, `,"message":`...)
			b = appendStringOrNull(b, ap.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if cites := a.Citations(); len(cites) > 0 {
		b = append(b, `,"citations":[`...)
		for i, c := range cites {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"source":`...)
			b = strconv.AppendInt(b, int64(c.Source), 10)
			b = append(b, `,"end":`...)
			b = strconv.AppendInt(b, int64(c.End), 10)
			if c.Quote != "" {
				b = append(b, `,"quote":`...)
				b = jsonx.AppendString(b, c.Quote)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendSource appends a source's object, with the fields it has.
func appendSource(b []byte, s stream.Source) []byte {
	b = append(b, '{')
	first := true
	for _, f := range [...]struct{ key, v string }{{"id", s.ID}, {"url", s.URL}, {"title", s.Title}, {"media_type", s.MediaType}, {"filename", s.Filename}} {
		if f.v == "" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = jsonx.AppendString(b, f.key)
		b = append(b, ':')
		b = jsonx.AppendString(b, f.v)
	}
	return append(b, '}')
}

// appendUsage appends the message's usage object, or null.
func appendUsage(b []byte, u *stream.Usage) []byte {
	if u == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
	b = append(b, `,"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.ReasoningTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
	if u.Estimated {
		b = append(b, `,"estimated":true`...)
	}
	return append(b, '}')
}

// AppendToolCall appends one tool call as the message has it, and as
// trickle-tool-call's detail: id, name, arguments (the parsed object, or
// null while incomplete or when the text is not JSON), raw (the arguments
// text so far) and complete.
func AppendToolCall(b []byte, c stream.ToolCall) []byte {
	b = append(b, `{"id":`...)
	b = jsonx.AppendString(b, c.ID)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, c.Name)
	b = append(b, `,"arguments":`...)
	if c.Complete && validJSON(c.Arguments) {
		b = append(b, c.Arguments...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"raw":`...)
	b = jsonx.AppendString(b, c.Partial)
	b = append(b, `,"complete":`...)
	b = strconv.AppendBool(b, c.Complete)
	return append(b, '}')
}

// ToolCallEvent is trickle-tool-call's: a call whose arguments are
// complete.
func ToolCallEvent(c stream.ToolCall) protocol.DOMEvent {
	return protocol.DOMEvent{Name: "trickle-tool-call", Detail: string(AppendToolCall(nil, c))}
}

func validJSON(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	return jsonx.Decode(s, func(r *jsonx.Reader) { r.Skip() }) == nil
}

func appendStringOrNull(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonx.AppendString(b, s)
}

// Stored is an answer the page shows again (el.message, el.markdown): a
// message as AppendMessage writes it, read back.
type Stored struct {
	Content, Thinking, Status, FinishReason string
	Usage                                   *stream.Usage
	ToolCalls                               []StoredCall
	Sources                                 []stream.Source
	Citations                               []stream.Citation
}

// StoredCall is a stored tool call: its raw arguments text (or, without
// one, the arguments' JSON).
type StoredCall struct {
	_             incomparable
	ID, Name, Raw string
}

// ErrStoredMessage means el.message was given something that is not a
// message.
var ErrStoredMessage = errors.New(`trickle: a message to show must be an object with a "content" string`)

// ParseStored reads a stored message.
func ParseStored(s string) (Stored, error) {
	var m Stored
	hasContent := false
	err := jsonx.Decode(s, func(r *jsonx.Reader) {
		r.Object(func(key string) {
			switch key {
			case "content":
				hasContent = r.Kind() == jsonx.String
				r.Str(&m.Content)
			case "thinking":
				r.Str(&m.Thinking)
			case "status":
				r.Str(&m.Status)
			case "finish_reason":
				r.Str(&m.FinishReason)
			case "usage":
				jsonx.Ptr(r, &m.Usage)
				if m.Usage != nil {
					r.Object(func(key string) {
						switch key {
						case "input_tokens":
							r.Int(&m.Usage.InputTokens)
						case "output_tokens":
							r.Int(&m.Usage.OutputTokens)
						case "reasoning_tokens":
							r.Int(&m.Usage.ReasoningTokens)
						case "total_tokens":
							r.Int(&m.Usage.TotalTokens)
						case "estimated":
							r.Bool(&m.Usage.Estimated)
						default:
							r.Skip()
						}
					})
				}
			case "tool_calls":
				r.Array(func(int) {
					var c StoredCall
					args := ""
					r.Object(func(key string) {
						switch key {
						case "id":
							r.Str(&c.ID)
						case "name":
							r.Str(&c.Name)
						case "raw":
							r.Str(&c.Raw)
						case "arguments":
							args = r.Raw()
						default:
							r.Skip()
						}
					})
					if c.Raw == "" && args != "null" {
						c.Raw = args
					}
					m.ToolCalls = append(m.ToolCalls, c)
				})
			case "sources":
				r.Array(func(int) {
					var src stream.Source
					r.Object(func(key string) {
						switch key {
						case "id":
							r.Str(&src.ID)
						case "url":
							r.Str(&src.URL)
						case "title":
							r.Str(&src.Title)
						case "media_type":
							r.Str(&src.MediaType)
						case "filename":
							r.Str(&src.Filename)
						default:
							r.Skip()
						}
					})
					m.Sources = append(m.Sources, src)
				})
			case "citations":
				r.Array(func(int) {
					var c stream.Citation
					r.Object(func(key string) {
						switch key {
						case "source":
							r.Int(&c.Source)
						case "end":
							r.Int(&c.End)
						case "quote":
							r.Str(&c.Quote)
						default:
							r.Skip()
						}
					})
					m.Citations = append(m.Citations, c)
				})
			default:
				r.Skip()
			}
		})
	})
	if err != nil || !hasContent {
		return Stored{}, ErrStoredMessage
	}
	return m, nil
}

// events are the stored answer as the stream events that would have made
// it, and the error that ends it as its status says.
func (m Stored) events() ([]stream.Event, error) {
	var evs []stream.Event
	if m.Thinking != "" {
		evs = append(evs, stream.Event{Kind: stream.KindThinking, Text: m.Thinking})
	}
	if m.Content != "" {
		evs = append(evs, stream.Event{Kind: stream.KindText, Text: m.Content})
	}
	for i, c := range m.ToolCalls {
		evs = append(evs,
			stream.Event{Kind: stream.KindToolCallDelta, Index: i, ID: c.ID, Name: c.Name, Text: c.Raw},
			stream.Event{Kind: stream.KindToolCallDone, Index: i, Text: c.Raw})
	}
	for _, src := range m.Sources {
		evs = append(evs, stream.Event{Kind: stream.KindSource, ID: src.ID, URL: src.URL, Title: src.Title, MediaType: src.MediaType, Name: src.Filename})
	}
	for _, c := range m.Citations {
		// A citation names its source by number; one that names none of
		// the stored sources is no citation.
		if c.Source < 1 || c.Source > len(m.Sources) {
			continue
		}
		src := m.Sources[c.Source-1]
		evs = append(evs, stream.Event{Kind: stream.KindCitation, ID: src.ID, URL: src.URL, Title: src.Title,
			MediaType: src.MediaType, Name: src.Filename, Index: max(c.End, 0), Text: c.Quote})
	}
	if m.Usage != nil {
		evs = append(evs, stream.Event{Kind: stream.KindUsage, Usage: *m.Usage})
	}
	if m.FinishReason != "" {
		evs = append(evs, stream.Event{Kind: stream.KindFinish, Reason: m.FinishReason})
	}
	switch m.Status {
	case "stopped":
		return evs, ErrStoppedByUser
	case "incomplete":
		return evs, nil // no end marker: cut off
	case "failed":
		return evs, errStoredFailed
	}
	return append(evs, stream.Event{Kind: stream.KindEnd}), nil
}

var errStoredFailed = errors.New("trickle: the answer failed")
