//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// checkRequest is what the relay asks a hold-back checker.
type checkRequest struct {
	Sentence string `json:"sentence"`
	Context  string `json:"context"`
	StreamID string `json:"stream_id"`
}

// blockingChecker is a hold-back checker on loopback that records what it
// is asked and blocks the sentences containing word.
func blockingChecker(t *testing.T, word string) (url string, asked func(stream string) []checkRequest) {
	var mu sync.Mutex
	var got []checkRequest
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req checkRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]bool{"allow": !strings.Contains(req.Sentence, word)})
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func(stream string) []checkRequest {
		mu.Lock()
		defer mu.Unlock()
		var out []checkRequest
		for _, r := range got {
			if r.StreamID == stream {
				out = append(out, r)
			}
		}
		return out
	}
}

// The cleared sentences of the short answer: its third sentence says
// "depends".
const beforeDepends = "Hello! I am Trickle's **simulated model**: I stream canned answers, so the widget works without a key or a network."

// A relay with hold-back (the simulated checker, and a real one over
// HTTP) blocks the short answer's third sentence: the element shows the
// two before it, whole, and nothing of it or after; it shows and
// announces that the answer was withheld, and says so in trickle-error.
// The next answer, with nothing to block, streams whole.
func TestAWithheldAnswerShowsTheClearedSentencesAndSaysItWasWithheld(t *testing.T) {
	url, asked := blockingChecker(t, "depends")
	for _, c := range []struct {
		name string
		hold relay.HoldBack
	}{{"sim", relay.HoldBack{Sim: "block=depends"}}, {"http", relay.HoldBack{URL: url}}} {
		base := startRelay(relay.WithHoldBack(c.hold))
		for _, tr := range transports {
			t.Run(c.name+"/"+tr, func(t *testing.T) {
				ctx := tabAt(t, base)
				r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short&token_chars=4", "transport": tr}, "hello")
				require.Equal(t, "failed", r.Status)
				require.Equal(t, beforeDepends, strings.TrimSpace(r.Text), "the sentences before the blocked one, whole")
				require.NotContains(t, r.HTML, "depends", "nothing of the blocked sentence")
				require.NotContains(t, r.HTML, "code question", "nor after it")
				sameDOM(t, ctx, r.Text, r.HTML)
				require.True(t, r.NoticeShown)
				require.Equal(t, "This answer was withheld.", r.Notice)
				require.False(t, r.RetryShown, "asking again would be withheld again")
				require.Contains(t, r.StatusText, "This answer was withheld.", "the status region announces it")
				requireAnnounced(t, r)
				require.NotContains(t, strings.Join(r.Announced, " "), "depends")
				d := errorDetail(t, r)
				require.Equal(t, "withheld", d.Reason)
				require.Equal(t, "failed", r.Message.Status)
				require.Equal(t, "trickle-end", r.EventTypes[len(r.EventTypes)-1])
				var end struct {
					Detail struct {
						Status  string  `json:"status"`
						Message message `json:"message"`
					} `json:"detail"`
				}
				require.NoError(t, json.Unmarshal(r.Events[len(r.Events)-1], &end))
				require.Equal(t, "failed", end.Detail.Status)
				require.Equal(t, r.Text, end.Detail.Message.Content)

				resp, err := http.Get(base + "/v1/streams/" + r.StreamID + "/info")
				require.NoError(t, err)
				var in relay.Info
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
				resp.Body.Close()
				require.Equal(t, relay.StateWithheld, in.State)
				require.True(t, in.UpstreamCancelled, "the generation was cancelled")

				if c.name == "http" {
					reqs := asked(r.StreamID)
					require.Len(t, reqs, 3, "two sentences cleared, the third blocked")
					var text strings.Builder
					for i, q := range reqs {
						require.Equal(t, text.String(), q.Context, "check %d: once each, in order, with what came before", i)
						text.WriteString(q.Sentence)
					}
					require.Contains(t, reqs[2].Sentence, "depends")
					require.Equal(t, r.Text, reqs[2].Context, "the reader got exactly what was cleared")
				}

				r = ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=code&token_chars=4", "transport": tr}, "reverse a string in Go")
				require.Equal(t, "complete", r.Status, "notice: %s", r.Notice)
				require.Equal(t, canned(t, "code").Text, r.Text, "an answer with nothing to block streams whole")
				require.False(t, r.NoticeShown)
				if c.name == "http" {
					reqs := asked(r.StreamID)
					require.NotEmpty(t, reqs)
					var text strings.Builder
					for _, q := range reqs {
						text.WriteString(q.Sentence)
					}
					require.Equal(t, strings.TrimSpace(r.Text), text.String(), "every sentence of it was checked")
				}
			})
		}
	}
}
