package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// TestMain runs the tests against the store TRICKLE_TEST_STORE names
// (memory by default, or redis: a redis-server started here), then checks
// that no goroutine was left behind.
func TestMain(m *testing.M) {
	stop, err := setUpSharedStore()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "relay tests: goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// fast are the simulated timings tests use unless they say otherwise.
var fast = relay.SimDefaults{TTFT: 5 * time.Millisecond, Gap: time.Millisecond, TokenChars: 4}

// start runs a relay on loopback (relaytest.Start: httptest binds
// 127.0.0.1) and shuts it down at the end of the test.
func start(t testing.TB, opts ...relay.Option) (*relay.Server, string) {
	t.Helper()
	if sharedStore != "" {
		opts = append(storeOptions(t, sharedStore), opts...)
	}
	return startMemory(t, opts...)
}

// startMemory is start with the memory store whatever TRICKLE_TEST_STORE
// says (unless opts set another). TRICKLE_TEST_WRITE_PATH=plain runs the
// relays on the plain write path.
func startMemory(t testing.TB, opts ...relay.Option) (*relay.Server, string) {
	t.Helper()
	all := append([]relay.Option{
		relay.WithSimDefaults(fast),
		relay.WithGrace(2 * time.Second),
		relay.WithWritePath(testWritePath()),
	}, opts...)
	srv, ts := relaytest.Start(t, all...)
	return srv, ts.URL
}

// testWritePath is the write path TRICKLE_TEST_WRITE_PATH names (fast by
// default).
func testWritePath() relay.WritePath {
	if p := os.Getenv("TRICKLE_TEST_WRITE_PATH"); p != "" {
		return relay.WritePath(p)
	}
	return relay.FastWrites
}

const hello = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hello"}],"seed":0}`

func post(t testing.TB, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func get(t testing.TB, url string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func del(t testing.TB, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// decoder is sse.NewDecoder, which takes no option here and so cannot
// fail.
func decoder(t testing.TB, r io.Reader) *sse.Decoder {
	t.Helper()
	dec, err := sse.NewDecoder(r)
	require.NoError(t, err)
	return dec
}

// events reads an SSE body to its end with the sse package's decoder. The
// error is nil at a clean end.
func events(r io.Reader) ([]sse.Event, error) {
	dec, err := sse.NewDecoder(r)
	if err != nil {
		return nil, err
	}
	var out []sse.Event
	for {
		ev, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func info(t testing.TB, base, id string) relay.Info {
	t.Helper()
	resp := get(t, base+"/v1/streams/"+id+"/info")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var in relay.Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
	return in
}

// eventually polls cond every 5 ms for up to 10 s (a loaded CI machine is
// slow; a passing run returns at once).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// answerOf decodes relayed SSE bytes with the stream package (the widget's
// pipeline).
func answerOf(t testing.TB, dialect stream.Dialect, body []byte) *stream.Answer {
	t.Helper()
	p, err := stream.NewPipeline(stream.WithDialect(dialect), stream.WithContentType("text/event-stream"))
	require.NoError(t, err)
	_, err = p.Write(body)
	require.NoError(t, err)
	p.Close()
	return p.Answer()
}

func TestStreamingAnswerHasHeadersNoProxyBuffers(t *testing.T) {
	_, base := start(t)
	resp := post(t, base+"/v1/chat/completions", hello, "Accept-Encoding", "gzip, br")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-cache, no-transform", resp.Header.Get("Cache-Control"))
	require.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"))
	require.Empty(t, resp.Header.Get("Content-Encoding"), "never compressed")
	require.Empty(t, resp.Header.Get("Content-Length"))
	require.NotEmpty(t, resp.Header.Get("X-Trickle-Stream"))
}

func TestEveryEventHasTheStreamIDAndASequenceNumber(t *testing.T) {
	_, base := start(t)
	resp := post(t, base+"/v1/chat/completions", hello)
	id := resp.Header.Get("X-Trickle-Stream")
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	for i, ev := range evs {
		require.Equal(t, id+":"+itoa(i+1), ev.LastEventID)
	}
	require.Equal(t, "[DONE]", evs[len(evs)-1].Data)
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCurlSeesTheRetryHintAndTheStreamNameBeforeAnyEvent(t *testing.T) {
	_, base := start(t, relay.WithRetryHint(1500*time.Millisecond))
	resp := post(t, base+"/v1/chat/completions", hello)
	br := bufio.NewReader(resp.Body)
	first, _ := br.ReadString('\n')
	second, _ := br.ReadString('\n')
	require.Equal(t, ": trickle stream "+resp.Header.Get("X-Trickle-Stream")+"\n", first)
	require.Equal(t, "retry: 1500\n", second)
}

// Events are flushed as they are generated: with 40 ms between tokens the
// arrivals spread over time instead of coming in one burst at the end.
func TestEventsArriveSpreadInTimeNotInOneBurst(t *testing.T) {
	_, base := start(t)
	resp := post(t, base+"/v1/chat/completions?dialect=plain&answer=short&gap_ms=40&ttft_ms=0&token_chars=40", hello)
	dec := decoder(t, resp.Body)
	var at []time.Time
	for {
		_, err := dec.Next()
		if err != nil {
			break
		}
		at = append(at, time.Now())
	}
	require.GreaterOrEqual(t, len(at), 10)
	// 10+ tokens 40 ms apart span at least 360 ms; a buffered response
	// would deliver them within a millisecond or two.
	require.Greater(t, at[len(at)-1].Sub(at[0]), 300*time.Millisecond)
	spread := 0
	for i := 1; i < len(at); i++ {
		if at[i].Sub(at[i-1]) > 15*time.Millisecond {
			spread++
		}
	}
	require.GreaterOrEqual(t, spread, 3, "events arrive on their own, not in one burst")
}

func TestHeartbeatsKeepASilentStreamAlive(t *testing.T) {
	_, base := start(t, relay.WithHeartbeat(20*time.Millisecond))
	resp := post(t, base+"/v1/chat/completions?dialect=plain&answer=short&ttft_ms=300&stall_after=3&stall_ms=300", hello)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	s := string(body)
	first := strings.Index(s, "data:")
	require.Greater(t, strings.Count(s[:first], ": keep-alive\n\n"), 2, "heartbeats while waiting for the first token")
	third := strings.Index(s, ":3\n")
	fourth := strings.Index(s, ":4\n")
	require.Greater(t, strings.Count(s[third:fourth], ": keep-alive\n\n"), 2, "heartbeats during the stall")
	evs, err := events(bytes.NewReader(body))
	require.NoError(t, err)
	require.Equal(t, "[DONE]", evs[len(evs)-1].Data, "comments are invisible to the decoder")
}

// weatherTool declares the tool the tool-call answer calls (a real model
// calls only declared tools); helloWithWeather is hello with it.
const (
	weatherTool      = `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"include_forecast":{"type":"boolean"}},"required":["location"]}}}]`
	helloWithWeather = `{"stream":true,"messages":[{"role":"user","content":"hello"}],` + weatherTool + `}`
)

func TestEveryDialectIsRelayedToACompleteAnswer(t *testing.T) {
	_, base := start(t)
	for _, d := range sim.Dialects() {
		for _, answer := range []string{"short", "thinking", "tool-call"} {
			resp := post(t, base+"/v1/chat/completions?dialect="+d.String()+"&answer="+answer, helloWithWeather)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			a := answerOf(t, d, body)
			require.Equal(t, stream.Complete, a.Status(), "%s/%s: %v", d, answer, a.Err())
			require.NotEmpty(t, a.Text())
			if d != "plain" && answer == "tool-call" {
				require.Len(t, a.ToolCalls(), 1, d)
			}
		}
	}
}

func TestTheLastUserMessageCanPickTheAnswer(t *testing.T) {
	_, base := start(t)
	resp := post(t, base+"/v1/chat/completions?dialect=plain", `{"stream":true,"messages":[{"role":"user","content":"/answer xss"}]}`)
	body, _ := io.ReadAll(resp.Body)
	require.Contains(t, answerOf(t, "plain", body).Text(), "<script>")
}

func TestTheSameRequestStreamsTheSameEvents(t *testing.T) {
	_, base := start(t)
	read := func() []string {
		resp := post(t, base+"/v1/chat/completions?dialect=anthropic&jitter_ms=1", hello)
		evs, err := events(resp.Body)
		require.NoError(t, err)
		var out []string
		for _, ev := range evs {
			out = append(out, ev.Type+" "+ev.Data)
		}
		return out
	}
	require.Equal(t, read(), read())
}

func TestStreamFalseAnswersOneChatCompletion(t *testing.T) {
	_, base := start(t)
	resp := post(t, base+"/v1/chat/completions?answer=tool-call", `{"messages":[{"role":"user","content":"weather?"}],`+weatherTool+`}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var c struct {
		Object  string
		Choices []struct {
			Message struct {
				Content   string
				ToolCalls []struct{ Function struct{ Name string } } `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
	require.Equal(t, "chat.completion", c.Object)
	require.Equal(t, "tool_calls", c.Choices[0].FinishReason)
	require.Equal(t, "get_weather", c.Choices[0].Message.ToolCalls[0].Function.Name)
}

func TestBadRequestsGetClearErrors(t *testing.T) {
	_, base := start(t)
	cases := []struct{ name, query, body, want string }{
		{"body that is not JSON", "", "{", "not an OpenAI chat request"},
		{"unknown dialect", "?dialect=smoke", hello, "unknown dialect"},
		{"unknown answer", "?answer=nope", hello, "unknown answer"},
		{"negative gap", "?gap_ms=-1", hello, "gap_ms"},
		{"drop_after that is not a number", "?drop_after=x", hello, "drop_after"},
		{"no messages", "", `{"stream":true}`, `the request has no \"messages\"`},
		{"no messages, not streamed", "", `{"model":"m"}`, `the request has no \"messages\"`},
		{"an empty messages array", "?answer=short", `{"stream":true,"messages":[]}`, `the request has no \"messages\"`},
		{"no user message", "", `{"stream":true,"messages":[{"role":"system","content":"be brief"}]}`, `has no message with \"role\":\"user\"`},
		{"no user message, not streamed", "", `{"messages":[{"role":"assistant","content":"hi"}]}`, `has no message with \"role\":\"user\"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := post(t, base+"/v1/chat/completions"+c.query, c.body)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			b, _ := io.ReadAll(resp.Body)
			require.Contains(t, string(b), c.want)
			var e struct {
				Error struct{ Message, Type string }
			}
			require.NoError(t, json.Unmarshal(b, &e), "an OpenAI-style error body: %s", b)
			require.Equal(t, "invalid_request_error", e.Error.Type)
			require.NotEmpty(t, e.Error.Message)
		})
	}
}

// Without answer= or a seed the simulated model answers the question with
// the canned answer that fits it; a seed keeps picking as it always did.
func TestWithoutASeedTheAnswerFitsTheQuestion(t *testing.T) {
	_, base := start(t, relay.WithSimDefaults(relay.SimDefaults{TTFT: time.Millisecond, TokenChars: 64}))
	cases := []struct{ prompt, seed, want string }{
		{"How do I reverse a string in Go?", "", "code"},
		{"SSE vs WebSocket: which is better?", "", "table"},
		{"Why is my service slow?", "", "thinking"},
		{"What's the weather in Lyon?", "," + weatherTool, "tool-call"},
		{"Write a detailed essay on rate limiting.", "", "sample-20k"},
		{"hello", "", "short"},
		{"How do I reverse a string in Go?", `,"seed":1`, "thinking"},
		{"hello", `,"seed":3`, "sample-20k"},
	}
	for _, c := range cases {
		t.Run(c.prompt+c.seed, func(t *testing.T) {
			body := fmt.Sprintf(`{"stream":true,"messages":[{"role":"user","content":%q}]%s}`, c.prompt, c.seed)
			resp := post(t, base+"/v1/chat/completions?dialect=plain", body)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			want, ok := sim.Lookup(c.want)
			require.True(t, ok)
			require.Equal(t, want.Text, answerOf(t, "plain", b).Text())
		})
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	_, base := start(t)
	resp := get(t, base+"/healthz")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	hb, _ := io.ReadAll(resp.Body)
	require.JSONEq(t, `{"status":"ok"}`, string(hb), "the status word and nothing of the store's")
	done := post(t, base+"/v1/chat/completions", hello)
	io.Copy(io.Discard, done.Body)
	resp = get(t, base+"/metrics")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain; version=0.0.4")
	b, _ := io.ReadAll(resp.Body)
	m := string(b)
	for _, name := range []string{"trickle_streams_active", "trickle_streams_total 1", "trickle_stops_total",
		"trickle_resumes_total", "trickle_upstream_errors_total", "trickle_tokens_total",
		`trickle_time_to_first_token_seconds_bucket{le="+Inf"} 1`, "trickle_inter_token_gap_seconds_count"} {
		require.Contains(t, m, name)
	}
	require.NotContains(t, m, "trickle_tokens_total 0\n")
}

func TestUnknownRoutesAnswerJSON404(t *testing.T) {
	_, base := start(t)
	resp := get(t, base+"/v2/nothing")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
}

// wsDial opens /v1/ws with the query and sends the first message.
func wsDial(t testing.TB, base, query, first string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws"+query, nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.CloseNow() })
	require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(first)))
	return c
}

// wsMessages reads messages until the connection closes; it returns the
// messages and the close error.
func wsMessages(t testing.TB, c *websocket.Conn) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []string
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, string(msg))
	}
}

// wsEvents decodes each message as SSE text; keep-alive comments decode to
// nothing and are skipped.
func wsEvents(t testing.TB, msgs []string) []sse.Event {
	t.Helper()
	var out []sse.Event
	for _, m := range msgs {
		evs, err := events(strings.NewReader(m))
		require.NoError(t, err)
		require.LessOrEqual(t, len(evs), 1, "one event per message: %q", m)
		out = append(out, evs...)
	}
	return out
}

// An HTTP/1.0 client (or a proxy speaking 1.0 upstream, as nginx does by
// default) gets a close-delimited stream, not chunks it cannot read.
func TestHTTP10ClientsGetACloseDelimitedStream(t *testing.T) {
	_, base := start(t)
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer c.Close()
	body := `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	fmt.Fprintf(c, "POST /v1/chat/completions?answer=short&dialect=plain HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	raw, err := io.ReadAll(c)
	require.NoError(t, err)
	head, rest, ok := strings.Cut(string(raw), "\r\n\r\n")
	require.True(t, ok)
	require.NotContains(t, head, "chunked")
	require.Contains(t, head, "text/event-stream")
	require.True(t, strings.HasSuffix(rest, "data: [DONE]\n\n"))
	a := answerOf(t, "plain", []byte(rest))
	require.Equal(t, stream.Complete, a.Status())
}

// Anthropic sends message_start at once; the first token comes after the
// ttft. The metric counts to the token, not to the framing.
func TestTimeToFirstTokenCountsToTheFirstAnswerEvent(t *testing.T) {
	_, base := start(t)
	resp := post(t, base+"/v1/chat/completions?dialect=anthropic&answer=short&ttft_ms=150", hello)
	io.Copy(io.Discard, resp.Body)
	b, _ := io.ReadAll(get(t, base+"/metrics").Body)
	m := string(b)
	require.Contains(t, m, `trickle_time_to_first_token_seconds_bucket{le="0.1"} 0`+"\n")
	require.Contains(t, m, `trickle_time_to_first_token_seconds_bucket{le="+Inf"} 1`+"\n")
}

// Both write paths stream the same events over SSE and over WebSocket, a
// stop included (the plain path sends through net/http and
// coder/websocket, the fast one writes the connection itself); the
// WebSocket closes normally at the end.
func TestBothWritePathsStreamTheSameEvents(t *testing.T) {
	const query = "?answer=short"
	_, fastBase := start(t, relay.WithWritePath(relay.FastWrites))
	_, want := reference(t, fastBase, query)
	for _, path := range []relay.WritePath{relay.FastWrites, relay.PlainWrites} {
		t.Run(string(path), func(t *testing.T) {
			_, base := start(t, relay.WithWritePath(path))
			_, sseEvents := reference(t, base, query)
			same(t, want, sseEvents, "sse")
			c := wsDial(t, base, query, hello)
			msgs, err := wsMessages(t, c)
			require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "%v", err)
			same(t, want, wsEvents(t, msgs), "websocket")

			// Stop over the WebSocket: the stopped status, then the close.
			c = wsDial(t, base, "?answer=sample-100k", hello)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, first, err := c.Read(ctx)
			require.NoError(t, err)
			require.Contains(t, string(first), ": trickle stream ", "the prelude first")
			require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(`{"type":"stop"}`)))
			msgs, err = wsMessages(t, c)
			require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "%v", err)
			evs := wsEvents(t, msgs)
			require.NotEmpty(t, evs)
			last := evs[len(evs)-1]
			require.Equal(t, relay.StatusEvent, last.Type)
			require.Contains(t, last.Data, `"status":"stopped"`)
		})
	}
}

// The simulated model refuses what the real APIs refuse, with the OpenAI
// error shape (message, type, param, code), streamed or not: so that no
// client passes against it that a real model would turn away.
func TestTheSimulatedModelRefusesWhatRealAPIsRefuse(t *testing.T) {
	_, base := start(t)
	user := `{"role":"user","content":"hi"}`
	call := `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}`
	cases := []struct{ name, body, param, code string }{
		{"malformed body", `{"messages":[`, "", "invalid_json"},
		{"messages of the wrong type", `{"messages":"hi"}`, "", "invalid_messages"},
		{"an empty assistant message", `{"messages":[` + user + `,{"role":"assistant","content":""},` + user + `]}`, "messages.[1].content", "invalid_value"},
		{"an assistant message with null content and no call", `{"messages":[` + user + `,{"role":"assistant","content":null},` + user + `]}`, "messages.[1].content", "invalid_value"},
		{"a tool message without its call", `{"messages":[` + user + `,{"role":"tool","tool_call_id":"c1","content":"18"}]}`, "messages.[1].role", "invalid_value"},
		{"a tool message answering another call", `{"messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c2","content":"18"}]}`, "messages.[2].role", "invalid_value"},
		{"a call left unanswered", `{"messages":[` + user + `,` + call + `,` + user + `]}`, "messages.[2].role", "invalid_value"},
		{"content that is neither text nor parts", `{"messages":[{"role":"user","content":42}]}`, "messages.[0].content", "invalid_type"},
		{"an unknown role", `{"messages":[{"role":"robot","content":"hi"}]}`, "messages.[0].role", "invalid_value"},
		{"a tool_choice naming an undeclared tool", `{"messages":[` + user + `],` + weatherTool + `,"tool_choice":{"type":"function","function":{"name":"get_time"}}}`, "tool_choice", "invalid_value"},
		{"a bad tool name", `{"messages":[` + user + `],"tools":[{"type":"function","function":{"name":"get weather"}}]}`, "tools[0].function.name", "invalid_value"},
		{"max_tokens 0", `{"messages":[` + user + `],"max_tokens":0}`, "", ""}, // the relay's admission refuses it first
		{"five stop sequences", `{"messages":[` + user + `],"stop":["a","b","c","d","e"]}`, "stop", "array_above_max_length"},
	}
	for _, c := range cases {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, streamed), func(t *testing.T) {
				body := c.body
				if streamed && strings.HasPrefix(body, `{"messages":[{`) {
					body = `{"stream":true,` + body[1:]
				}
				resp := post(t, base+"/v1/chat/completions", body)
				require.Equal(t, http.StatusBadRequest, resp.StatusCode)
				var e map[string]map[string]any
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
				require.Equal(t, "invalid_request_error", e["error"]["type"])
				require.NotEmpty(t, e["error"]["message"])
				if c.code != "" {
					require.Equal(t, c.code, e["error"]["code"])
				}
				if c.param != "" {
					require.Equal(t, c.param, e["error"]["param"])
				}
			})
		}
	}
	// The same conversations, well formed, are answered.
	for _, body := range []string{
		`{"messages":[` + user + `,{"role":"assistant","content":"hello"},` + user + `]}`,
		`{"messages":[` + user + `,` + call + `,{"role":"tool","tool_call_id":"c1","content":"18"}],` + weatherTool + `}`,
	} {
		resp := post(t, base+"/v1/chat/completions", body)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		resp.Body.Close()
	}
}

// stream:false (or no stream) gets one completion shaped like the stream:
// max_tokens ends it with "length", a stop sequence ends the text before
// it, and an undeclared tool is never called.
func TestStreamFalseHonoursMaxTokensStopAndTools(t *testing.T) {
	_, base := start(t)
	type completion struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	ask := func(body string) completion {
		t.Helper()
		resp := post(t, base+"/v1/chat/completions?token_chars=4", body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var c completion
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		return c
	}
	c := ask(`{"messages":[{"role":"user","content":"/answer sample-20k"}],"max_tokens":5}`)
	require.Equal(t, "length", c.Choices[0].FinishReason)
	require.Len(t, []rune(*c.Choices[0].Message.Content), 20)
	require.Equal(t, 5, c.Usage.CompletionTokens)

	short, _ := sim.Lookup("short")
	c = ask(`{"stream":false,"messages":[{"role":"user","content":"hello"}],"stop":"simulated"}`)
	require.Equal(t, "stop", c.Choices[0].FinishReason)
	require.Equal(t, short.Text[:strings.Index(short.Text, "simulated")], *c.Choices[0].Message.Content)

	c = ask(`{"messages":[{"role":"user","content":"What's the weather in Lyon?"}]}`)
	require.Empty(t, c.Choices[0].Message.ToolCalls, "no tool declared: none called")
	require.Equal(t, "stop", c.Choices[0].FinishReason)

	c = ask(`{"messages":[{"role":"user","content":"What's the weather in Lyon?"}],` + weatherTool + `}`)
	require.Equal(t, "tool_calls", c.Choices[0].FinishReason)
	require.Equal(t, "get_weather", c.Choices[0].Message.ToolCalls[0].Function.Name)
	require.JSONEq(t, `{"location":"Lyon, France","unit":"celsius","include_forecast":true}`, c.Choices[0].Message.ToolCalls[0].Function.Arguments)
}
