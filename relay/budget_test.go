package relay_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// capped is an upstream that honours the request's max_tokens: it
// answers with that many one-token deltas (or tokens, when set), reports
// the usage, and holds each answer until hold is closed.
func capped(tokens int, hold <-chan struct{}) upstreamScript {
	return func(w http.ResponseWriter, r *http.Request, _ int) bool {
		select {
		case <-hold:
		case <-r.Context().Done():
			return false
		}
		n := tokens
		var evs []string
		for range n {
			evs = append(evs, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}`+"\n\n")
		}
		evs = append(evs, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n",
			fmt.Sprintf(`data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":%d,"total_tokens":%d}}`, n, n+1)+"\n\n",
			"data: [DONE]\n\n")
		return play(w, r, "text/event-stream", evs, 0)
	}
}

func budgetUpstream(f *fakeUpstream) relay.Upstream {
	return relay.Upstream{URL: f.url, Dialect: "openai", Key: "sk-operator", Model: "m",
		FirstTokenTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second, TotalTimeout: 60 * time.Second}
}

// race sends n requests at once, spread over the relays at bases, and
// waits until each was refused or reached the upstream before the
// upstream answers any; it returns how many were refused for the budget.
func race(t *testing.T, f *fakeUpstream, hold chan struct{}, n int, bases ...string) int {
	t.Helper()
	var refused, other atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(bases[i%len(bases)]+"/v1/chat/completions", "application/json", strings.NewReader(hello))
			if err != nil {
				other.Add(1)
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				b, _ := io.ReadAll(resp.Body)
				if strings.Contains(string(b), "token_budget_exhausted") {
					refused.Add(1)
					return
				}
			}
			if resp.StatusCode != http.StatusOK {
				other.Add(1)
			}
			io.Copy(io.Discard, resp.Body)
		}()
	}
	// Waited for without a clock of its own beyond a generous bound: a
	// loaded machine may take long to start 12 requests.
	for deadline := time.Now().Add(time.Minute); int(refused.Load())+int(f.requests.Load())+int(other.Load()) < n; {
		if time.Now().After(deadline) {
			close(hold)
			t.Fatalf("after a minute %d requests were refused, %d reached the upstream and %d failed otherwise, of %d", refused.Load(), f.requests.Load(), other.Load(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(hold)
	wg.Wait()
	require.Zero(t, other.Load(), "every request was admitted or refused for the budget")
	return int(refused.Load())
}

// Issue 36: a 30-token budget allowed 240 tokens from 12 parallel
// requests, since a generation counted only when it ended. Each request
// now holds its output cap (here the relay's --max-tokens) against the
// day at admission, so 12 parallel requests cannot spend more than the
// budget and one request's cap.
func TestParallelRequestsCannotSpendMoreThanTheBudgetAndOneCap(t *testing.T) {
	hold := make(chan struct{})
	f := newFake(t, capped(20, hold))
	_, base := startMemory(t, relay.WithUpstream(budgetUpstream(f)), relay.WithTokensPerDay(30), relay.WithMaxTokens(20))
	refused := race(t, f, hold, 12, base)
	spent := 20 * int(f.requests.Load())
	require.LessOrEqual(t, spent, 30+20, "%d requests reached the upstream", f.requests.Load())
	require.Equal(t, 12-int(f.requests.Load()), refused)
	eventually(t, "the budget to be settled", func() bool {
		resp := post(t, base+"/v1/chat/completions", hello)
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusTooManyRequests && strings.Contains(string(b), fmt.Sprintf("has generated %d today", spent))
	})
}

// The same in a fleet sharing a Redis store: the reservation is one
// script, so the relays cannot all pass the check before any holds.
func TestParallelRequestsAcrossAFleetCannotSpendMoreThanTheBudgetAndOneCap(t *testing.T) {
	r := startRedis(t)
	hold := make(chan struct{})
	f := newFake(t, capped(20, hold))
	pair := fleet(t, r, 2, relay.WithUpstream(budgetUpstream(f)), relay.WithTokensPerDay(30), relay.WithMaxTokens(20))
	race(t, f, hold, 12, pair[0].base, pair[1].base)
	require.LessOrEqual(t, 20*int(f.requests.Load()), 30+20, "%d requests reached the upstream", f.requests.Load())
}

// What a request held at admission is given back when it ends: a
// generation that used 5 of its 20 tokens costs 5, so six of them fit
// a 30-token day, and the seventh is refused.
func TestTheReservationIsSettledToWhatTheGenerationCost(t *testing.T) {
	hold := make(chan struct{})
	close(hold)
	f := newFake(t, capped(5, hold))
	_, base := startMemory(t, relay.WithUpstream(budgetUpstream(f)), relay.WithTokensPerDay(30), relay.WithMaxTokens(20))
	for i := range 6 {
		eventually(t, fmt.Sprintf("request %d to be admitted", i+1), func() bool {
			resp := post(t, base+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	require.Equal(t, int32(6), f.requests.Load(), "no request was refused while the day had room")
	eventually(t, "the day to be spent", func() bool {
		resp := post(t, base+"/v1/chat/completions", hello)
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusTooManyRequests && strings.Contains(string(b), "has generated 30 today")
	})
}

// An upstream that reports no usage is not free (issue 36: a stream:false
// answer without usage counted 0 tokens): its tokens are estimated from
// its bytes, a token per four, on both kinds of answer.
func TestAnAnswerWithoutUsageIsEstimatedFromItsBytes(t *testing.T) {
	text := strings.Repeat("word ", 800) // 4,000 bytes: about 1,000 tokens
	t.Run("stream:false", func(t *testing.T) {
		body := `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` + text + `"},"finish_reason":"stop"}]}`
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
			return true
		})
		base := limitedRelay(t, f, relay.WithTokensPerDay(500))
		once := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
		resp := post(t, base+"/v1/chat/completions", once)
		io.Copy(io.Discard, resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		requireOverLimit(t, post(t, base+"/v1/chat/completions", once), "token_budget_exhausted",
			fmt.Sprintf("has generated %d today", (len(body)+3)/4), 24*60*60)
	})
	t.Run("streamed in one event", func(t *testing.T) {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
			return play(w, r, "text/event-stream", []string{
				`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + text + `"}}]}` + "\n\n",
				`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n",
				"data: [DONE]\n\n"}, 0)
		})
		base := limitedRelay(t, f, relay.WithTokensPerDay(500))
		resp := post(t, base+"/v1/chat/completions", hello)
		id := resp.Header.Get("X-Trickle-Stream")
		io.Copy(io.Discard, resp.Body)
		eventually(t, "the stream to end", func() bool { return infoAs(t, base, id, "").State == relay.StateComplete })
		require.Equal(t, relay.Usage{CompletionTokens: 1000, Estimated: true}, infoAs(t, base, id, "").Usage)
		requireOverLimit(t, post(t, base+"/v1/chat/completions", hello), "token_budget_exhausted", "has generated 1000 today", 24*60*60)
	})
}
