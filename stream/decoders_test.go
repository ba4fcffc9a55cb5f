package stream

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/sse"
)

// decodeAll runs raw events through one dialect's decoder into an Answer.
func decodeAll(t *testing.T, dialect Dialect, events ...sse.Event) (*Answer, []error) {
	t.Helper()
	dec, err := NewDecoder(dialect)
	require.NoError(t, err)
	a := NewAnswer()
	var errs []error
	for _, ev := range events {
		if ev.Type == "" {
			ev.Type = "message"
		}
		if err := dec.Decode(ev, func(e Event) { a.Apply(e) }); err != nil {
			errs = append(errs, err)
		}
	}
	dec.Close(func(e Event) { a.Apply(e) })
	return a, errs
}

func TestDecoderEdgeCases(t *testing.T) {
	cases := []struct {
		name     string
		dialect  Dialect
		events   []sse.Event
		text     string
		thinking string
		status   Status
		errs     int
		check    func(t *testing.T, a *Answer)
	}{
		{
			name: "an OpenAI refusal is shown as text", dialect: "openai",
			events: []sse.Event{{Data: `{"choices":[{"index":0,"delta":{"refusal":"I can't help with that."}}]}`}, {Data: "[DONE]"}},
			text:   "I can't help with that.", status: Complete,
		},
		{
			name: "OpenAI-compatible reasoning fields are thinking", dialect: "openai",
			events:   []sse.Event{{Data: `{"choices":[{"index":0,"delta":{"reasoning":"Let me see."}}]}`}},
			thinking: "Let me see.", status: Streaming,
		},
		{
			name: "a Responses built-in tool's progress is neither text nor a problem", dialect: "responses",
			events: []sse.Event{
				{Type: "response.web_search_call.searching", Data: `{"type":"response.web_search_call.searching","output_index":0}`},
				{Type: "response.output_text.delta", Data: `{"type":"response.output_text.delta","delta":"Found it."}`},
			},
			text: "Found it.", status: Streaming,
		},
		{
			name: "a Responses event nobody defined is counted", dialect: "responses",
			events: []sse.Event{{Type: "response.teleport", Data: `{"type":"response.teleport"}`}},
			status: Waiting, errs: 1,
		},
		{
			name: "Responses arguments for a call never added are counted", dialect: "responses",
			events: []sse.Event{{Data: `{"type":"response.function_call_arguments.delta","output_index":3,"delta":"{}"}`}},
			status: Waiting, errs: 1,
		},
		{
			name: "a Gemini prompt blocked before any candidate fails with the reason", dialect: "gemini",
			events: []sse.Event{{Data: `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}}`}},
			status: Failed,
			check: func(t *testing.T, a *Answer) {
				require.ErrorIs(t, a.Err(), ErrProvider)
				require.Contains(t, a.Err().Error(), "SAFETY")
			},
		},
		{
			name: "Gemini's other candidates are not mixed into the answer", dialect: "gemini",
			events: []sse.Event{{Data: `{"candidates":[{"index":0,"content":{"parts":[{"text":"A"}]}},{"index":1,"content":{"parts":[{"text":"B"}]}}]}`}},
			text:   "A", status: Streaming,
		},
		{
			name: "an Ollama /api/generate response field is text", dialect: "ollama",
			events: []sse.Event{{Data: `{"model":"m","response":"Hi","done":false}`}, {Data: `{"model":"m","response":"","done":true,"done_reason":"stop"}`}},
			text:   "Hi", status: Complete,
		},
		{
			name: "Ollama tool calls keep the index they carry", dialect: "ollama",
			events: []sse.Event{{Data: `{"message":{"role":"assistant","content":"","tool_calls":[{"id":"c7","function":{"index":7,"name":"f","arguments":{"a":1}}}]},"done":false}`}},
			status: Streaming,
			check: func(t *testing.T, a *Answer) {
				calls := a.ToolCalls()
				require.Len(t, calls, 1)
				require.Equal(t, ToolCall{Index: 7, ID: "c7", Name: "f", Arguments: `{"a":1}`, Partial: `{"a":1}`, Complete: true}, calls[0])
			},
		},
		{
			name: "an Ollama line that says nothing known is counted", dialect: "ollama",
			events: []sse.Event{{Data: `{"status":"pulling manifest"}`}},
			status: Waiting, errs: 1,
		},
		{
			name: "a plain error string fails the answer", dialect: "plain",
			events: []sse.Event{{Data: `{"delta":"x"}`}, {Data: `{"error":"quota exceeded"}`}},
			text:   "x", status: Failed,
			check: func(t *testing.T, a *Answer) { require.Contains(t, a.Err().Error(), "quota exceeded") },
		},
		{
			name: "an Anthropic text delta for a block that never started is still text", dialect: "anthropic",
			events: []sse.Event{{Data: `{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"kept"}}`}},
			text:   "kept", status: Streaming,
		},
		{
			name: "an Anthropic stop for a block that never started is counted", dialect: "anthropic",
			events: []sse.Event{{Data: `{"type":"content_block_stop","index":9}`}},
			status: Waiting, errs: 1,
		},
		{
			name: "Anthropic citations and signatures are known and carry no text", dialect: "anthropic",
			events: []sse.Event{
				{Data: `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}`},
				{Data: `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`},
			},
			status: Waiting,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, errs := decodeAll(t, c.dialect, c.events...)
			// A decoder alone never says incomplete: that is the
			// pipeline's verdict at the end of the bytes.
			require.Equal(t, c.status, a.Status())
			require.Equal(t, c.text, a.Text())
			require.Equal(t, c.thinking, a.Thinking())
			require.Len(t, errs, c.errs, "%v", errs)
			if c.check != nil {
				c.check(t, a)
			}
		})
	}
}
