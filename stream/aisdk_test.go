package stream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/sse"
)

// uiStream writes UI message stream parts as the AI SDK sends them: one
// data: line each, then data: [DONE].
func uiStream(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

func TestTheUIMessageStreamGivesTextThinkingAndAToolCallWithItsOutput(t *testing.T) {
	body := uiStream(`{"type":"start"}`, `{"type":"start-step"}`,
		`{"type":"reasoning-start","id":"r1"}`, `{"type":"reasoning-delta","id":"r1","delta":"The user wants "}`,
		`{"type":"reasoning-delta","id":"r1","delta":"the weather."}`, `{"type":"reasoning-end","id":"r1"}`,
		`{"type":"text-start","id":"t1"}`, `{"type":"text-delta","id":"t1","delta":"Let me **check**."}`, `{"type":"text-end","id":"t1"}`,
		`{"type":"tool-input-start","toolCallId":"call_1","toolName":"get_weather"}`,
		`{"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"{\"city\":"}`,
		`{"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"\"Paris\"}"}`,
		`{"type":"tool-input-available","toolCallId":"call_1","toolName":"get_weather","input":{"city":"Paris"}}`,
		`{"type":"tool-output-available","toolCallId":"call_1","output":{"city":"Paris","temp":21}}`,
		`{"type":"data-weather","data":{"x":1}}`, `{"type":"finish-step"}`, `{"type":"finish","finishReason":"tool-calls"}`, `[DONE]`)
	s := run(t, []byte(body), nil)
	require.Equal(t, DialectAISDK, s.Dialect)
	require.Equal(t, "complete", s.Status)
	require.Equal(t, "Let me **check**.", s.Text)
	require.Equal(t, "The user wants the weather.", s.Thinking)
	require.Equal(t, "tool-calls", s.Finish)
	require.Equal(t, []ToolCall{{Index: 0, ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Partial: `{"city":"Paris"}`,
		Complete: true, Output: `{"city":"Paris","temp":21}`}}, s.Tools)
	require.Zero(t, s.Skipped, "[DONE] after finish is no problem: %v", s.Problems)

	// Before its finish part, the answer is not complete.
	cut := strings.Index(body, `data: {"type":"finish",`)
	require.Equal(t, "incomplete", run(t, []byte(body[:cut]), nil).Status)
}

func TestAUIMessageStreamErrorFailsTheAnswerWithItsMessage(t *testing.T) {
	body := uiStream(`{"type":"start"}`, `{"type":"text-start","id":"t1"}`, `{"type":"text-delta","id":"t1","delta":"Half"}`,
		`{"type":"error","errorText":"The model is overloaded"}`, `{"type":"finish-step"}`, `{"type":"finish","finishReason":"error"}`, `[DONE]`)
	p := newPipeline(t)
	feed(t, p, body)
	require.NoError(t, p.Close())
	a := p.Answer()
	require.Equal(t, Failed, a.Status())
	require.Equal(t, "Half", a.Text())
	var perr *ProviderError
	require.ErrorAs(t, a.Err(), &perr)
	require.Equal(t, ProviderError{Dialect: DialectAISDK, Type: "error", Message: "The model is overloaded"}, *perr)
	require.Zero(t, a.Skipped(), "the SDK's finish and [DONE] after an error are no problem: %v", a.Problems())
	require.Empty(t, a.FinishReason(), "nothing after the error counts")
}

func TestAUIMessageStreamAbortStopsTheAnswer(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, uiStream(`{"type":"start"}`, `{"type":"text-delta","id":"t","delta":"So far"}`, `{"type":"abort"}`, `[DONE]`))
	require.NoError(t, p.Close())
	require.Equal(t, Stopped, p.Answer().Status())
	require.ErrorIs(t, p.Answer().Err(), ErrAborted)
	require.Equal(t, "So far", p.Answer().Text())
}

func TestUIMessageStreamToolCallsWithoutTheirStartAndToolErrors(t *testing.T) {
	a, errs := decodeAll(t, DialectAISDK,
		sse.Event{Data: `{"type":"tool-input-delta","toolCallId":"nope","inputTextDelta":"{"}`},
		sse.Event{Data: `{"type":"tool-output-available","toolCallId":"nope","output":1}`},
		// A call not streamed opens whole with its input.
		sse.Event{Data: `{"type":"tool-input-available","toolCallId":"c2","toolName":"search","input":{"q":"tea"}}`},
		sse.Event{Data: `{"type":"tool-output-error","toolCallId":"c2","errorText":"rate limited"}`},
		sse.Event{Data: `{"type":"tool-input-error","toolCallId":"c3","toolName":"calc","input":"1+","errorText":"bad input"}`},
		sse.Event{Data: `{"type":"reasoning-part-that-does-not-exist"}`},
	)
	require.Len(t, errs, 3, "%v", errs)
	require.ErrorIs(t, errs[0], ErrUnknownToolCall)
	require.ErrorIs(t, errs[1], ErrUnknownToolCall)
	require.ErrorIs(t, errs[2], ErrUnknownEvent)
	require.Equal(t, []ToolCall{
		{Index: 0, ID: "c2", Name: "search", Arguments: `{"q":"tea"}`, Partial: `{"q":"tea"}`, Complete: true, OutputError: "rate limited"},
		{Index: 1, ID: "c3", Name: "calc", Arguments: `"1+"`, Partial: `"1+"`, Complete: true, OutputError: "bad input"},
	}, a.ToolCalls())
}

func TestTheUIMessageStreamIsDetectedByItsHeaderOrItsFirstPart(t *testing.T) {
	for _, part := range []string{`{"type":"start"}`, `{"type":"start","messageId":"m1"}`, `{"type":"text-delta","id":"t","delta":"x"}`,
		`{"type":"reasoning-delta","id":"r","delta":"x"}`, `{"type":"error","errorText":"boom"}`, `{"type":"data-custom","data":1}`,
		`{"type":"tool-input-start","toolCallId":"c","toolName":"f"}`, `{"type":"finish"}`, `{"type":"abort"}`} {
		require.Equal(t, DialectAISDK, Detect(sse.Event{Type: "message", Data: part}), part)
	}
	// The other dialects' errors stay theirs.
	require.Equal(t, DialectResponses, Detect(sse.Event{Data: `{"type":"error","code":"x","message":"y"}`}))
	require.Equal(t, DialectAnthropic, Detect(sse.Event{Data: `{"type":"error","error":{"type":"overloaded_error","message":"m"}}`}))
	require.Equal(t, DialectPlain, Detect(sse.Event{Data: `{"delta":"x"}`}))

	// The header says it before any part: a first part the decoder does
	// not know is its problem, not another dialect's text.
	p := newPipeline(t)
	p.Respond(ResponseOf(func(name string) string {
		return map[string]string{"Content-Type": "text/event-stream", UIMessageStreamHeader: "v1"}[name]
	}))
	require.Equal(t, DialectAISDK, p.Dialect())
	feed(t, p, uiStream(`{"delta":"not plain"}`, `{"type":"text-delta","id":"t","delta":"ok"}`, `{"type":"finish"}`))
	require.NoError(t, p.Close())
	require.Equal(t, "ok", p.Answer().Text())
	require.Equal(t, 1, p.Answer().Skipped())
}

func TestTheUIMessageStreamsSourcesFilesAndApprovalsAreKeptOnTheAnswer(t *testing.T) {
	body := uiStream(`{"type":"start","messageId":"m1"}`,
		`{"type":"text-start","id":"t1"}`, `{"type":"text-delta","id":"t1","delta":"Tea cools [1]."}`, `{"type":"text-end","id":"t1"}`,
		`{"type":"source-url","sourceId":"s1","url":"https://example.com/tea","title":"Tea"}`,
		`{"type":"source-url","sourceId":"s1","url":"https://example.com/tea","title":"Tea"}`,
		`{"type":"source-url","sourceId":"s2","url":"https://example.org/"}`,
		`{"type":"source-document","sourceId":"d1","mediaType":"application/pdf","title":"Brewing guide","filename":"brew.pdf"}`,
		`{"type":"file","url":"data:image/png;base64,iVBORw0KGgo=","mediaType":"image/png"}`,
		`{"type":"tool-input-available","toolCallId":"c1","toolName":"book","input":{"people":2}}`,
		`{"type":"tool-approval-request","approvalId":"a1","toolCallId":"c1"}`,
		`{"type":"tool-input-available","toolCallId":"c2","toolName":"delete","input":{}}`,
		`{"type":"tool-output-denied","toolCallId":"c2"}`,
		`{"type":"a-part-from-the-future","x":1}`,
		`{"type":"finish","finishReason":"tool-calls"}`, `[DONE]`)
	s := run(t, []byte(body), nil)
	require.Equal(t, DialectAISDK, s.Dialect)
	require.Equal(t, "complete", s.Status, "an unknown part does not fail the answer")
	require.Equal(t, "Tea cools [1].", s.Text)
	require.Equal(t, []Source{
		{ID: "s1", URL: "https://example.com/tea", Title: "Tea"},
		{ID: "s2", URL: "https://example.org/"},
		{ID: "d1", Title: "Brewing guide", MediaType: "application/pdf", Filename: "brew.pdf"},
	}, s.Sources, "each source once")
	require.Equal(t, []File{{URL: "data:image/png;base64,iVBORw0KGgo=", MediaType: "image/png"}}, s.Files)
	require.Equal(t, []Approval{{ID: "a1", ToolCallID: "c1", Reason: ApprovalToolCall}}, s.Approvals)
	require.Len(t, s.Tools, 2)
	require.False(t, s.Tools[0].Denied)
	require.True(t, s.Tools[1].Denied)
	require.Equal(t, 1, s.Skipped, "the unknown part is skipped and counted: %v", s.Problems)
	require.Contains(t, s.Problems[0], `"a-part-from-the-future"`)

	// The new parts name the dialect when they come first.
	for _, part := range []string{`{"type":"source-url","sourceId":"s","url":"u"}`, `{"type":"tool-approval-request","approvalId":"a","toolCallId":"c"}`,
		`{"type":"tool-output-denied","toolCallId":"c"}`, `{"type":"file","url":"u","mediaType":"m"}`} {
		require.Equal(t, DialectAISDK, Detect(sse.Event{Data: part}), part)
	}
}
