// Package paced is the benchmarks' model: an answer written as OpenAI
// chat-completion chunks at a steady rate of tokens, over SSE. bench/browser
// and bench/memory stream every renderer from it, and serve the page side's
// plain client (bench/internal/page/sse.js) at /shared/.
package paced

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Tokens cuts answer into tokens of chars characters (runes).
func Tokens(answer string, chars int) []string {
	runes := []rune(answer)
	var tokens []string
	for i := 0; i < len(runes); i += chars {
		tokens = append(tokens, string(runes[i:min(i+chars, len(runes))]))
	}
	return tokens
}

// Serve writes tokens as OpenAI chat-completion chunks, rate tokens per
// second: on each tick of a 1/rate timer it writes every token that is due
// by then, so the average rate holds whatever the timer's granularity. It
// ends with a chunk whose finish_reason is stop, then [DONE]; it returns
// early when the request's context ends. sent (may be nil) is called after
// each flush with the tokens [from, to) it carried and when it was flushed.
func Serve(w http.ResponseWriter, r *http.Request, tokens []string, rate float64, sent func(from, to int, at time.Time)) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher := w.(http.Flusher)
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	done := 0
	var buf []byte
	for done < len(tokens) {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		due := min(len(tokens), int(time.Since(start).Seconds()*rate)+1)
		buf = buf[:0]
		from := done
		for ; done < due; done++ {
			buf = chunk(buf, tokens[done])
		}
		if len(buf) > 0 {
			if _, err := w.Write(buf); err != nil {
				return
			}
			flusher.Flush()
			if sent != nil {
				sent(from, done, time.Now())
			}
		}
	}
	fmt.Fprint(w, "data: {\"id\":\"bench\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	flusher.Flush()
}

// chunk appends the SSE event of one content delta to buf.
func chunk(buf []byte, content string) []byte {
	data, _ := json.Marshal(map[string]any{
		"id": "bench", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": content}}},
	})
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

// Shared serves bench/internal/page (the page side's shared modules) at
// /shared/ on mux; the benchmarks run from the repository's root.
func Shared(mux *http.ServeMux) {
	mux.Handle("/shared/", http.StripPrefix("/shared/", http.FileServer(http.Dir("bench/internal/page"))))
}
