package relay_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// fakeUpstream is a model API on loopback that records what it was sent and
// sees when the relay cancels its request.
type fakeUpstream struct {
	url       string
	requests  atomic.Int32
	cancelled chan time.Time // one send per request whose context ended early

	mu      sync.Mutex
	headers []http.Header
	bodies  []map[string]any
	raw     []string // the bodies as they came
}

// upstreamScript answers one request (attempt is 1 for the first); it
// returns false when it ended because the request was cancelled.
type upstreamScript func(w http.ResponseWriter, r *http.Request, attempt int) bool

func newFake(t *testing.T, script upstreamScript) *fakeUpstream {
	t.Helper()
	f := &fakeUpstream{cancelled: make(chan time.Time, 16)}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(f.requests.Add(1))
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.headers = append(f.headers, r.Header.Clone())
		f.bodies = append(f.bodies, body)
		f.raw = append(f.raw, string(raw))
		f.mu.Unlock()
		if !script(w, r, n) {
			f.cancelled <- time.Now()
		}
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	f.url = ts.URL
	return f
}

// simEvents renders a canned answer in a dialect as the upstream would send
// it: SSE for openai and anthropic, NDJSON for ollama.
func simEvents(dialect stream.Dialect, answer string) []string {
	g, err := sim.New(sim.Params{Dialect: dialect, Answer: answer, TokenChars: 16, Tools: []sim.Tool{sim.Weather}})
	if err != nil {
		panic(err) // the names are constants of these tests
	}
	var out []string
	for {
		m, ok := g.Next()
		if !ok {
			return out
		}
		if dialect == "ollama" {
			out = append(out, m.Data+"\n")
			continue
		}
		out = append(out, string(sse.AppendMessage(nil, sse.Message{Event: m.Event, Data: m.Data})))
	}
}

// play writes the events with a pause between them, and reports false
// (cancelled) if the request's context ends first.
func play(w http.ResponseWriter, r *http.Request, ctype string, evs []string, gap time.Duration) bool {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	for _, ev := range evs {
		select {
		case <-r.Context().Done():
			return false
		case <-time.After(gap):
		}
		io.WriteString(w, ev)
		rc.Flush()
	}
	return true
}

// forever streams OpenAI chunks until the request is cancelled.
func forever(w http.ResponseWriter, r *http.Request, _ int) bool {
	evs := simEvents("openai", "sample-100k")
	return play(w, r, "text/event-stream", evs, 5*time.Millisecond)
}

func upstreamRelay(t *testing.T, f *fakeUpstream, dialect stream.Dialect, opts ...relay.Option) string {
	t.Helper()
	u := relay.Upstream{URL: f.url, Dialect: dialect, Key: "upstream-secret-key", Model: "real-model",
		FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, TotalTimeout: 10 * time.Second, Retries: 2}
	_, base := start(t, append([]relay.Option{relay.WithUpstream(u)}, opts...)...)
	return base
}

func TestOpenAIUpstreamIsRelayedWithIDsAndTheKeyStaysOnTheServer(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("openai", "thinking"), time.Millisecond)
	})
	base := upstreamRelay(t, f, "openai")
	resp := post(t, base+"/v1/chat/completions", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answerOf(t, "openai", body)
	require.Equal(t, stream.Complete, a.Status(), "%v", a.Err())
	want, _ := sim.Lookup("thinking")
	require.Equal(t, want.Text, a.Text())
	require.Contains(t, string(body), "id: "+resp.Header.Get("X-Trickle-Stream")+":1\n")

	require.Equal(t, "Bearer upstream-secret-key", f.headers[0].Get("Authorization"))
	require.Equal(t, true, f.bodies[0]["stream"])
	require.Equal(t, "real-model", f.bodies[0]["model"])
	require.NotContains(t, string(body), "upstream-secret-key")
	for k, v := range resp.Header {
		require.NotContains(t, strings.Join(v, " "), "upstream-secret-key", k)
	}
	in := info(t, base, resp.Header.Get("X-Trickle-Stream"))
	require.Equal(t, relay.StateComplete, in.State)
	require.False(t, in.UpstreamCancelled)
}

func TestAnthropicAndOllamaUpstreamsAreRelayed(t *testing.T) {
	for _, c := range []struct {
		dialect stream.Dialect
		ctype   string
	}{
		{"anthropic", "text/event-stream"},
		{"ollama", "application/x-ndjson"},
	} {
		t.Run(c.dialect.String(), func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
				return play(w, r, c.ctype, simEvents(c.dialect, "tool-call"), time.Millisecond)
			})
			base := upstreamRelay(t, f, c.dialect)
			resp := post(t, base+"/v1/chat/completions", `{"model":"m","stream":true,"max_tokens":99,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather?"}]}`)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			a := answerOf(t, c.dialect, body)
			require.Equal(t, stream.Complete, a.Status(), "%v\n%s", a.Err(), body)
			require.Len(t, a.ToolCalls(), 1)
			if c.dialect == "anthropic" {
				require.Equal(t, "upstream-secret-key", f.headers[0].Get("X-Api-Key"))
				require.Equal(t, "2023-06-01", f.headers[0].Get("Anthropic-Version"))
				require.Equal(t, "be brief", f.bodies[0]["system"])
				require.EqualValues(t, 99, f.bodies[0]["max_tokens"])
				require.Contains(t, string(body), "event: message_stop\n")
			} else {
				require.Contains(t, string(body), `"done":true`)
			}
		})
	}
}

func TestStopCancelsTheUpstreamRequest(t *testing.T) {
	f := newFake(t, forever)
	base := upstreamRelay(t, f, "openai")
	resp := post(t, base+"/v1/chat/completions", hello)
	id := resp.Header.Get("X-Trickle-Stream")
	dec := decoder(t, resp.Body)
	for range 3 {
		_, err := dec.Next()
		require.NoError(t, err)
	}
	stopAt := time.Now()
	require.Equal(t, http.StatusOK, del(t, base+"/v1/streams/"+id).StatusCode)
	select {
	case at := <-f.cancelled:
		t.Logf("Stop reached the upstream in %v", at.Sub(stopAt))
		require.Less(t, at.Sub(stopAt), time.Second)
	case <-time.After(3 * time.Second):
		t.Fatal("the upstream never saw the cancellation")
	}
	in := info(t, base, id)
	require.Equal(t, relay.StateStopped, in.State)
	require.True(t, in.UpstreamCancelled)
}

// A client that declares it resumes (X-Trickle-Resume: on, the widget)
// keeps its generation for the grace period after a disconnect.
func TestADisconnectOfAResumingClientCancelsTheUpstreamOnlyAfterTheGracePeriod(t *testing.T) {
	// It says so, or asks for text/event-stream as SSE clients (the
	// widget, EventSource) do.
	for _, hdr := range [][]string{{relay.ResumeHeader, "on"}, {"Accept", "text/event-stream"}} {
		t.Run(hdr[0], func(t *testing.T) { disconnectAndWaitOutTheGrace(t, hdr) })
	}
}

func disconnectAndWaitOutTheGrace(t *testing.T, hdr []string) {
	f := newFake(t, forever)
	grace := 250 * time.Millisecond
	base := upstreamRelay(t, f, "openai", relay.WithGrace(grace))
	resp := post(t, base+"/v1/chat/completions", hello, hdr...) // it will resume
	id := resp.Header.Get("X-Trickle-Stream")
	_, err := decoder(t, resp.Body).Next()
	require.NoError(t, err)
	resp.Body.Close()
	left := time.Now()
	select {
	case at := <-f.cancelled:
		require.GreaterOrEqual(t, at.Sub(left), grace, "cancelled before the grace period passed")
	case <-time.After(3 * time.Second):
		t.Fatal("the upstream never saw the cancellation")
	}
	in := info(t, base, id)
	require.Equal(t, relay.StateCancelled, in.State)
	require.True(t, in.UpstreamCancelled)
}

func TestAnUpstreamThatFailsMidAnswerEndsWithAnErrorThenTheEndMarker(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		evs := simEvents("openai", "short")
		return play(w, r, "text/event-stream", evs[:4], time.Millisecond) // then closes: no [DONE]
	})
	base := upstreamRelay(t, f, "openai")
	resp := post(t, base+"/v1/chat/completions", hello)
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Len(t, evs, 6)
	require.Contains(t, evs[4].Data, `"error"`)
	require.Contains(t, evs[4].Data, "without its end marker")
	require.Equal(t, "[DONE]", evs[5].Data)
	require.EqualValues(t, 1, f.requests.Load(), "never retried after the first byte")
	require.Equal(t, relay.StateFailed, info(t, base, resp.Header.Get("X-Trickle-Stream")).State)
	var b strings.Builder
	for _, ev := range evs {
		b.Write(sse.AppendMessage(nil, sse.Message{Event: ev.Type, Data: ev.Data}))
	}
	require.Equal(t, stream.Failed, answerOf(t, "openai", []byte(b.String())).Status())
}

func TestAFailureBeforeTheFirstByteIsRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, attempt int) bool {
		if attempt == 1 {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return true
		}
		return play(w, r, "text/event-stream", simEvents("openai", "short"), 0)
	})
	base := upstreamRelay(t, f, "openai")
	body, err := io.ReadAll(post(t, base+"/v1/chat/completions", hello).Body)
	require.NoError(t, err)
	require.Equal(t, stream.Complete, answerOf(t, "openai", body).Status())
	require.EqualValues(t, 2, f.requests.Load())
}

func TestAClientErrorFromTheUpstreamIsNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		http.Error(w, `{"error":{"message":"model not found"}}`, http.StatusNotFound)
		return true
	})
	base := upstreamRelay(t, f, "openai")
	evs, err := events(post(t, base+"/v1/chat/completions", hello).Body)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Contains(t, evs[0].Data, "refused the request (404)")
	require.NotContains(t, evs[0].Data, "model not found", "the upstream's own body stays in the relay's log")
	require.EqualValues(t, 1, f.requests.Load())
}

func TestUpstreamTimeoutsFailTheStreamAndSayWhich(t *testing.T) {
	cases := []struct {
		name   string
		script upstreamScript
		want   string
	}{
		{"first token", func(w http.ResponseWriter, r *http.Request, _ int) bool {
			select {
			case <-r.Context().Done():
				return false
			case <-time.After(2 * time.Second):
				return true
			}
		}, "first-token timeout"},
		{"idle", func(w http.ResponseWriter, r *http.Request, _ int) bool {
			evs := simEvents("openai", "short")
			if !play(w, r, "text/event-stream", evs[:2], 0) {
				return false
			}
			select {
			case <-r.Context().Done():
				return false
			case <-time.After(2 * time.Second):
				return true
			}
		}, "idle timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.script)
			u := relay.Upstream{URL: f.url, Dialect: "openai", FirstTokenTimeout: 100 * time.Millisecond,
				IdleTimeout: 100 * time.Millisecond, TotalTimeout: 5 * time.Second}
			_, base := start(t, relay.WithUpstream(u))
			evs, err := events(post(t, base+"/v1/chat/completions", hello).Body)
			require.NoError(t, err)
			require.Contains(t, evs[len(evs)-2].Data, c.want)
			require.Equal(t, "[DONE]", evs[len(evs)-1].Data)
			select {
			case <-f.cancelled:
			case <-time.After(3 * time.Second):
				t.Fatal("the timed-out request was not cancelled upstream")
			}
		})
	}
}

func TestABadUpstreamConfigurationIsRefused(t *testing.T) {
	for _, u := range []relay.Upstream{{URL: "ftp://x", Dialect: "openai"}, {URL: "http://127.0.0.1:1", Dialect: "cohere"}} {
		_, err := relay.New(relay.WithUpstream(u))
		require.ErrorIs(t, err, relay.ErrBadOption)
	}
}

func TestARequestWithoutAModelGoesUpstreamWithTheRelaysModel(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("openai", "short"), time.Millisecond)
	})
	base := upstreamRelay(t, f, "openai")
	resp := post(t, base+"/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "real-model", f.bodies[0]["model"], "the relay's --upstream-model names it")
}

func TestARequestWithoutAModelToARelayWithoutOneIsRefusedBeforeTheUpstream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("openai", "short"), time.Millisecond)
	})
	u := relay.Upstream{URL: f.url, Dialect: "openai", FirstTokenTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second, TotalTimeout: 10 * time.Second}
	_, base := start(t, relay.WithUpstream(u))
	for _, body := range []string{
		`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
		`{"stream":false,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		resp := post(t, base+"/v1/chat/completions", body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		var e struct {
			Error struct{ Message, Type string }
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		require.Equal(t, "invalid_request_error", e.Error.Type)
		require.Contains(t, e.Error.Message, "names no model")
		require.Contains(t, e.Error.Message, "--upstream-model", "it says how to fix it")
	}
	require.Zero(t, f.requests.Load(), "nothing reached the upstream")

	// The model the request names goes up as it is.
	resp := post(t, base+"/v1/chat/completions", `{"model":"theirs","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "theirs", f.bodies[0]["model"])
}

// A client that has not said it will resume (an OpenAI SDK's stream, a
// script: no X-Trickle-Resume, or "off") costs nothing after it goes: its
// disconnect cancels the upstream at once, with a grace period far longer
// than the test waits.
func TestAPlainClientsDisconnectCancelsTheUpstreamAtOnce(t *testing.T) {
	f := newFake(t, forever)
	base := upstreamRelay(t, f, "openai", relay.WithGrace(time.Hour))
	for _, hdr := range [][]string{nil, {relay.ResumeHeader, "off"}, {relay.ResumeHeader, " OFF "},
		{"Accept", "application/json"}, // the OpenAI SDKs
		{"Accept", "*/*"},              // curl
		{"Accept", "text/event-stream", relay.ResumeHeader, "off"}} {
		resp := post(t, base+"/v1/chat/completions", hello, hdr...)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		id := resp.Header.Get("X-Trickle-Stream")
		_, err := decoder(t, resp.Body).Next()
		require.NoError(t, err)
		resp.Body.Close()
		select {
		case <-f.cancelled:
		case <-time.After(5 * time.Second):
			t.Fatalf("the upstream was not cancelled at the disconnect (headers %q)", hdr)
		}
		in := info(t, base, id)
		require.Equal(t, relay.StateCancelled, in.State, "%q", hdr)
		require.True(t, in.UpstreamCancelled, "%q", hdr)
		require.Contains(t, in.Message, "will not resume", "%q", hdr)
	}
	sent := f.requests.Load()
	bad := post(t, base+"/v1/chat/completions", hello, relay.ResumeHeader, "later")
	body, _ := io.ReadAll(bad.Body)
	require.Equal(t, http.StatusBadRequest, bad.StatusCode)
	require.Contains(t, string(body), `X-Trickle-Resume must be on or off, not \"later\"`)
	require.Equal(t, sent, f.requests.Load(), "a bad header reaches no upstream")
}

// A non-streamed request is cancelled upstream as soon as its client
// aborts: nobody can resume it.
func TestAPlainClientsAbortOfANonStreamedRequestCancelsTheUpstream(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		<-r.Context().Done()
		return false
	})
	base := upstreamRelay(t, f, "openai", relay.WithGrace(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hello"}]}`))
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	eventually(t, "the upstream to get the request", func() bool { return f.requests.Load() == 1 })
	cancel()
	select {
	case <-f.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream was not cancelled at the abort")
	}
	require.Error(t, <-done)
}

// The faults a test asks for act on the simulated model; a relay with a
// real upstream refuses them, naming the fault, and its upstream sees no
// request, unless the operator allows them (WithAllowFaults), where
// drop_after cuts the client's connection as it does the simulated one's.
func TestFaultsSentToARealUpstreamAreRefusedUnlessAllowed(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("openai", "short"), time.Millisecond)
	})
	base := upstreamRelay(t, f, "openai")
	for _, q := range []string{"drop_after=3", "error_after=2", "stall_after=1&stall_ms=100", "no_end=1"} {
		resp := post(t, base+"/v1/chat/completions?"+q, hello)
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		require.Contains(t, string(body), "test faults are not allowed on this relay", q)
		require.Contains(t, string(body), strings.SplitN(q, "=", 2)[0], "the refusal names the fault: %s", q)
	}
	require.Zero(t, f.requests.Load(), "no refused request reached the upstream")

	allowed := upstreamRelay(t, f, "openai", relay.WithAllowFaults(true))
	resp := post(t, allowed+"/v1/chat/completions?drop_after=2", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs, _ := events(resp.Body)
	require.Len(t, evs, 2, "the connection was cut after two events")
}

// A tool round sent to the relay (OpenAI's tools, tool_calls and tool
// messages, as <trickle-chat> sends them) reaches an Anthropic or Ollama
// upstream in that API's own shape: tools with input_schema and tool_use /
// tool_result blocks for Anthropic, tools, tool_calls with object
// arguments and named tool messages for Ollama; tool_choice and stop too.
func TestAToolRoundReachesAnthropicAndOllamaInTheirOwnShape(t *testing.T) {
	const round = `{"model":"m","stream":true,"tool_choice":"required","stop":["END"],"messages":[` +
		`{"role":"system","content":"be brief"},{"role":"user","content":"weather in Lyon?"},` +
		`{"role":"assistant","content":"Let me see.","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"{\"temperature\":18}"},{"role":"user","content":"thanks"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","description":"The weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`
	for _, c := range []struct {
		dialect stream.Dialect
		ctype   string
		want    string
	}{
		{"anthropic", "text/event-stream", `{"model":"real-model","max_tokens":4096,"system":"be brief","stream":true,"stop_sequences":["END"],
			"tool_choice":{"type":"any"},
			"tools":[{"name":"get_weather","description":"The weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],
			"messages":[
				{"role":"user","content":[{"type":"text","text":"weather in Lyon?"}]},
				{"role":"assistant","content":[{"type":"text","text":"Let me see."},{"type":"tool_use","id":"c1","name":"get_weather","input":{"city":"Lyon"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"{\"temperature\":18}"},{"type":"text","text":"thanks"}]}]}`},
		{"ollama", "application/x-ndjson", `{"model":"real-model","stream":true,"options":{"stop":["END"]},
			"tools":[{"type":"function","function":{"name":"get_weather","description":"The weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
			"messages":[
				{"role":"system","content":"be brief"},{"role":"user","content":"weather in Lyon?"},
				{"role":"assistant","content":"Let me see.","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Lyon"}}}]},
				{"role":"tool","content":"{\"temperature\":18}","tool_name":"get_weather"},{"role":"user","content":"thanks"}]}`},
	} {
		t.Run(c.dialect.String(), func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
				return play(w, r, c.ctype, simEvents(c.dialect, "short"), time.Millisecond)
			})
			base := upstreamRelay(t, f, c.dialect)
			resp := post(t, base+"/v1/chat/completions", round)
			io.Copy(io.Discard, resp.Body)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Len(t, f.bodies, 1)
			got, err := json.Marshal(f.bodies[0])
			require.NoError(t, err)
			require.JSONEq(t, c.want, string(got))
		})
	}
}
