package relay_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/stream"
)

// The admission decodes a request's body once, whichever way it comes:
// the policy, the request the simulated model reads and the body an
// upstream is sent all come from that one decode. Its messages too are
// decoded once by the policy, though two of its rules read them (the
// fields that pass, and the characters under WithMaxInputChars).
func TestTheRequestBodyIsDecodedOnceOverSSEAndWebSocket(t *testing.T) {
	srv, base := startMemory(t, relay.WithMaxInputChars(10_000))
	decodes := func(body, messages int64, what string) {
		t.Helper()
		require.EqualValues(t, body, srv.BodyDecodes(), what)
		require.EqualValues(t, messages, srv.MessagesDecodes(), "%s: the messages", what)
	}
	resp := post(t, base+"/v1/chat/completions", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	decodes(1, 1, "SSE")

	msgs, _ := wsMessages(t, wsDial(t, base, "", hello))
	require.NotEmpty(t, wsEvents(t, msgs))
	decodes(2, 2, "WebSocket")

	once := post(t, base+"/v1/chat/completions", `{"messages":[{"role":"user","content":"hello"}]}`)
	require.Equal(t, http.StatusOK, once.StatusCode)
	decodes(3, 3, "one JSON answer")

	refused := post(t, base+"/v1/chat/completions", `{"messages":"hello"}`)
	require.Equal(t, http.StatusBadRequest, refused.StatusCode)
	decodes(4, 4, "a refused body")

	long := post(t, base+"/v1/chat/completions", `{"messages":[{"role":"user","content":"`+strings.Repeat("x", 10_001)+`"}]}`)
	require.Equal(t, http.StatusBadRequest, long.StatusCode, "over WithMaxInputChars")
	decodes(5, 5, "a conversation too long")

	// A WebSocket's first message is decoded once too, whether it is a
	// request or a resume (which has no messages).
	resumed, _ := wsMessages(t, wsDial(t, base, "", `{"type":"resume","stream":"nope","last_event_id":"nope:1"}`))
	require.NotEmpty(t, resumed)
	decodes(6, 5, "a WebSocket resume")
}

// An OpenAI upstream is sent the client's members as the client wrote
// them: a seed past float64's exact integers arrives to the digit (a
// second decode through map[string]any rounded it).
func TestAnOpenAIUpstreamGetsTheClientsMembersFromTheOneDecode(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("openai", "thinking"), time.Millisecond)
	})
	u := relay.Upstream{URL: f.url, Dialect: stream.DialectOpenAI, Model: "real-model",
		FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, TotalTimeout: 10 * time.Second}
	srv, base := startMemory(t, relay.WithUpstream(u))
	const body = `{"stream":true,"seed":9007199254740993,"temperature":0.50,"messages":[{"role":"user","content":"hello"}]}`
	resp := post(t, base+"/v1/chat/completions", body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.EqualValues(t, 1, srv.BodyDecodes())
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.raw, 1)
	require.Contains(t, f.raw[0], `"seed":9007199254740993`)
	require.Contains(t, f.raw[0], `"temperature":0.50`)
	require.Contains(t, f.raw[0], `"model":"real-model"`)
	require.Contains(t, f.raw[0], `"stream_options":{"include_usage":true}`)
}
