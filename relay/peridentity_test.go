package relay_test

// Limits per identity, in the hostile-client suite's manner: a relay in
// front of a recording upstream, clients that ask for more than their
// share, and for each refusal its status, its Retry-After, its body and
// what the upstream received (nothing).

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// overLimit is the body of a limit's 429.
type overLimit struct {
	Error struct {
		Message   string `json:"message"`
		Type      string `json:"type"`
		Code      string `json:"code"`
		RequestID string `json:"request_id"`
	} `json:"error"`
}

// requireOverLimit checks a refusal by a limit: 429, Retry-After in
// whole seconds between 1 and maxRetry, the limit's code, a message
// saying says, and the request's id.
func requireOverLimit(t *testing.T, resp *http.Response, code, says string, maxRetry int) overLimit {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", b)
	retry, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After %q is whole seconds", resp.Header.Get("Retry-After"))
	require.GreaterOrEqual(t, retry, 1)
	require.LessOrEqual(t, retry, maxRetry)
	var o overLimit
	require.NoError(t, json.Unmarshal(b, &o), "%s", b)
	require.Equal(t, code, o.Error.Code)
	require.Equal(t, "rate_limit_exceeded", o.Error.Type)
	require.Contains(t, o.Error.Message, says)
	require.NotEmpty(t, o.Error.RequestID)
	require.Equal(t, resp.Header.Get("X-Request-Id"), o.Error.RequestID)
	return o
}

// limitedRelay starts a relay in memory (the limits of a test must not be
// shared with another's through the package's Redis) in front of f.
func limitedRelay(t *testing.T, f *fakeUpstream, opts ...relay.Option) string {
	t.Helper()
	// Generous timeouts: a loaded machine must not end a generation the
	// test holds running.
	u := relay.Upstream{URL: f.url, Dialect: "openai", Key: "sk-operator", Model: "m",
		FirstTokenTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second, TotalTimeout: 2 * time.Minute}
	_, base := startMemory(t, append([]relay.Option{relay.WithUpstream(u)}, opts...)...)
	return base
}

// short answers every request with a short complete OpenAI stream.
func short(w http.ResponseWriter, r *http.Request, _ int) bool {
	return play(w, r, "text/event-stream", simEvents("openai", "short"), 0)
}

// wsRefused reads a WebSocket the relay refuses: one terminal status
// event, then a close asking to try again later.
func wsRefused(t *testing.T, base, query, says string) {
	t.Helper()
	msgs, err := wsMessages(t, wsDial(t, base, query, hello))
	require.Equal(t, websocket.StatusTryAgainLater, websocket.CloseStatus(err), "%v %v", msgs, err)
	require.Len(t, msgs, 1)
	ev := wsEvents(t, msgs)[0]
	require.Equal(t, relay.StatusEvent, ev.Type)
	var st struct{ Status, Message string }
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &st))
	require.Equal(t, "failed", st.Status)
	require.Contains(t, st.Message, says)
}

func limitRefusals(t *testing.T, base string) map[string]int {
	t.Helper()
	b, err := io.ReadAll(get(t, base+"/metrics").Body)
	require.NoError(t, err)
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`\ntrickle_limit_refusals_total\{limit="(\w+)"\} (\d+)`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]], _ = strconv.Atoi(m[2])
	}
	return out
}

func TestTheRateLimitRefusesPerSubjectBeforeTheUpstream(t *testing.T) {
	f := newFake(t, short)
	base := limitedRelay(t, f, relay.WithAuthSecret(authSecret), relay.WithRateLimit(relay.Rate{N: 2, Per: time.Minute}))
	alice, bob := mint(t, "alice", time.Minute), mint(t, "bob", time.Minute)
	chat := base + "/v1/chat/completions"

	completes(t, chat, hello, "Authorization", "Bearer "+alice)
	completes(t, chat, hello, "Authorization", "Bearer "+alice)
	requireOverLimit(t, post(t, chat, hello, "Authorization", "Bearer "+alice), "rate_limited", "2 requests a minute", 30)
	wsRefused(t, base, "?access_token="+alice, "2 requests a minute")
	require.Equal(t, int32(2), f.requests.Load(), "the refused requests reached no upstream")

	completes(t, chat, hello, "Authorization", "Bearer "+bob)
	require.Equal(t, int32(3), f.requests.Load(), "bob has a budget of his own")
	o := requireOverLimit(t, post(t, chat, `{"messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer "+alice),
		"rate_limited", "try again in", 30)
	require.NotContains(t, o.Error.Message, "--", "the library names no flag")
	require.Equal(t, int32(3), f.requests.Load(), "stream:false is counted the same")
	require.Equal(t, map[string]int{"rate": 3, "streams": 0, "tokens": 0}, limitRefusals(t, base))
}

func TestTheStreamLimitCountsGenerationsRunningPerSubject(t *testing.T) {
	f := newFake(t, forever)
	base := limitedRelay(t, f, relay.WithAuthSecret(authSecret), relay.WithMaxStreamsPerClient(1))
	alice, bob := mint(t, "alice", time.Minute), mint(t, "bob", time.Minute)
	chat := base + "/v1/chat/completions"

	running := post(t, chat, hello, "Authorization", "Bearer "+alice, relay.ResumeHeader, "on")
	require.Equal(t, http.StatusOK, running.StatusCode)
	id := running.Header.Get("X-Trickle-Stream")
	eventually(t, "the running generation's upstream request", func() bool { return f.requests.Load() == 1 })
	requireOverLimit(t, post(t, chat, hello, "Authorization", "Bearer "+alice), "too_many_streams", "1 generating at a time", 1)
	wsRefused(t, base, "?access_token="+alice, "wait for one to end or stop one")
	require.Equal(t, int32(1), f.requests.Load(), "the refused requests reached no upstream")

	other := post(t, chat, hello, "Authorization", "Bearer "+bob)
	require.Equal(t, http.StatusOK, other.StatusCode, "bob's answers are his own")
	other.Body.Close()

	// A disconnect is not the end: the generation runs on for the grace
	// period, and still counts. Its end (a Stop) frees the slot.
	running.Body.Close()
	requireOverLimit(t, post(t, chat, hello, "Authorization", "Bearer "+alice), "too_many_streams", "DELETE /v1/streams/{id}", 1)
	req, _ := http.NewRequest(http.MethodDelete, base+"/v1/streams/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	stopped, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	stopped.Body.Close()
	require.Equal(t, http.StatusOK, stopped.StatusCode)
	again := post(t, chat, hello, "Authorization", "Bearer "+alice)
	require.Equal(t, http.StatusOK, again.StatusCode, "a stopped generation no longer counts")
	again.Body.Close()
	require.Equal(t, map[string]int{"rate": 0, "streams": 3, "tokens": 0}, limitRefusals(t, base))
}

// The token budget counts what the upstream says it generated: the usage
// it reports (1000 output tokens for a short answer), not the relay's
// count of its events (a dozen).
func TestTheTokenBudgetCountsTheOutputTokensTheUpstreamReported(t *testing.T) {
	evs := simEvents("openai", "short")
	usage := regexp.MustCompile(`"completion_tokens":\d+`)
	for i, ev := range evs {
		evs[i] = usage.ReplaceAllString(ev, `"completion_tokens":1000`)
	}
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", evs, 0)
	})
	base := limitedRelay(t, f, relay.WithAuthSecret(authSecret), relay.WithTokensPerDay(500))
	alice, bob := mint(t, "alice", time.Minute), mint(t, "bob", time.Minute)
	chat := base + "/v1/chat/completions"

	resp := post(t, chat, hello, "Authorization", "Bearer "+alice)
	id := resp.Header.Get("X-Trickle-Stream")
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(b), `"completion_tokens":1000`)
	require.Less(t, strings.Count(string(b), "\nid: "), 500, "fewer events than the budget")

	eventually(t, "the stream to end", func() bool { return infoAs(t, base, id, alice).State == relay.StateComplete })
	require.Equal(t, relay.Usage{CompletionTokens: 1000}, infoAs(t, base, id, alice).Usage, "the stream's usage is the upstream's")
	requireOverLimit(t, post(t, chat, hello, "Authorization", "Bearer "+alice), "token_budget_exhausted",
		"500 output tokens a day and has generated 1000 today", 24*60*60)
	wsRefused(t, base, "?access_token="+alice, "renews at 00:00 UTC")
	require.Equal(t, int32(1), f.requests.Load(), "the refused requests reached no upstream")
	completes(t, chat, hello, "Authorization", "Bearer "+bob)
}

func infoAs(t *testing.T, base, id, token string) relay.Info {
	t.Helper()
	resp := get(t, base+"/v1/streams/"+id+"/info", "Authorization", "Bearer "+token)
	defer resp.Body.Close()
	var in relay.Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
	return in
}

// Without identities the limits count per client address: a client on
// another loopback address has its own.
func TestWithoutIdentitiesTheLimitsCountPerAddress(t *testing.T) {
	f := newFake(t, short)
	base := limitedRelay(t, f, relay.WithRateLimit(relay.Rate{N: 1, Per: time.Hour}))
	chat := base + "/v1/chat/completions"
	completes(t, chat, hello)
	requireOverLimit(t, post(t, chat, hello), "rate_limited", "1 request an hour", 3600)

	// A second address: 127.0.0.2, on loopback like every address of 127/8.
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}
	defer tr.CloseIdleConnections()
	other := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, chat, strings.NewReader(hello))
	resp, err := other.Do(req)
	if err != nil {
		t.Skipf("this machine does not route 127.0.0.2: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "another address has its own budget: %s", b)
	require.Equal(t, int32(2), f.requests.Load())
}

// Two relays sharing one Redis share every limit: the rate, the
// generations running (also when the relay generating one dies) and the
// day's tokens.
func TestTheLimitsAreSharedByAFleet(t *testing.T) {
	r := startRedis(t)
	rdb := redisClient(t, r)
	nodes := fleet(t, r, 2, relay.WithAuthSecret(authSecret), relay.WithRateLimit(relay.Rate{N: 4, Per: time.Minute}), relay.WithMaxStreamsPerClient(1))
	a, b := nodes[0].base, nodes[1].base
	const long = "/v1/chat/completions?answer=sample-100k&gap_ms=5"
	const quick = "/v1/chat/completions?answer=short&token_chars=64"
	carol := mint(t, "carol", time.Minute)

	// The generations running: one on A, so none on B.
	running := post(t, a+long, hello, "Authorization", "Bearer "+carol)
	require.Equal(t, http.StatusOK, running.StatusCode)
	requireOverLimit(t, post(t, b+long, hello, "Authorization", "Bearer "+carol), "too_many_streams", "1 generating at a time", 1)
	wsRefused(t, b, "?access_token="+carol, "1 generating at a time")

	// A dies: once its generation's lease has lapsed (by Redis's clock),
	// B admits the next one.
	nodes[0].srv.Crash()
	running.Body.Close()
	eventually(t, "the dead relay's lease to lapse", func() bool {
		now, err := rdb.Time(context.Background()).Result()
		require.NoError(t, err)
		n, err := rdb.ZCount(context.Background(), "trickle:limit:{sub:carol}:streams", strconv.FormatInt(now.UnixMilli(), 10), "+inf").Result()
		require.NoError(t, err)
		return n == 0
	})
	// Those the stream limit refused did not count: this is the second,
	// and after two more the fifth is over the shared rate.
	for _, node := range []string{b, b, nodes[1].base} {
		completes(t, node+quick, hello, "Authorization", "Bearer "+carol)
	}
	requireOverLimit(t, post(t, b+quick, hello, "Authorization", "Bearer "+carol), "rate_limited", "4 requests a minute", 15)
	require.Equal(t, map[string]int{"rate": 1, "streams": 2, "tokens": 0}, limitRefusals(t, b))

	// The day's tokens: spent on one relay, refused by the other.
	pair := fleet(t, r, 2, relay.WithAuthSecret(authSecret), relay.WithTokensPerDay(2))
	dave := "Bearer " + mint(t, "dave", time.Minute)
	completes(t, pair[0].base+quick, hello, "Authorization", dave)
	eventually(t, "the tokens to be counted in Redis", func() bool {
		n, err := rdb.Get(context.Background(), "trickle:limit:{sub:dave}:tokens:"+time.Now().UTC().Format(time.DateOnly)).Int()
		return err == nil && n >= 2
	})
	requireOverLimit(t, post(t, pair[1].base+quick, hello, "Authorization", dave), "token_budget_exhausted", "2 output tokens a day", 24*60*60)
	require.Equal(t, 1, limitRefusals(t, pair[1].base)["tokens"])
}

func TestLimitOptionsThatCannotWorkAreRefusedByName(t *testing.T) {
	for _, c := range []struct {
		option string
		opt    relay.Option
	}{
		{"WithRateLimit", relay.WithRateLimit(relay.Rate{})},
		{"WithRateLimit", relay.WithRateLimit(relay.Rate{N: 5, Per: -time.Second})},
		{"WithMaxStreamsPerClient", relay.WithMaxStreamsPerClient(0)},
		{"WithTokensPerDay", relay.WithTokensPerDay(-1)},
	} {
		_, err := relay.New(c.opt)
		require.ErrorIs(t, err, relay.ErrBadOption)
		require.ErrorContains(t, err, c.option+"(")
	}
	r, err := relay.ParseRate("20/min")
	require.NoError(t, err)
	require.Equal(t, relay.Rate{N: 20, Per: time.Minute}, r)
	_, err = relay.ParseRate("20 a minute")
	require.ErrorIs(t, err, relay.ErrBadOption)
	require.ErrorContains(t, err, "ParseRate(")
}

// A stream:false answer's tokens are the usage the upstream reported in
// its JSON.
func TestTheTokenBudgetCountsAnAnswerThatWasNotStreamed(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":700,"total_tokens":703}}`)
		return true
	})
	base := limitedRelay(t, f, relay.WithTokensPerDay(500))
	once := `{"messages":[{"role":"user","content":"hi"}]}`
	resp := post(t, base+"/v1/chat/completions", once)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	require.Contains(t, string(b), `"completion_tokens":700`, "the answer is copied as it came")
	requireOverLimit(t, post(t, base+"/v1/chat/completions", once), "token_budget_exhausted", "has generated 700 today", 24*60*60)
	require.Equal(t, int32(1), f.requests.Load())
}

// A refused request does not count against the rate (issue 31): neither
// one the stream limit refuses nor one refused after the limits admitted
// it (a fault a real upstream does not play). Only the two that
// generated count.
func TestARefusedRequestDoesNotCountAgainstTheRateLimit(t *testing.T) {
	f := newFake(t, forever)
	base := limitedRelay(t, f, relay.WithAuthSecret(authSecret), relay.WithRateLimit(relay.Rate{N: 2, Per: time.Hour}),
		relay.WithMaxStreamsPerClient(1))
	alice := mint(t, "alice", time.Minute)
	chat := base + "/v1/chat/completions"
	auth := []string{"Authorization", "Bearer " + alice}

	for range 3 {
		bad := post(t, chat+"?error_after=2", hello, auth...)
		b, _ := io.ReadAll(bad.Body)
		require.Equal(t, http.StatusBadRequest, bad.StatusCode, "%s", b)
	}
	running := post(t, chat, hello, append(auth, relay.ResumeHeader, "on")...)
	require.Equal(t, http.StatusOK, running.StatusCode, "the refused requests did not use the rate")
	id := running.Header.Get("X-Trickle-Stream")
	for range 3 {
		requireOverLimit(t, post(t, chat, hello, auth...), "too_many_streams", "1 generating at a time", 1)
	}
	wsRefused(t, base, "?access_token="+alice, "1 generating at a time")
	req, _ := http.NewRequest(http.MethodDelete, base+"/v1/streams/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+alice)
	stopped, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	stopped.Body.Close()
	require.Equal(t, http.StatusOK, stopped.StatusCode)

	again := post(t, chat, hello, auth...)
	require.Equal(t, http.StatusOK, again.StatusCode, "the second request that generates is within the rate")
	again.Body.Close()
	requireOverLimit(t, post(t, chat, hello, auth...), "rate_limited", "2 requests an hour", 3600)
	require.Equal(t, map[string]int{"rate": 1, "streams": 4, "tokens": 0}, limitRefusals(t, base))
}
