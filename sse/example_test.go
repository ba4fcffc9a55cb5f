package sse_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/trickle-dev/trickle/sse"
)

// Feed the parser bytes as the network delivers them, cut anywhere.
func ExampleParser() {
	p, err := sse.NewParser(sse.HandlerFunc(func(e sse.Event) {
		fmt.Printf("%s %q id=%q\n", e.Type, e.Data, e.LastEventID)
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, chunk := range []string{"id: 1\nda", "ta: hel", "lo\r", "\n\r\nevent: done\ndata: \xE2", "\x9C\x93\n\n"} {
		if _, err := p.Write([]byte(chunk)); err != nil {
			fmt.Println(err)
		}
	}
	if err := p.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// message "hello" id="1"
	// done "✓" id="1"
}

// Close tells a clean end from a stream cut in the middle of an event.
func ExampleParser_Close() {
	p, err := sse.NewParser(sse.HandlerFunc(func(e sse.Event) { fmt.Println("event:", e.Data) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = p.Write([]byte("data: complete\n\ndata: cut off mid-ev"))
	err = p.Close()
	fmt.Println(errors.Is(err, sse.ErrIncomplete))
	// Output:
	// event: complete
	// true
}

// Pull events one by one from any io.Reader, such as an HTTP response body.
func ExampleDecoder() {
	body := strings.NewReader(": comment\nretry: 3000\ndata: {\"delta\":\"Hi\"}\n\ndata: [DONE]\n\n")
	d, err := sse.NewDecoder(body, sse.WithMaxEventSize(64<<10))
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		e, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Println(e.Data)
	}
	retry, _ := d.Retry()
	fmt.Println("retry:", retry)
	// Output:
	// {"delta":"Hi"}
	// [DONE]
	// retry: 3s
}

// An option value that cannot work is refused, by name.
func ExampleNewDecoder_badOption() {
	_, err := sse.NewDecoder(strings.NewReader(""), sse.WithMaxEventSize(0))
	fmt.Println(err)
	fmt.Println(errors.Is(err, sse.ErrBadOption))
	// Output:
	// sse: bad option: WithMaxEventSize(0): the limit must be positive
	// true
}

// The encoder writes one event per call and flushes it.
func ExampleEncoder() {
	e := sse.NewEncoder(os.Stdout)
	_ = e.Encode(sse.Message{ID: "s1:1", Event: "delta", Data: "line one\nline two"})
	_ = e.Comment("keep-alive")
	// Output:
	// event: delta
	// id: s1:1
	// data: line one
	// data: line two
	//
	// : keep-alive
}

func ExampleAppendMessage() {
	b := sse.AppendMessage(nil, sse.Message{Data: "hello"})
	fmt.Printf("%q\n", b)
	// Output: "data: hello\n\n"
}

// EventSource only reads a response whose Content-Type is text/event-stream.
func ExampleIsEventStream() {
	fmt.Println(sse.IsEventStream("text/event-stream; charset=utf-8"))
	fmt.Println(sse.IsEventStream("application/x-ndjson"))
	// Output:
	// true
	// false
}

// After a dropped connection, reconnect with Last-Event-ID and keep reading
// with the same Decoder.
func ExampleDecoder_Reset() {
	d, err := sse.NewDecoder(strings.NewReader("id: 1\ndata: one\n\ndata: tw"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		e, err := d.Next()
		if err != nil {
			fmt.Println("dropped:", errors.Is(err, sse.ErrIncomplete), "resume after", d.LastEventID())
			break
		}
		fmt.Println(e.Data, e.LastEventID)
	}
	// The server resends from after event 1.
	d.Reset(strings.NewReader("data: two\n\n"))
	e, _ := d.Next()
	fmt.Println(e.Data, e.LastEventID)
	// Output:
	// one 1
	// dropped: true resume after 1
	// two 1
}

// printer is a DropHandler: it hears the oversize events where they were.
type printer struct{}

func (printer) Event(e sse.Event) { fmt.Printf("event %q\n", e.Data) }
func (printer) Retry(int)         {}
func (printer) Dropped(err error) { fmt.Println("dropped:", errors.Is(err, sse.ErrEventTooLarge)) }

// A DropHandler learns of every dropped event in its place among the others.
func ExampleDropHandler() {
	p, err := sse.NewParser(printer{}, sse.WithMaxEventSize(16))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = p.Write([]byte("data: a\n\ndata: far too long for the bound\n\ndata: b\n\n"))
	fmt.Println("Write:", err != nil)
	// Output:
	// event "a"
	// dropped: true
	// event "b"
	// Write: true
}
