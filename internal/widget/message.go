package widget

import (
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
	if u := a.Usage(); u != nil {
		b = append(b, `{"input_tokens":`...)
		b = strconv.AppendInt(b, int64(u.InputTokens), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
		b = append(b, `,"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(u.ReasoningTokens), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
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
