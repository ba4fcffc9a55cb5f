package streamlog

import (
	"encoding/json"

	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wire"
)

// AppendProviderEnd appends to b, after a terminal trickle.status event of
// a stream in dialect, the ending that dialect's own SDKs raise on, where
// the status event alone is not one: Anthropic's SDKs ignore event types
// they do not know, so an Anthropic stream that was stopped, failed or is
// gone also gets Anthropic's "error" event. It goes in the same log entry
// as the status, without an id of its own, so a resume sends both and the
// widget, which reads the typed status first, takes the error as its
// trailer. Other dialects' SDKs read the status's "error" object
// (StatusData); for them b is returned as it is.
func AppendProviderEnd(b []byte, dialect string, status wire.Status, message string) []byte {
	if dialect != stream.DialectAnthropic.String() {
		return b
	}
	typ := "api_error"
	if status != wire.StatusFailed {
		typ = "trickle_" + string(status) // stopped, cancelled, gone: no Anthropic type says so
	}
	type apiError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	data, _ := json.Marshal(struct {
		Type  string   `json:"type"`
		Error apiError `json:"error"`
	}{"error", apiError{typ, message}})
	return sse.AppendMessage(b, sse.Message{Event: "error", Data: string(data)})
}
