package stream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/sse"
)

func TestAGUIIsDetectedByItsFirstEvent(t *testing.T) {
	for _, ev := range []string{
		`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","delta":"x"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{}}`,
		`{"type":"REASONING_START","messageId":"r"}`,
		`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"x"}`,
		`{"type":"RUN_ERROR","message":"boom"}`,
	} {
		require.Equal(t, DialectAGUI, Detect(sse.Event{Type: "message", Data: ev}), ev)
	}
	// Lower-case types stay the AI SDK's and the others'.
	require.Equal(t, DialectAISDK, Detect(sse.Event{Data: `{"type":"start"}`}))
	require.Equal(t, "", string(Detect(sse.Event{Data: `{"type":"SOMETHING_ELSE"}`})))
}

func TestAGUIReadsOnlyTheAssistantsTextAndSkipsUnknownEvents(t *testing.T) {
	body := uiStream(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"u1","role":"user"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"u1","delta":"the question, echoed"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"u1"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"The answer"}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"s1","role":"system","delta":"a system note"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","delta":" still the note"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":", continued."}`,
		`{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"0.x thinking"}`,
		`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1}]}`,
		`{"type":"SOME_FUTURE_EVENT","value":1}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`)
	s := run(t, []byte(body), nil)
	require.Equal(t, DialectAGUI, s.Dialect)
	require.Equal(t, "complete", s.Status)
	require.Equal(t, "The answer, continued.", s.Text)
	require.Equal(t, "0.x thinking", s.Thinking)
	require.Empty(t, s.Finish, "no outcome, no finish reason: success by default")
	require.Equal(t, 1, s.Skipped, "the unknown event is skipped and counted, nothing else: %v", s.Problems)
	require.Contains(t, s.Problems[0], `"SOME_FUTURE_EVENT"`)

	// Before RUN_FINISHED the answer is cut off.
	cut := strings.Index(body, `data: {"type":"RUN_FINISHED"`)
	require.Equal(t, "incomplete", run(t, []byte(body[:cut]), nil).Status)
}

func TestAGUIToolCallsWithoutTheirStartAreSkippedAndResultsKeepTheirText(t *testing.T) {
	a, errs := decodeAll(t, DialectAGUI,
		sse.Event{Data: `{"type":"TOOL_CALL_ARGS","toolCallId":"nope","delta":"{}"}`},
		sse.Event{Data: `{"type":"TOOL_CALL_CHUNK","delta":"{}"}`},
		sse.Event{Data: `{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search"}`},
		sse.Event{Data: `{"type":"TOOL_CALL_END","toolCallId":"c1"}`},
		sse.Event{Data: `{"type":"TOOL_CALL_RESULT","messageId":"t1","toolCallId":"c1","content":[{"type":"text","text":"two "},{"type":"image","source":{"type":"url","value":"https://example.com/a.png"}},{"type":"text","text":"hits"}]}`},
		sse.Event{Data: `{"type":"TOOL_CALL_RESULT","messageId":"t2","toolCallId":"other","content":"x"}`},
		sse.Event{Data: `{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"success"}}`},
	)
	require.Len(t, errs, 3)
	for _, err := range errs {
		require.ErrorIs(t, err, ErrUnknownToolCall)
	}
	require.Equal(t, Complete, a.Status())
	require.Equal(t, []ToolCall{{Index: 0, ID: "c1", Name: "search", Arguments: "{}", Partial: "{}", Complete: true, Output: "two hits"}}, a.ToolCalls())
}

func TestAGUIRunErrorWithoutAMessageStillSaysWhatHappened(t *testing.T) {
	a, errs := decodeAll(t, DialectAGUI, sse.Event{Data: `{"type":"RUN_ERROR"}`})
	require.Empty(t, errs)
	require.Equal(t, Failed, a.Status())
	var perr *ProviderError
	require.ErrorAs(t, a.Err(), &perr)
	require.Equal(t, ProviderError{Dialect: DialectAGUI, Type: "error", Message: "the agent reported an error without a message"}, *perr)
}

func TestAGUIARunInvokedAsARunOfItsOwnDoesNotEndTheAnswer(t *testing.T) {
	body := uiStream(`{"type":"RUN_STARTED","threadId":"t","runId":"r1"}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Asking the researcher. "}`,
		`{"type":"RUN_STARTED","threadId":"t","runId":"r2","parentRunId":"r1"}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r2","usage":[{"inputTokens":5,"outputTokens":5}]}`,
		`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"Done."}`,
		`{"type":"RUN_FINISHED","threadId":"t","runId":"r1","outcome":{"type":"success"},"usage":[{"inputTokens":10,"outputTokens":20,"totalTokens":30}]}`)
	s := run(t, []byte(body), nil)
	require.Equal(t, "complete", s.Status)
	require.Equal(t, "Asking the researcher. Done.", s.Text)
	require.Equal(t, &Usage{InputTokens: 10, OutputTokens: 20, TotalTokens: 30}, s.Usage, "the run's own usage")
	require.Zero(t, s.Skipped, "%v", s.Problems)
}
