package streamlog

import (
	"encoding/json"
	"time"

	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/stream"
)

// StatusData is the JSON data of a trickle.status event: the status word
// and the message the widget reads, and the same as an OpenAI-style
// "error" object, which the official SDKs raise on (they take any data
// event with an error for the provider's): a stream that was stopped,
// failed or is gone never ends like a complete one in SDK code. u, when
// not nil, is what was generated up to the end.
func StatusData(status stream.RelayStatus, message string, u *store.Usage) string {
	type apiError struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	}
	b, _ := json.Marshal(struct {
		Status  stream.RelayStatus `json:"status"`
		Message string             `json:"message"`
		Error   apiError           `json:"error"`
		Usage   *store.Usage       `json:"usage,omitempty"`
	}{status, message, apiError{Message: message, Type: "trickle_status", Code: string(status)}, u})
	return string(b)
}

// Info is the JSON answer of GET /v1/streams/{id}/info.
type Info struct {
	ID                string `json:"id"`
	State             string `json:"state"`
	Events            int    `json:"events"`
	UpstreamCancelled bool   `json:"upstream_cancelled"`
	Readers           int    `json:"readers"`
	Message           string `json:"message,omitempty"`
	// Created is when the generation started: the simulated model's
	// timings count from it (the load generator measures added latency
	// against it).
	Created time.Time `json:"created"`
	// Usage is what was generated so far: exact for the simulated model,
	// estimated (one token an event) for a real upstream's. On an instance
	// following the stream from the store it is known once the stream
	// ended.
	Usage store.Usage `json:"usage"`
}

// Info is the stream's state now.
func (l *Log) Info() Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Info{ID: l.id, State: l.state, Events: len(l.ends), UpstreamCancelled: l.upstreamCancelled,
		Readers: l.readers, Message: l.message, Created: l.created, Usage: l.usageLocked()}
}
