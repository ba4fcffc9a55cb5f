package browsertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// OpenAIAnswer is a backend of a page's own for browser tests, not the
// relay: on POST it streams text as OpenAI chat completion chunks, piece
// bytes an event, each flushed, 2 ms apart, then the finish reason and
// [DONE]. It cuts on bytes: give it ASCII text, or pieces that keep every
// character whole.
func OpenAIAnswer(text string, piece int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		rc := http.NewResponseController(w)
		for i := 0; i < len(text); i += piece {
			delta, _ := json.Marshal(text[i:min(len(text), i+piece)])
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", delta)
			_ = rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}
}
