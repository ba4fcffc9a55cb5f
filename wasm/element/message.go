package element

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/stream"
)

// AppendMessage appends the answer as an assistant message, the JSON
// object the element's message property and trickle-end's detail carry:
// role, content (the markdown), status, incomplete (stopped, cut off or
// failed with text shown: the next turn must not take it for a finished
// answer), finish_reason and usage (null when the stream gave none),
// tool_calls (id, name, arguments parsed — null until complete or when
// not JSON — and the raw text) and thinking.
func AppendMessage(b []byte, a *stream.Answer) []byte {
	st := a.Status()
	b = append(b, `{"role":"assistant","content":`...)
	b = jsonx.AppendString(b, a.Text())
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
func ToolCallEvent(c stream.ToolCall) Event {
	return Event{"trickle-tool-call", string(AppendToolCall(nil, c))}
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
}

// StoredCall is a stored tool call: its raw arguments text (or, without
// one, the arguments' JSON).
type StoredCall struct {
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
