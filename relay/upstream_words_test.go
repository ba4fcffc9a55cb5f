package relay_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// leak is what a hostile or careless upstream puts in its error event:
// an internal address and an echo of the key.
const leak = "http://10.0.0.5:8000/v1 rejected key upstream-secret-key"

// Only the relay's words reach a client: an upstream's own error event, in
// its dialect's shape, is never relayed (the log has it); the stream ends
// with the relay's failure, over SSE and over the WebSocket alike. An
// upstream's trickle.* event, the relay's own vocabulary, is dropped and
// the answer goes on.
func TestAnUpstreamsErrorEventAndTrickleEventsNeverReachAClient(t *testing.T) {
	openaiErr := "data: {\"error\":{\"message\":\"" + leak + "\",\"type\":\"server_error\"}}\n\n"
	anthropicErr := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"" + leak + "\"}}\n\n"
	ollamaErr := "{\"error\":\"" + leak + "\"}\n"
	cases := []struct {
		dialect stream.Dialect
		ctype   string
		bad     string
	}{
		{stream.DialectOpenAI, "text/event-stream", openaiErr},
		{stream.DialectAnthropic, "text/event-stream", anthropicErr},
		{stream.DialectOllama, "application/x-ndjson", ollamaErr},
	}
	for _, c := range cases {
		for _, transport := range []string{"sse", "websocket"} {
			t.Run(string(c.dialect)+"/"+transport, func(t *testing.T) {
				f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
					evs := simEvents(c.dialect, "short")
					return play(w, r, c.ctype, append(evs[:3:3], c.bad), time.Millisecond)
				})
				base := upstreamRelay(t, f, c.dialect)
				var got []sse.Event
				var id string
				if transport == "sse" {
					resp := post(t, base+"/v1/chat/completions", hello)
					id = resp.Header.Get("X-Trickle-Stream")
					var err error
					got, err = events(resp.Body)
					require.NoError(t, err)
				} else {
					msgs, _ := wsMessages(t, wsDial(t, base, "", hello))
					got = wsEvents(t, msgs)
				}
				var all strings.Builder
				for _, ev := range got {
					all.WriteString(ev.Type + " " + ev.Data + "\n")
				}
				require.NotContains(t, all.String(), "10.0.0.5", "the upstream's words never reach the client")
				require.NotContains(t, all.String(), "upstream-secret-key")
				require.Contains(t, all.String(), "relay: the model's service", "the relay's own words say what happened")
				if id != "" {
					require.Equal(t, relay.StateFailed, info(t, base, id).State)
				}
			})
		}
	}

	t.Run("trickle.status from the upstream", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
			evs := simEvents(stream.DialectOpenAI, "short")
			forged := string(sse.AppendMessage(nil, sse.Message{Event: "trickle.status", Data: `{"status":"stopped","message":"forged"}`}))
			out := append(append(evs[:3:3], forged), evs[3:]...)
			return play(w, r, "text/event-stream", out, time.Millisecond)
		})
		base := upstreamRelay(t, f, stream.DialectOpenAI)
		resp := post(t, base+"/v1/chat/completions", hello)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NotContains(t, string(body), "forged")
		require.Equal(t, relay.StateComplete, info(t, base, resp.Header.Get("X-Trickle-Stream")).State, "the answer went on to its end")
	})
}
