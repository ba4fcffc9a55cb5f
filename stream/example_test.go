package stream_test

import (
	"errors"
	"fmt"

	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// The pipeline takes response bytes as they arrive, cut anywhere, and
// builds the answer; the dialect is detected from the first event.
func ExampleNewPipeline() {
	body := "event: message_start\n" +
		"data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n" +
		"event: content_block_delta\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello, \"}}\n\n" +
		"event: content_block_delta\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"world.\"}}\n\n" +
		"event: message_delta\n" +
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n" +
		"event: message_stop\n" +
		"data: {\"type\":\"message_stop\"}\n\n"

	p, err := stream.NewPipeline(stream.WithContentType("text/event-stream"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := 0; i < len(body); i += 10 { // ten bytes at a time
		p.Write([]byte(body[i:min(i+10, len(body))]))
	}
	p.Close()

	a := p.Answer()
	fmt.Println(p.Dialect(), a.Status())
	fmt.Printf("%q %s\n", a.Text(), a.FinishReason())
	fmt.Printf("%+v\n", *a.Usage())
	// Output:
	// anthropic complete
	// "Hello, world." end_turn
	// {InputTokens:12 OutputTokens:4 ReasoningTokens:0 TotalTokens:16 Estimated:false}
}

// A stream that closes without its end marker is incomplete, and says why.
func ExamplePipeline_Close() {
	p, err := stream.NewPipeline()
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Half an ans\"}}]}\n\n"))
	err = p.Close()
	fmt.Println(p.Answer().Status(), errors.Is(err, stream.ErrIncomplete))
	fmt.Println(err)
	// Output:
	// incomplete true
	// stream: ended without the end marker: openai stream closed between events after 1 events without data: [DONE]
}

// Every event reaches the handler as a unified Event, whatever the dialect.
func ExampleWithEventHandler() {
	p, err := stream.NewPipeline(stream.WithEventHandler(func(e stream.Event) {
		fmt.Printf("%s %q\n", e.Kind, e.Text)
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Write([]byte(`{"message":{"role":"assistant","thinking":"Hmm."},"done":false}` + "\n"))
	p.Write([]byte(`{"message":{"role":"assistant","content":"Hi!"},"done":false}` + "\n"))
	p.Write([]byte(`{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}` + "\n"))
	p.Close()
	// Output:
	// thinking "Hmm."
	// text "Hi!"
	// finish ""
	// usage ""
	// end ""
}

// A dialect read from user input goes through ParseDialect; a value that
// is not a Dialect constant is refused by name.
func ExampleWithDialect() {
	_, err := stream.NewPipeline(stream.WithDialect("klingon"))
	fmt.Println(errors.Is(err, stream.ErrBadOption), errors.Is(err, stream.ErrUnknownDialect))
	var oe *stream.OptionError
	if errors.As(err, &oe) {
		fmt.Println(oe.Option, oe.Value)
	}
	// Output:
	// true true
	// WithDialect klingon
}

// Detect names the dialect of one event.
func ExampleDetect() {
	fmt.Println(stream.Detect(sse.Event{Type: "response.output_text.delta", Data: `{}`}))
	fmt.Println(stream.Detect(sse.Event{Type: "message", Data: `{"candidates":[]}`}))
	// Output:
	// responses
	// gemini
}

// A tool call's arguments are exposed only once its block has ended.
func ExampleAnswer_ToolCalls() {
	p, err := stream.NewPipeline(stream.WithDialect("openai"))
	if err != nil {
		fmt.Println(err)
		return
	}
	p.Write([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}` + "\n\n"))
	c := p.Answer().ToolCalls()[0]
	fmt.Printf("%s complete=%v arguments=%q partial=%q\n", c.Name, c.Complete, c.Arguments, c.Partial)
	p.Write([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]},"finish_reason":"tool_calls"}]}` + "\n\n"))
	c = p.Answer().ToolCalls()[0]
	fmt.Printf("%s complete=%v arguments=%s\n", c.Name, c.Complete, c.Arguments)
	// Output:
	// get_weather complete=false arguments="" partial="{\"city\":"
	// get_weather complete=true arguments={"city":"Oslo"}
}

// A Decoder can be used on its own, for events that were already framed
// (a WebSocket message, a queue); Answer.Apply folds its events in.
func ExampleNewDecoder() {
	dec, _ := stream.NewDecoder("gemini")
	a := stream.NewAnswer()
	for _, data := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"Thinking…","thought":true}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"Blue."}]},"finishReason":"STOP"}]}`,
	} {
		if err := dec.Decode(sse.Event{Type: "message", Data: data}, func(e stream.Event) { a.Apply(e) }); err != nil {
			fmt.Println(err)
		}
	}
	dec.Close(func(e stream.Event) { a.Apply(e) }) // Gemini ends with a clean close
	fmt.Println(a.Thinking(), a.Text(), a.FinishReason(), a.Status())
	// Output:
	// Thinking… Blue. STOP complete
}
