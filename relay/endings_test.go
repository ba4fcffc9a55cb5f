package relay_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// anthropicError is the data of Anthropic's "error" event.
type anthropicError struct {
	Type  string
	Error struct{ Type, Message string }
}

// An Anthropic stream that does not complete ends with Anthropic's own
// "error" event, which Anthropic's SDKs raise on (they skip event types
// they do not know, the relay's trickle.status among them): after the
// typed status when the relay ended it (Stop), as the dialect's failure
// when the upstream failed. The widget's pipeline reads the status first
// and takes the error as its trailer: no skip. A resume from before the
// end gets the same end.
func TestAnAnthropicStreamThatDoesNotCompleteEndsWithAnthropicsErrorEvent(t *testing.T) {
	_, sim := start(t)
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("anthropic", "short")[:4], time.Millisecond) // then closes: no message_stop
	})
	up := upstreamRelay(t, f, "anthropic")
	for _, tc := range []struct {
		name, base, query string
		stop              bool
		status            stream.Status
		word, typ         string
	}{
		{"stopped", sim, "dialect=anthropic&answer=sample-20k&gap_ms=5&ttft_ms=0&jitter_ms=0", true, stream.Stopped, "stopped", "trickle_stopped"},
		// The relay fails it with the dialect's own error event.
		{"an upstream that died mid-answer", up, "", false, stream.Failed, "", "api_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := tc.base
			resp, cancel := openSSE(t, http.MethodPost, base+"/v1/chat/completions?"+tc.query, hello, "")
			defer cancel()
			id := resp.Header.Get("X-Trickle-Stream")
			var raw []byte
			dec := decoder(t, resp.Body)
			var evs []sse.Event
			for {
				ev, err := dec.Next()
				if err != nil {
					break
				}
				evs = append(evs, ev)
				raw = sse.AppendMessage(raw, sse.Message{ID: ev.LastEventID, Event: ev.Type, Data: ev.Data})
				if tc.stop && len(evs) == 3 {
					require.Equal(t, http.StatusOK, del(t, base+"/v1/streams/"+id).StatusCode)
				}
			}
			require.GreaterOrEqual(t, len(evs), 2)
			end := evs[len(evs)-2:]
			if tc.word != "" {
				require.Equal(t, relay.StatusEvent, end[0].Type, "the typed status first")
				var st struct{ Status string }
				require.NoError(t, json.Unmarshal([]byte(end[0].Data), &st))
				require.Equal(t, tc.word, st.Status)
				require.Equal(t, end[0].LastEventID, end[1].LastEventID, "the error has no id of its own: one entry with the status")
			}
			errEv := end[1]
			if errEv.Type != "error" {
				errEv = end[0] // the dialect's failure: error, then message_stop
				require.Equal(t, "message_stop", end[1].Type)
			}
			require.Equal(t, "error", errEv.Type, "Anthropic's error event ends it")
			var ae anthropicError
			require.NoError(t, json.Unmarshal([]byte(errEv.Data), &ae))
			require.Equal(t, "error", ae.Type)
			require.Equal(t, tc.typ, ae.Error.Type)
			require.NotEmpty(t, ae.Error.Message)
			require.NotContains(t, errEv.Data, f.url, "no upstream URL reaches the client")

			a := answerOf(t, stream.DialectAnthropic, raw)
			require.Equal(t, tc.status, a.Status(), "the widget reads the typed status")
			require.Zero(t, a.Skipped(), "and takes Anthropic's error as the status's trailer: %v", a.Problems())

			before := evs[len(evs)-3].LastEventID
			again, err := events(get(t, base+"/v1/streams/"+id, "Last-Event-ID", before).Body)
			require.NoError(t, err)
			require.Len(t, again, 2)
			require.Equal(t, []string{end[0].Type, end[1].Type}, []string{again[0].Type, again[1].Type}, "a resume from before the end gets the same end")
		})
	}
}

// Other dialects end with the status alone (their SDKs read its error
// object).
func TestAnOpenAIStreamThatIsStoppedEndsWithTheStatusAlone(t *testing.T) {
	_, base := start(t)
	resp, cancel := openSSE(t, http.MethodPost, base+"/v1/chat/completions?dialect=openai&answer=sample-20k&gap_ms=5&ttft_ms=0&jitter_ms=0", hello, "")
	defer cancel()
	id := resp.Header.Get("X-Trickle-Stream")
	dec := decoder(t, resp.Body)
	var last sse.Event
	for n := 1; ; n++ {
		ev, err := dec.Next()
		if err != nil {
			break
		}
		last = ev
		if n == 3 {
			require.Equal(t, http.StatusOK, del(t, base+"/v1/streams/"+id).StatusCode)
		}
	}
	require.Equal(t, relay.StatusEvent, last.Type)
}

// A lapsed lease ends an Anthropic stream the same way on the relays that
// follow it: the status, then Anthropic's error.
func TestAnAnthropicStreamWhoseGeneratorDiedEndsWithAnthropicsErrorEvent(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 2)
	a, b := nodes[0], nodes[1]
	resp, cancelA := openSSE(t, http.MethodPost, a.base+"/v1/chat/completions?dialect=anthropic&answer=sample-100k&gap_ms=5", hello, "")
	defer cancelA()
	id := resp.Header.Get("X-Trickle-Stream")
	first := readSSE(t, resp, 3, func() {})
	onB, cancelB := openSSE(t, http.MethodGet, b.base+"/v1/streams/"+id, "", first[2].LastEventID)
	defer cancelB()
	dec := decoder(t, onB.Body)
	_, err := dec.Next()
	require.NoError(t, err)
	a.srv.Crash()
	var tail []sse.Event
	for {
		ev, err := dec.Next()
		if err != nil {
			break
		}
		tail = append(tail, ev)
	}
	require.GreaterOrEqual(t, len(tail), 2)
	end := tail[len(tail)-2:]
	require.Equal(t, []string{relay.StatusEvent, "error"}, []string{end[0].Type, end[1].Type})
	var ae anthropicError
	require.NoError(t, json.Unmarshal([]byte(end[1].Data), &ae))
	require.Equal(t, "api_error", ae.Error.Type)
	require.Contains(t, ae.Error.Message, "the relay generating this answer stopped")
}
