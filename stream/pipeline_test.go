package stream

import (
	"errors"
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/sse"
)

func feed(t *testing.T, p *Pipeline, parts ...string) {
	t.Helper()
	for _, s := range parts {
		_, err := p.Write([]byte(s))
		require.NoError(t, err)
	}
}

func TestDetectNamesTheDialectFromTheFirstEvent(t *testing.T) {
	cases := []struct {
		name string
		ev   sse.Event
		want Dialect
	}{
		{"an Anthropic event type", sse.Event{Type: "message_start", Data: `{}`}, "anthropic"},
		{"a Responses event type", sse.Event{Type: "response.created", Data: `{}`}, "responses"},
		{"an Anthropic type in the data only", sse.Event{Type: "message", Data: `{"type":"content_block_delta"}`}, "anthropic"},
		{"an Anthropic error", sse.Event{Type: "error", Data: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, "anthropic"},
		{"a Responses error", sse.Event{Type: "error", Data: `{"type":"error","code":"x","message":"y"}`}, "responses"},
		{"a chat completion chunk", sse.Event{Type: "message", Data: `{"object":"chat.completion.chunk","choices":[]}`}, "openai"},
		{"[DONE] alone", sse.Event{Type: "message", Data: "[DONE]"}, "openai"},
		{"a Gemini candidate", sse.Event{Type: "message", Data: `{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}`}, "gemini"},
		{"a Gemini error", sse.Event{Type: "message", Data: `{"error":{"code":503,"message":"m","status":"UNAVAILABLE"}}`}, "gemini"},
		{"an OpenAI error", sse.Event{Type: "message", Data: `{"error":{"message":"m","type":"server_error"}}`}, "openai"},
		{"an Ollama line", sse.Event{Type: "message", Data: `{"model":"m","created_at":"t","message":{"content":"a"},"done":false}`}, "ollama"},
		{"an Ollama error string", sse.Event{Type: "message", Data: `{"error":"model not found"}`}, "ollama"},
		{"a plain delta", sse.Event{Type: "message", Data: `{"delta":"hi"}`}, "plain"},
		{"the relay status", sse.Event{Type: "trickle.status", Data: `{"status":"stopped"}`}, ""},
		{"an unknown object", sse.Event{Type: "message", Data: `{"hello":1}`}, ""},
		{"not JSON", sse.Event{Type: "message", Data: `hello`}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, Detect(c.ev))
		})
	}
}

func TestContentTypeChoosesTheFraming(t *testing.T) {
	cases := []struct {
		ct   string
		want Framing
	}{
		{"text/event-stream", FramingSSE},
		{"text/event-stream; charset=utf-8", FramingSSE},
		{"Text/Event-Stream", FramingSSE},
		{"application/x-ndjson", FramingNDJSON},
		{"application/json; charset=utf-8", FramingNDJSON},
		{"", FramingUnknown},
		{"text/plain", FramingText},
		{"text/plain; charset=utf-8", FramingText},
		{"text/markdown", FramingText},
		{"text/html", FramingUnknown},
		{"application/octet-stream", FramingUnknown},
	}
	for _, c := range cases {
		t.Run(c.ct, func(t *testing.T) {
			require.Equal(t, c.want, newPipeline(t, WithContentType(c.ct)).Framing())
		})
	}
}

// The framing reads the media type as package mime does, for every header
// mime accepts (the widget does not link mime).
func TestFramingAgreesWithMimeOnTheMediaType(t *testing.T) {
	types := []string{"text/event-stream", "TEXT/Event-Stream", "application/x-ndjson", "application/ndjson",
		"application/jsonl", "application/x-jsonlines", "application/jsonlines", "application/json", "text/plain", "text/markdown", "text/html"}
	params := []string{"", ";", "; charset=utf-8", ";charset=UTF-8", ` ; q="a;b"`, "; a=1; b=2", "\t;\tx=y"}
	checked := 0
	for _, mt := range types {
		for _, pad := range []string{"", " ", "\t"} {
			for _, p := range params {
				ct := pad + mt + pad + p
				want := FramingUnknown
				if parsed, _, err := mime.ParseMediaType(ct); err == nil {
					switch parsed {
					case "text/event-stream":
						want = FramingSSE
					case "application/x-ndjson", "application/ndjson", "application/jsonl",
						"application/x-jsonlines", "application/jsonlines", "application/json":
						want = FramingNDJSON
					case "text/plain", "text/markdown":
						want = FramingText
					}
				} else {
					continue // mime rejects it; the framing's own reading is tested above
				}
				require.Equal(t, want, framingOf(ct), "Content-Type %q", ct)
				checked++
			}
		}
	}
	require.Greater(t, checked, len(types)*len(params), "mime accepted too few of the headers to compare")
}

func TestNDJSONContentTypeMeansOllamaEvenForAnUnrecognisedFirstLine(t *testing.T) {
	p := newPipeline(t, WithContentType("application/x-ndjson"))
	feed(t, p, `{"model":"m"}`+"\n", `{"message":{"content":"hi"},"done":true}`+"\n")
	require.NoError(t, p.Close())
	require.Equal(t, DialectOllama, p.Dialect())
	require.Equal(t, "hi", p.Answer().Text())
	require.Equal(t, 1, p.Answer().Skipped(), "the unrecognised first line is counted")
}

func TestAnExplicitDialectOverridesDetection(t *testing.T) {
	// {"delta":…} looks plain, but the caller said openai: it is an unknown
	// openai event, counted, and never silently read as plain text.
	p := newPipeline(t, WithDialect("openai"))
	feed(t, p, "data: {\"delta\":\"x\"}\n\n", "data: [DONE]\n\n")
	require.NoError(t, p.Close())
	require.Equal(t, DialectOpenAI, p.Dialect())
	require.Equal(t, "", p.Answer().Text())
	require.Equal(t, 1, p.Answer().Skipped())
	require.ErrorIs(t, p.Answer().Problems()[0], ErrUnknownEvent)
}

func TestStatusGoesFromWaitingToStreamingToComplete(t *testing.T) {
	var seen []Status
	p := newPipeline(t)
	seen = append(seen, p.Answer().Status())
	feed(t, p, "event: ping\ndata: {\"type\":\"ping\"}\n\n")
	seen = append(seen, p.Answer().Status())
	feed(t, p, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n")
	seen = append(seen, p.Answer().Status())
	feed(t, p, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	seen = append(seen, p.Answer().Status())
	require.NoError(t, p.Close())
	seen = append(seen, p.Answer().Status())
	require.Equal(t, []Status{Waiting, Waiting, Streaming, Complete, Complete}, seen,
		"a ping is not content; the end marker completes; Close keeps it complete")
}

func TestStatusNamesAreLowercaseWords(t *testing.T) {
	names := []string{}
	for s := Waiting; s <= Failed; s++ {
		names = append(names, s.String())
	}
	require.Equal(t, []string{"waiting", "streaming", "complete", "stopped", "incomplete", "failed"}, names)
}

func TestAnEmptyStreamIsIncompleteAndSaysSo(t *testing.T) {
	p := newPipeline(t)
	err := p.Close()
	require.ErrorIs(t, err, ErrIncomplete)
	require.Contains(t, err.Error(), "before its dialect was known")
	require.Equal(t, Incomplete, p.Answer().Status())
}

func TestStopKeepsTheTextAndIgnoresWhatFollows(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, "data: {\"delta\":\"one \"}\n\n")
	p.Stop()
	feed(t, p, "data: {\"delta\":\"two\"}\n\n", "data: [DONE]\n\n")
	require.NoError(t, p.Close())
	a := p.Answer()
	require.Equal(t, Stopped, a.Status())
	require.ErrorIs(t, a.Err(), ErrStopped)
	require.Equal(t, "one ", a.Text())
	require.Equal(t, 2, a.Skipped(), "events after the end are counted")
	require.ErrorIs(t, a.Problems()[0], ErrAfterEnd)
}

func TestFailThenReconnectResumesTheSameAnswer(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, "id: s:1\ndata: {\"delta\":\"Hel\"}\n\nid: s:2\ndata: {\"del")
	p.Fail(errors.New("connection reset"))
	require.Equal(t, Failed, p.Answer().Status())
	require.Contains(t, p.Answer().Err().Error(), "connection reset")
	require.Equal(t, "s:1", p.LastEventID())
	p.Reconnect()
	require.Equal(t, Streaming, p.Answer().Status())
	require.Equal(t, "s:1", p.LastEventID(), "the resume point survives the reconnect")
	// The new connection starts at a fresh event: the half event of the
	// old one must not glue onto it.
	feed(t, p, "id: s:2\ndata: {\"delta\":\"lo\"}\n\nid: s:3\ndata: [DONE]\n\n")
	require.NoError(t, p.Close())
	require.Equal(t, Complete, p.Answer().Status())
	require.Equal(t, "Hello", p.Answer().Text())
	require.Equal(t, 0, p.Answer().Skipped())
}

func TestCloseThenReconnectReopensAnIncompleteAnswer(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, "data: {\"delta\":\"a\"}\n\n")
	require.ErrorIs(t, p.Close(), ErrIncomplete)
	p.Reconnect()
	require.Equal(t, Streaming, p.Answer().Status())
	require.NoError(t, p.Answer().Err())
	feed(t, p, "data: {\"delta\":\"b\"}\n\ndata: [DONE]\n\n")
	require.NoError(t, p.Close())
	require.Equal(t, "ab", p.Answer().Text())
	require.Equal(t, Complete, p.Answer().Status())
}

func TestReconnectNeverReopensAProviderErrorOrAStop(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, "data: {\"delta\":\"a\"}\n\ndata: {\"error\":\"boom\"}\n\n")
	p.Reconnect()
	require.Equal(t, Failed, p.Answer().Status())
	q := newPipeline(t)
	feed(t, q, "data: {\"delta\":\"a\"}\n\n")
	q.Stop()
	q.Reconnect()
	require.Equal(t, Stopped, q.Answer().Status())
}

func TestRelayStatusEvents(t *testing.T) {
	cases := []struct {
		name, data string
		status     Status
		is         error
		contains   string
	}{
		{"stopped stops", `{"status":"stopped","message":"user pressed stop"}`, Stopped, ErrStopped, "user pressed stop"},
		{"failed fails with the message", `{"status":"failed","message":"upstream returned 500"}`, Failed, ErrRelay, "upstream returned 500"},
		{"gone fails saying the stream expired", `{"status":"gone","message":"s9"}`, Failed, ErrGone, "expired"},
		// As the relay writes them: with an OpenAI-style error object for
		// the SDKs, which the status word still outranks.
		{"stopped, as the relay writes it", `{"status":"stopped","message":"stopped by the client","error":{"message":"stopped by the client","type":"trickle_status","code":"stopped"}}`, Stopped, ErrStopped, "stopped by the client"},
		{"failed, as the relay writes it", `{"status":"failed","message":"relay: upstream failed","error":{"message":"relay: upstream failed","type":"trickle_status","code":"failed"}}`, Failed, ErrRelay, "upstream failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range []Dialect{DialectAuto, DialectOpenAI} {
				p := newPipeline(t, WithDialect(d))
				feed(t, p, "data: {\"choices\":[{\"delta\":{\"content\":\"kept\"}}]}\n\n", "event: trickle.status\ndata: "+c.data+"\n\n")
				require.NoError(t, p.Close())
				a := p.Answer()
				require.Equal(t, c.status, a.Status(), d)
				require.ErrorIs(t, a.Err(), c.is, d)
				require.Equal(t, "kept", a.Text(), d)
			}
			p := newPipeline(t)
			feed(t, p, "data: {\"delta\":\"kept\"}\n\n", "event: trickle.status\ndata: "+c.data+"\n\n")
			require.NoError(t, p.Close())
			a := p.Answer()
			require.Equal(t, c.status, a.Status())
			require.ErrorIs(t, a.Err(), c.is)
			require.ErrorIs(t, a.Err(), ErrRelay)
			require.Contains(t, a.Err().Error(), c.contains)
			require.Equal(t, "kept", a.Text())
		})
	}
}

func TestAnUnknownRelayStatusIsSkippedNotObeyed(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, "event: trickle.status\ndata: {\"status\":\"party\"}\n\n", "data: {\"delta\":\"x\"}\n\ndata: [DONE]\n\n")
	require.NoError(t, p.Close())
	require.Equal(t, Complete, p.Answer().Status())
	require.Equal(t, 1, p.Answer().Skipped())
}

func TestAnOversizedSSEEventIsCountedAndTheStreamGoesOn(t *testing.T) {
	p := newPipeline(t, WithMaxEventSize(64))
	big := strings.Repeat("x", 200)
	feed(t, p, "data: {\"delta\":\"a\"}\n\n", "data: {\"delta\":\""+big+"\"}\n\n", "data: {\"delta\":\"b\"}\n\ndata: [DONE]\n\n")
	require.NoError(t, p.Close())
	a := p.Answer()
	require.Equal(t, "ab", a.Text())
	require.Equal(t, Complete, a.Status())
	require.Equal(t, 1, a.Skipped())
	require.ErrorIs(t, a.Problems()[0], ErrEventTooLarge)
	require.ErrorIs(t, a.Problems()[0], sse.ErrEventTooLarge)
}

func TestEveryOversizedSSEEventIsNumberedInItsPlaceWhateverTheCut(t *testing.T) {
	big := `data: {"delta":"` + strings.Repeat("x", 100) + `"}` + "\n\n"
	input := `data: {"delta":"a"}` + "\n\n" + big + big + `data: {"delta":"b"}` + "\n\n" + big + "data: [DONE]\n\n"
	for i := 0; i <= len(input); i++ {
		p := newPipeline(t, WithMaxEventSize(64))
		feed(t, p, input[:i], input[i:])
		require.NoError(t, p.Close())
		a := p.Answer()
		require.Equal(t, "ab", a.Text(), "cut at %d", i)
		require.Equal(t, Complete, a.Status(), "cut at %d", i)
		require.Equal(t, 3, a.Skipped(), "cut at %d: one skip per oversize event", i)
		var at []int
		for _, err := range a.Problems() {
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			require.ErrorIs(t, err, ErrEventTooLarge)
			at = append(at, de.Event)
		}
		require.Equal(t, []int{2, 3, 5}, at, "cut at %d: each drop keeps its event number", i)
	}
}

func TestThePipelineKeepsTheServersRetryFieldInAnyCut(t *testing.T) {
	input := "id: s:1\ndata: {\"retry:\": 9}\n\nretry: 1500\r\ndata: {\"delta\":\"x\"}\r\n\r\nretry:abc\n\n: retry: 7\n"
	for cut := 1; cut <= len(input); cut++ {
		p := newPipeline(t)
		require.Zero(t, p.Retry())
		for i := 0; i < len(input); i += cut {
			feed(t, p, input[i:min(len(input), i+cut)])
		}
		require.Equal(t, 1500*time.Millisecond, p.Retry(), "cut %d: only a retry field of digits counts, not one in data, a comment or letters", cut)
	}
	p := newPipeline(t)
	feed(t, p, "retry:250\rretry\n")
	require.Equal(t, 250*time.Millisecond, p.Retry(), "CR ends the line; a bare field name is no value")
}

func TestAnOversizedNDJSONLineIsCountedWithBoundedMemory(t *testing.T) {
	p := newPipeline(t, WithMaxEventSize(64))
	feed(t, p, `{"message":{"content":"a"},"done":false}`+"\n")
	for i := 0; i < 100; i++ { // a 100 KB line, fed in pieces
		feed(t, p, strings.Repeat("y", 1000))
	}
	require.LessOrEqual(t, cap(p.line), 128, "the unfinished line must not grow past the bound")
	feed(t, p, "\n", `{"message":{"content":"b"},"done":true}`+"\n")
	require.NoError(t, p.Close())
	a := p.Answer()
	require.Equal(t, "ab", a.Text())
	require.Equal(t, 1, a.Skipped())
	require.ErrorIs(t, a.Problems()[0], ErrEventTooLarge)
}

func TestTheLastNDJSONLineNeedsNoNewline(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, `{"message":{"content":"x"},"done":false}`+"\r\n\n", `{"message":{"content":"y"},"done":true,"done_reason":"stop"}`)
	require.NoError(t, p.Close())
	require.Equal(t, Complete, p.Answer().Status())
	require.Equal(t, "xy", p.Answer().Text())
}

func TestToolArgumentsAreOnlyExposedWhenTheBlockEnds(t *testing.T) {
	p := newPipeline(t)
	feed(t, p,
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n")
	calls := p.Answer().ToolCalls()
	require.Len(t, calls, 1)
	require.False(t, calls[0].Complete)
	require.Equal(t, "", calls[0].Arguments, "half an object is not arguments")
	require.Equal(t, `{"a":`, calls[0].Partial)
	require.Equal(t, "toolu_1", calls[0].ID)
	feed(t, p, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1}\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n")
	calls = p.Answer().ToolCalls()
	require.True(t, calls[0].Complete)
	require.Equal(t, `{"a":1}`, calls[0].Arguments)
}

func TestAToolCallLeftOpenByATruncatedStreamStaysIncomplete(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{\"a"}}]}}]}`+"\n\n")
	require.ErrorIs(t, p.Close(), ErrIncomplete)
	calls := p.Answer().ToolCalls()
	require.Len(t, calls, 1)
	require.False(t, calls[0].Complete)
	require.Empty(t, calls[0].Arguments)
}

func TestAnAnthropicToolWithoutDeltasHasItsStartInputOrAnEmptyObject(t *testing.T) {
	p := newPipeline(t, WithDialect("anthropic"))
	feed(t, p,
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t0","name":"now","input":{}}}`+"\n\n",
		`data: {"type":"content_block_stop","index":0}`+"\n\n",
		`data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"go","input":{"x":1}}}`+"\n\n",
		`data: {"type":"content_block_stop","index":1}`+"\n\n")
	calls := p.Answer().ToolCalls()
	require.Equal(t, "{}", calls[0].Arguments)
	require.Equal(t, `{"x":1}`, calls[1].Arguments)
}

func TestBadInputIsCountedWithItsReasonAndPosition(t *testing.T) {
	p := newPipeline(t, WithDialect("anthropic"))
	feed(t, p,
		"data: not json\n\n",
		"event: mystery\ndata: {\"type\":\"mystery\"}\n\n",
		"data: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":5}}\n\n",
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n")
	a := p.Answer()
	require.Equal(t, "ok", a.Text())
	require.Equal(t, 4, a.Skipped())
	probs := a.Problems()
	require.ErrorIs(t, probs[0], ErrBadJSON)
	require.ErrorIs(t, probs[1], ErrUnknownEvent)
	require.ErrorIs(t, probs[2], ErrUnknownToolCall)
	require.ErrorIs(t, probs[3], ErrUnknownEvent, "valid JSON of the wrong shape")
	var de *DecodeError
	require.ErrorAs(t, probs[1], &de)
	require.Equal(t, 2, de.Event)
	require.Equal(t, "mystery", de.Type)
	require.Equal(t, `stream: anthropic event 2 (mystery): unknown event: "mystery"`, de.Error())
}

func TestProblemsAreBoundedButTheCountIsNot(t *testing.T) {
	p := newPipeline(t, WithDialect("plain"))
	for i := 0; i < 100; i++ {
		feed(t, p, "data: garbage\n\n")
	}
	require.Equal(t, 100, p.Answer().Skipped())
	require.Len(t, p.Answer().Problems(), maxProblems)
}

func TestOpenAIOtherChoicesAreNotMixedIntoTheAnswer(t *testing.T) {
	p := newPipeline(t)
	feed(t, p, `data: {"choices":[{"index":0,"delta":{"content":"A"}},{"index":1,"delta":{"content":"B"}}]}`+"\n\n", "data: [DONE]\n\n")
	require.Equal(t, "A", p.Answer().Text())
}

func TestGeminiIsCompleteOnlyAfterACleanCloseFollowingAFinishReason(t *testing.T) {
	finish := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n"
	p := newPipeline(t)
	feed(t, p, finish)
	require.Equal(t, Streaming, p.Answer().Status(), "not yet: the close is part of the marker")
	require.NoError(t, p.Close())
	require.Equal(t, Complete, p.Answer().Status())

	q := newPipeline(t)
	feed(t, q, finish, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"y\"}]}}]}") // cut mid-event
	require.ErrorIs(t, q.Close(), ErrIncomplete)
	require.Contains(t, q.Answer().Err().Error(), "in the middle of an event")
}

func TestEventsReachTheHandlerInStreamOrder(t *testing.T) {
	var kinds []string
	p := newPipeline(t, WithEventHandler(func(e Event) { kinds = append(kinds, e.Kind.String()) }))
	feed(t, p, string(readRecording(t, "anthropic-thinking-tool.sse")))
	require.NoError(t, p.Close())
	require.Equal(t, []string{
		"usage", "keep_alive", "thinking", "thinking", "thinking",
		"text", "text", "text",
		"tool_call_delta", "tool_call_delta", "tool_call_delta", "tool_call_delta", "tool_call_delta", "tool_call_done",
		"finish", "usage", "end",
	}, kinds)
}

func TestNewDecoderNamesTheDialectsItKnows(t *testing.T) {
	require.Equal(t, []Dialect{"openai", "responses", "anthropic", "gemini", "ollama", "plain", "text", "ai-sdk", "ag-ui"}, Dialects())
	for _, n := range Dialects() {
		d, err := NewDecoder(n)
		require.NoError(t, err)
		require.Equal(t, n, d.Dialect())
		require.NotEmpty(t, d.EndMarker())
	}
	_, err := NewDecoder("nope")
	require.ErrorIs(t, err, ErrUnknownDialect)
	_, err = NewDecoder(DialectAuto)
	require.ErrorIs(t, err, ErrUnknownDialect, "auto is a request for detection, not a decoder")
}

func TestParseDialectReadsEveryNameAndNamesTheValidOnesOnError(t *testing.T) {
	for _, d := range Dialects() {
		got, err := ParseDialect(" " + strings.ToUpper(string(d)) + " ")
		require.NoError(t, err)
		require.Equal(t, d, got)
		require.True(t, got.Known())
	}
	for _, s := range []string{"", "auto", "AUTO"} {
		got, err := ParseDialect(s)
		require.NoError(t, err)
		require.Equal(t, DialectAuto, got)
	}
	_, err := ParseDialect("klingon")
	require.ErrorIs(t, err, ErrUnknownDialect)
	require.Contains(t, err.Error(), `"klingon"`)
	require.Contains(t, err.Error(), "auto or one of "+DialectNames(Dialects()))
	require.False(t, Dialect("klingon").Known())
}

func TestOversizedEventsAreCountedTheSameWhateverTheCut(t *testing.T) {
	big := strings.Repeat("x", 100)
	cases := map[string]string{
		"sse": "data: {\"delta\":\"a\"}\n\ndata: {\"delta\":\"" + big + "\"}\n\ndata: nope\n\n" +
			"data: {\"delta\":\"b\"}\n\ndata: " + big + "\n\ndata: {\"delta\":\"c\"}\n\ndata: [DONE]\n\n",
		"ndjson": `{"message":{"content":"a"},"done":false}` + "\n" + `{"message":{"content":"` + big + `"}}` + "\n" +
			"nope\n" + `{"message":{"content":"b"},"done":false}` + "\n" + big + "\n" + `{"message":{"content":"c"},"done":true}` + "\n",
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			whole := run(t, []byte(data), nil, WithMaxEventSize(64))
			require.Equal(t, "abc", whole.Text)
			require.Equal(t, 3, whole.Skipped, "%v", whole.Problems)
			for _, cuts := range cutSets(len(data), testing.Short()) {
				got := run(t, []byte(data), cuts, WithMaxEventSize(64))
				if !snapshotsEqual(whole, got) {
					require.Equal(t, whole, got, "cut at %v", cuts)
				}
			}
		})
	}
}

func TestABOMBeforeTheFirstNDJSONLineIsIgnored(t *testing.T) {
	for _, cut := range []int{1, 2, 3, 4, 10} {
		data := "\xEF\xBB\xBF" + `{"message":{"content":"ok"},"done":true}` + "\n"
		s := run(t, []byte(data), []int{cut})
		require.Equal(t, "ok", s.Text, "cut at %d", cut)
		require.Equal(t, "complete", s.Status)
		require.Zero(t, s.Skipped)
	}
}

func TestAToolCallStreamedInManyTinyDeltasIsReadInLinearTime(t *testing.T) {
	// 200,000 one-byte argument deltas (a model writing a file through a
	// tool): a quadratic accumulation would copy ~20 GB here.
	n := 200000
	if testing.Short() {
		n = 20000
	}
	var b strings.Builder
	b.WriteString(`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"write","input":{}}}` + "\n\n")
	for i := 0; i < n; i++ {
		b.WriteString(`data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"x"}}` + "\n\n")
	}
	b.WriteString(`data: {"type":"content_block_stop","index":0}` + "\n\n")
	p := newPipeline(t, WithDialect("anthropic"))
	feed(t, p, b.String())
	calls := p.Answer().ToolCalls()
	require.Len(t, calls, 1)
	require.True(t, calls[0].Complete)
	require.Len(t, calls[0].Arguments, n)
}

// What a Stop cost: the relay's count in its stopped status becomes the
// answer's output tokens, marked estimated when the relay says so; a
// count the provider sent is kept.
func TestAStoppedStatusCarriesWhatWasGenerated(t *testing.T) {
	stopped := "event: trickle.status\ndata: {\"status\":\"stopped\",\"message\":\"m\",\"usage\":{\"completion_tokens\":7,\"estimated\":true}}\n\n"
	p := newPipeline(t)
	feed(t, p, "data: {\"choices\":[{\"delta\":{\"content\":\"kept\"}}]}\n\n", stopped)
	require.NoError(t, p.Close())
	require.Equal(t, Stopped, p.Answer().Status())
	require.Equal(t, &Usage{OutputTokens: 7, TotalTokens: 7, Estimated: true}, p.Answer().Usage())

	p = newPipeline(t)
	feed(t, p, "data: {\"choices\":[{\"delta\":{\"content\":\"kept\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n", stopped)
	require.NoError(t, p.Close())
	require.Equal(t, &Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}, p.Answer().Usage(), "the provider's count outranks the relay's")
}
