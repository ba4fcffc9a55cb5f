package element_test

import (
	"fmt"
	"time"

	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wasm/element"
)

// A Session is the widget without the browser: bytes in, patches out. The
// DOM layer inserts Append before the live tail and replaces the tail; at
// the end, the tail on screen already shows the last block, so the final
// frame keeps its nodes (Unwrap) instead of sending the same HTML again.
func ExampleSession() {
	s, err := element.NewSession(element.Config{Announce: "off", Policy: render.Policy{SameOrigin: "https://app.test"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var stream []byte
	for i, delta := range []string{"Hello, ", "**world**.\n\nBye"} {
		stream = sse.AppendMessage(stream, sse.Message{
			ID:   fmt.Sprintf("s1:%d", i+1),
			Data: fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":%q}}]}`, delta),
		})
	}
	stream = sse.AppendMessage(stream, sse.Message{ID: "s1:3", Data: "[DONE]"})

	_ = s.Write(stream)
	p := s.Frame()
	fmt.Printf("append %q\ntail %q\n", p.Append, p.Tail)
	s.End(nil)
	p = s.Frame()
	fmt.Printf("append %q final %v unwrap %v\n", p.Append, p.Final, p.Unwrap)
	fmt.Println(s.Status(), element.StreamID(s.LastEventID()))
	// Output:
	// append "<p dir=\"auto\">Hello, <strong>world</strong>.</p>\n"
	// tail "<p dir=\"auto\">Bye</p>\n"
	// append "" final true unwrap true
	// complete s1
}

// The reconnection delay doubles from the server's retry: value.
func ExampleBackoff_Delay() {
	for n := 0; n < 4; n++ {
		d, ok := element.DefaultBackoff.Delay(n, 500*time.Millisecond)
		fmt.Println(d, ok)
	}
	// Output:
	// 500ms true
	// 1s true
	// 2s true
	// 4s true
}
