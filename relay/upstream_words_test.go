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

// A non-streamed answer is held to the same watchdogs as a stream, and
// only a completion of the dialect's shape reaches the client: a silent,
// stalled, cut or foreign answer is a 502 in the relay's words, never a
// 200 with an empty or cut body, nor the upstream's page.
func TestANonStreamedAnswerIsBoundedAndOnlyACompletionGoesThrough(t *testing.T) {
	const quiet = `{"model":"m","stream":false,"messages":[{"role":"user","content":"hello"}]}`
	wait := func(r *http.Request) bool { <-r.Context().Done(); return false }
	cases := []struct {
		name   string
		script upstreamScript
		code   int
		words  string
	}{
		{"silent", func(w http.ResponseWriter, r *http.Request, _ int) bool { return wait(r) }, http.StatusBadGateway, "sent nothing within the first-token timeout"},
		{"stalled mid-body", func(w http.ResponseWriter, r *http.Request, _ int) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"choices":[`))
			http.NewResponseController(w).Flush()
			return wait(r)
		}, http.StatusBadGateway, "went silent past the idle timeout"},
		{"cut", func(w http.ResponseWriter, r *http.Request, _ int) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"choices":[{"message":{"content":"half an ans`))
			return true
		}, http.StatusBadGateway, "not a completion"},
		{"an HTML page", func(w http.ResponseWriter, r *http.Request, _ int) bool {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><body>Gateway portal at 10.0.0.5</body></html>`))
			return true
		}, http.StatusBadGateway, "not a completion"},
		{"foreign JSON", func(w http.ResponseWriter, r *http.Request, _ int) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"status":"queued","host":"10.0.0.5"}`))
			return true
		}, http.StatusBadGateway, "not a completion"},
		{"a completion", func(w http.ResponseWriter, r *http.Request, _ int) bool {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`))
			return true
		}, http.StatusOK, `"content":"Hi."`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.script)
			u := relay.Upstream{URL: f.url, Dialect: stream.DialectOpenAI, Key: "upstream-secret-key", Model: "real-model",
				FirstTokenTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond, TotalTimeout: time.Minute}
			_, base := start(t, relay.WithUpstream(u))
			resp := post(t, base+"/v1/chat/completions", quiet)
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, c.code, resp.StatusCode, "%s", b)
			require.Contains(t, string(b), c.words)
			require.NotContains(t, string(b), "10.0.0.5")
			require.NotContains(t, string(b), "half an ans")
		})
	}
}
