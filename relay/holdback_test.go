package relay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/stream"
)

// recordingChecker is a hold-back checker on loopback that records every
// request and blocks sentences containing block ("" blocks none).
func recordingChecker(t *testing.T, block string) (string, func() []map[string]string) {
	var mu sync.Mutex
	var got []map[string]string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]string
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		allow := block == "" || !strings.Contains(req["sentence"], block)
		json.NewEncoder(w).Encode(map[string]bool{"allow": allow})
	}))
	t.Cleanup(ts.Close)
	return ts.URL, func() []map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]string(nil), got...)
	}
}

func TestHoldBackAllowedAnswerArrivesWholeAndEachSentenceIsCheckedOnceInOrder(t *testing.T) {
	url, got := recordingChecker(t, "")
	_, plain := start(t)
	_, held := start(t, relay.WithHoldBack(relay.HoldBack{URL: url}))
	_, want := reference(t, plain, shortQuery)
	_, evs := reference(t, held, shortQuery)
	same(t, want, evs, "hold-back changes nothing of an allowed answer")
	reqs := got()
	require.Greater(t, len(reqs), 3)
	var text strings.Builder
	for i, r := range reqs {
		require.Equal(t, text.String(), r["context"], "request %d: the context is every sentence before it", i)
		text.WriteString(r["sentence"])
	}
	body := strings.Builder{}
	for _, ev := range evs {
		body.WriteString("data: " + ev.Data + "\n\n")
	}
	require.Equal(t, strings.TrimSpace(answerOf(t, "openai", []byte(body.String())).Text()), text.String(), "the sentences are the answer (a blank tail needs no check)")
	resp := get(t, held+"/metrics")
	m, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(m), `trickle_hold_back_total{verdict="allow"} `+itoa(len(reqs)))
}

func TestHoldBackBlockedSentenceWithholdsItAndTheRest(t *testing.T) {
	url, got := recordingChecker(t, "depends")
	for name, h := range map[string]relay.HoldBack{"http": {URL: url}, "sim": {Sim: "block=DEPENDS"}} {
		t.Run(name, func(t *testing.T) {
			_, base := start(t, relay.WithHoldBack(h))
			resp := post(t, base+"/v1/chat/completions?dialect=openai&answer=short&token_chars=1", hello)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			a := answerOf(t, "openai", body)
			require.ErrorIs(t, a.Err(), stream.ErrWithheld)
			require.Contains(t, string(body), stream.WithheldMessage)
			require.Contains(t, a.Text(), "Hello!")
			require.NotContains(t, a.Text(), "depends")
			require.NotContains(t, a.Text(), "code question")
			in := info(t, base, resp.Header.Get("X-Trickle-Stream"))
			require.Equal(t, relay.StateWithheld, in.State)
			require.True(t, in.UpstreamCancelled, "the generation is cancelled")
			if name == "http" {
				reqs := got()
				require.Equal(t, a.Text(), reqs[len(reqs)-1]["context"], "clients got every sentence before the blocked one")
			}
		})
	}
}

func TestHoldBackOptionsAreChecked(t *testing.T) {
	for _, h := range []relay.HoldBack{{}, {URL: "ftp://x"}, {URL: "http://x", Sim: "block=a"}, {Sim: "x"}, {URL: "http://x", OnError: "maybe"}, {URL: "http://x", Timeout: -1}} {
		_, err := relay.New(relay.WithHoldBack(h))
		require.ErrorIs(t, err, relay.ErrBadOption)
		require.Contains(t, err.Error(), "WithHoldBack")
	}
}

// The official openai package raises on a withheld answer, naming it.
func TestTheOpenAISDKRaisesOnAWithheldAnswer(t *testing.T) {
	read := openAISDK(t)
	_, base := start(t, relay.WithHoldBack(relay.HoldBack{Sim: "block=depends"}))
	e := read(base, "answer=short", 0)
	require.True(t, e.Threw, "a withheld answer does not end like a complete one: %+v", e)
	require.Equal(t, "withheld", e.Error.Code)
	require.Contains(t, e.Error.Message, stream.WithheldMessage)
	require.True(t, strings.HasSuffix(e.Text, "or a network."), "the chunks before it carry the cleared sentences whole: %q", e.Text)
	require.NotContains(t, e.Text, "depends")
}

// A checker that fails means what --hold-back-on-error says: allow lets
// the whole answer through, block withholds it from the first sentence.
func TestHoldBackCheckerErrorsFollowOnError(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)
	_, plain := start(t)
	_, want := reference(t, plain, shortQuery)
	_, allow := start(t, relay.WithHoldBack(relay.HoldBack{URL: failing.URL, OnError: "allow"}))
	_, got := reference(t, allow, shortQuery)
	same(t, want, got, "on-error allow: the whole answer")
	m, _ := io.ReadAll(get(t, allow+"/metrics").Body)
	require.NotContains(t, string(m), `trickle_hold_back_total{verdict="error"} 0`)

	_, block := start(t, relay.WithHoldBack(relay.HoldBack{URL: failing.URL}))
	resp := post(t, block+"/v1/chat/completions"+shortQuery, hello)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answerOf(t, "openai", body)
	require.ErrorIs(t, a.Err(), stream.ErrWithheld)
	require.Empty(t, a.Text(), "nothing of the unchecked answer")
}
