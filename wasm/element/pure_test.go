package element

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/buffering"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

func TestStreamIDIsTheEventIDBeforeTheSequence(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"abc123:7", "abc123"},
		{"a:b:12", "a:b"},
		{"abc", ""},
		{":5", ""},
		{"abc:", ""},
		{"abc:x1", ""},
		{"", ""},
	} {
		require.Equal(t, tc.want, StreamID(tc.id), "StreamID(%q)", tc.id)
	}
}

func TestBackoffDoublesFromTheServersRetryUpToTheCap(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second, Attempts: 5}
	var got []time.Duration
	for n := 0; ; n++ {
		d, ok := b.Delay(n, 0)
		if !ok {
			break
		}
		got = append(got, d)
	}
	require.Equal(t, []time.Duration{100e6, 200e6, 400e6, 800e6, 1000e6}, got)

	d, ok := b.Delay(0, 300*time.Millisecond)
	require.True(t, ok)
	require.Equal(t, 300*time.Millisecond, d, "the server's retry: replaces the base")
	d, _ = b.Delay(0, 3*time.Second)
	require.Equal(t, 3*time.Second, d, "a server asking for more than the cap gets it")
}

func TestStreamURLsFollowTheRelaysHeaderElseTheEndpointsPrefixWithoutItsQuery(t *testing.T) {
	for _, tc := range []struct{ endpoint, ref, want string }{
		{"http://127.0.0.1:8080/v1/chat/completions?drop_after=3", "", "http://127.0.0.1:8080/v1/streams/s1"},
		{"http://127.0.0.1:8080/v1/chat/completions?drop_after=3", "../streams/s1", "http://127.0.0.1:8080/v1/streams/s1"},
		// Mounted under a prefix (http.StripPrefix, a proxy's location /ai/).
		{"https://site.test/ai/v1/chat/completions", "../streams/s1", "https://site.test/ai/v1/streams/s1"},
		{"https://site.test/ai/v1/chat/completions", "", "https://site.test/ai/v1/streams/s1"},
		{"https://site.test/a/b/v1/chat/completions#x", "", "https://site.test/a/b/v1/streams/s1"},
		// A relay mounted where its paths are not /v1/…: only its header tells.
		{"https://site.test/chat", "streams/s1", "https://site.test/streams/s1"},
		{"https://site.test/chat", "", "https://site.test/v1/streams/s1"},
		// Resolved already against the request that carried it (a
		// resume's GET): followed on the endpoint's origin.
		{"https://site.test/ai/v1/chat/completions", "https://site.test/ai/v1/streams/s1", "https://site.test/ai/v1/streams/s1"},
		{"https://site.test/ai/v1/chat/completions", "http://site.test/ai/v1/streams/s1", "https://site.test/ai/v1/streams/s1"},
		// A header naming another host is not followed.
		{"https://site.test/ai/v1/chat/completions", "https://evil.test/x", "https://site.test/ai/v1/streams/s1"},
		{"https://site.test/ai/v1/chat/completions", "//evil.test/x", "https://site.test/ai/v1/streams/s1"},
	} {
		u, err := StreamURLs(tc.endpoint, "s1", tc.ref)
		require.NoError(t, err)
		require.Equal(t, tc.want, u.Resume, "%s with %q", tc.endpoint, tc.ref)
		require.Equal(t, u.Resume, u.Cancel)
	}
}

func TestWebSocketURLs(t *testing.T) {
	for _, tc := range []struct{ endpoint, ws, auth, first, resume string }{
		{"http://h:1/v1/chat/completions", "", "", "ws://h:1/v1/ws", "ws://h:1/v1/ws"},
		{"https://h/v1/chat/completions?dialect=anthropic&drop_after=3", "", "", "wss://h/v1/ws?dialect=anthropic&drop_after=3", "wss://h/v1/ws"},
		{"https://h/v1/chat/completions", "/custom/ws", "", "wss://h/custom/ws", "wss://h/custom/ws"},
		{"https://h/v1/chat/completions", "wss://other/ws", "", "wss://other/ws", "wss://other/ws"},
		{"http://h/v1/chat/completions?answer=short", "", "Bearer s3cr&t", "ws://h/v1/ws?access_token=s3cr%26t&answer=short", "ws://h/v1/ws?access_token=s3cr%26t"},
		{"http://h/v1/chat/completions", "", "Basic xyz", "ws://h/v1/ws", "ws://h/v1/ws"},
		{"https://h/ai/v1/chat/completions?answer=short", "", "", "wss://h/ai/v1/ws?answer=short", "wss://h/ai/v1/ws"},
	} {
		first, resume, err := WebSocketURLs(tc.endpoint, tc.ws, tc.auth)
		require.NoError(t, err)
		require.Equal(t, tc.first, first)
		require.Equal(t, tc.resume, resume)
	}
}

func TestAPromptBecomesAStreamingChatRequest(t *testing.T) {
	var req struct {
		Model    *string `json:"model"`
		Stream   bool    `json:"stream"`
		Messages []struct{ Role, Content string }
	}
	require.NoError(t, json.Unmarshal([]byte(PromptBody(`say "hi" </script>`, "")), &req))
	require.Nil(t, req.Model, "no model attribute: the request names none, the backend picks")
	require.True(t, req.Stream)
	require.Len(t, req.Messages, 1)
	require.Equal(t, "user", req.Messages[0].Role)
	require.Equal(t, `say "hi" </script>`, req.Messages[0].Content)

	require.NoError(t, json.Unmarshal([]byte(PromptBody("hi", "gpt-4o-mini")), &req))
	require.NotNil(t, req.Model)
	require.Equal(t, "gpt-4o-mini", *req.Model, "the model attribute is sent")
}

func TestARequestBodyIsKeptButAlwaysStreams(t *testing.T) {
	out, err := StreamingBody(`{"model":"m","stream":false,"temperature":0.5,"messages":[]}`)
	require.NoError(t, err)
	require.JSONEq(t, `{"model":"m","stream":true,"temperature":0.5,"messages":[]}`, out)

	out, err = StreamingBody(`{"messages":[]}`)
	require.NoError(t, err)
	require.JSONEq(t, `{"stream":true,"messages":[]}`, out, "only stream is added")

	for _, bad := range []string{`[]`, `"x"`, `null`, `{`} {
		_, err = StreamingBody(bad)
		require.ErrorIs(t, err, ErrBadRequestBody, bad)
	}
}

func TestRecorderMeasuresAStreamedAnswer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var r Recorder
	r.Start(t0)
	r.Bytes(100, at(40))
	require.True(t, r.Token(at(50)))
	// gaps: 10 × 20 ms, then one 200 ms stall
	for i := 1; i <= 10; i++ {
		require.False(t, r.Token(at(50+20*i)))
		r.Bytes(10, at(50+20*i))
	}
	r.Token(at(450))
	r.Frame(3 * time.Millisecond)
	r.Frame(1 * time.Millisecond)
	r.End(at(500))
	m := r.Snapshot()
	require.Equal(t, 40.0, m.TTFB)
	require.Equal(t, 50.0, m.TTFT)
	require.Equal(t, 20.0, m.GapP50)
	require.Equal(t, 200.0, m.GapP95)
	require.Equal(t, 200.0, m.GapMax)
	require.Equal(t, 12, m.Tokens)
	require.Equal(t, 27.5, m.TokensPerS) // 11 gaps over 400 ms
	require.Equal(t, 200, m.Bytes)
	require.Equal(t, 500.0, m.Duration)
	require.Equal(t, buffering.Streamed, m.Buffering)
	require.Equal(t, 2, m.Frames)
	require.Equal(t, 3.0, m.FrameMax)
	require.Equal(t, 4.0, m.FrameTotal)
	require.True(t, json.Valid([]byte(m.JSON())))
}

// gapPercentilesBySorting is the oracle (and the benchmark's peer): every
// gap sorted afresh, nearest-rank percentiles.
func gapPercentilesBySorting(gaps []time.Duration) (p50, p95, longest float64) {
	if len(gaps) == 0 {
		return 0, 0, 0
	}
	sorted := slices.Sorted(slices.Values(gaps))
	rank := func(p float64) float64 {
		return millis(sorted[int(math.Ceil(p*float64(len(sorted))))-1])
	}
	return rank(0.50), rank(0.95), millis(sorted[len(sorted)-1])
}

// The gap percentiles equal those of every gap sorted afresh, whenever the
// snapshots fall between the tokens (the recorder keeps its gaps sorted
// across snapshots) and across answers on the same recorder.
func TestRecorderGapPercentilesEqualSortingEveryGapAtEverySnapshot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var r Recorder
	snapshots := 0
	for answer := range 30 {
		t0 := time.Unix(int64(1000*answer), 0)
		r.Start(t0)
		now := t0
		var gaps []time.Duration
		for i := range rng.IntN(3 * mergeEvery) { // past the merges Token makes itself
			d := time.Duration(rng.IntN(5)) * time.Millisecond // many equal gaps
			if rng.IntN(40) == 0 {
				d = time.Duration(rng.IntN(3000)) * time.Millisecond // a stall
			}
			now = now.Add(d)
			if i > 0 {
				gaps = append(gaps, d)
			}
			r.Token(now)
			if rng.IntN(1+rng.IntN(40)) == 0 {
				m := r.Snapshot()
				p50, p95, longest := gapPercentilesBySorting(gaps)
				require.Equal(t, []float64{p50, p95, longest}, []float64{m.GapP50, m.GapP95, m.GapMax}, "answer %d after %d gaps", answer, len(gaps))
				snapshots++
			}
		}
		m := r.Snapshot()
		p50, p95, longest := gapPercentilesBySorting(gaps)
		require.Equal(t, []float64{p50, p95, longest}, []float64{m.GapP50, m.GapP95, m.GapMax}, "answer %d at its end", answer)
	}
	require.Greater(t, snapshots, 100)
}

// A page that reads the metrics only at the end leaves fewer than
// mergeEvery gaps to sort then: Token merges them as they come.
func TestRecorderNeverLeavesMoreThanABatchOfGapsUnsorted(t *testing.T) {
	var r Recorder
	t0 := time.Unix(0, 0)
	r.Start(t0)
	for i := range 10 * mergeEvery {
		r.Token(t0.Add(time.Duration(i*(i%7)) * time.Millisecond))
		require.Less(t, len(r.gaps)-len(r.sorted), mergeEvery, "after %d tokens", i+1)
		require.True(t, slices.IsSorted(r.sorted))
	}
	require.GreaterOrEqual(t, len(r.sorted), 9*mergeEvery, "the merges happened")
}

func TestRecorderCallsAnAnswerArrivingAtOnceBuffered(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r Recorder
	r.Start(t0)
	// buffering.MinTokens tokens released together: their bytes arrive
	// over 25 ms, within the 50 ms window.
	for i := 0; i < buffering.MinTokens; i++ {
		now := t0.Add(time.Second + time.Duration(i)*500*time.Microsecond)
		r.Bytes(30, now)
		r.Token(now)
	}
	require.Equal(t, buffering.Buffered, r.Snapshot().Buffering)

	// 20 tokens 1 ms apart: a fast model could send them so; too few to tell.
	r.Start(t0)
	for i := 0; i < 20; i++ {
		now := t0.Add(time.Second + time.Duration(i)*time.Millisecond)
		r.Bytes(30, now)
		r.Token(now)
	}
	require.Equal(t, buffering.Unknown, r.Snapshot().Buffering)

	// The window counts from the first byte, not the first token: a role
	// chunk 60 ms before the tokens makes the same answer streamed.
	r.Start(t0)
	r.Bytes(40, t0.Add(940*time.Millisecond))
	for i := 0; i < 20; i++ {
		now := t0.Add(time.Second + time.Duration(i)*time.Millisecond)
		r.Bytes(30, now)
		r.Token(now)
	}
	require.Equal(t, buffering.Streamed, r.Snapshot().Buffering)

	r.Start(t0)
	r.Bytes(10, t0)
	r.Token(t0)
	require.Equal(t, buffering.Unknown, r.Snapshot().Buffering, "one token tells nothing")
}

func TestTheSessionWaitsWhatTheServersRetryFieldSays(t *testing.T) {
	s := newSession(t, Config{})
	require.Zero(t, s.Retry(), "no retry: field yet")
	require.NoError(t, s.Write([]byte("retry: 1500\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n")))
	require.Equal(t, 1500*time.Millisecond, s.Retry())
}

func TestToolsShowCallingWhileStreamingAndCalledWithArgumentsOnceComplete(t *testing.T) {
	require.Empty(t, ToolsHTML(nil, nil))
	ran := ToolsHTML([]stream.ToolCall{
		{Name: "get_weather", Arguments: `{"city":"Paris"}`, Complete: true, Output: `{"temp":"<21>"}`},
		{Name: "search", Arguments: `{}`, Complete: true, OutputError: "<rate> limited"},
	}, nil)
	require.Equal(t, `<div data-trickle="tool"><p>Called <code>get_weather</code></p><pre><code>{&#34;city&#34;:&#34;Paris&#34;}</code></pre>`+
		`<pre data-trickle="tool-output"><code>{&#34;temp&#34;:&#34;&lt;21&gt;&#34;}</code></pre></div>`+
		`<div data-trickle="tool"><p>Called <code>search</code></p><pre><code>{}</code></pre>`+
		`<p data-trickle="tool-output">Failed: &lt;rate&gt; limited</p></div>`, ran, "a tool's output, escaped, under its call")
	streaming := ToolsHTML([]stream.ToolCall{{Name: "get_weather", Partial: `{"city":"Par`}}, nil)
	require.Equal(t, `<div data-trickle="tool"><p>Calling <code>get_weather</code>…</p></div>`, streaming)
	require.NotContains(t, streaming, "Par", "half an argument object is never shown")

	done := ToolsHTML([]stream.ToolCall{{Name: "<b>x</b>", Arguments: `{"q":"<img src=x onerror=alert(1)>"}`, Complete: true}}, nil)
	require.Equal(t, `<div data-trickle="tool"><p>Called <code>&lt;b&gt;x&lt;/b&gt;</code></p>`+
		`<pre><code>{&#34;q&#34;:&#34;&lt;img src=x onerror=alert(1)&gt;&#34;}</code></pre></div>`, done)

	both := ToolsHTML([]stream.ToolCall{{Name: "get_weather", Arguments: `{}`, Complete: true}, {Name: "get_time"}}, nil)
	require.Equal(t, `<div data-trickle="tool"><p>Called <code>get_weather</code></p><pre><code>{}</code></pre></div>`+
		`<div data-trickle="tool"><p>Calling <code>get_time</code>…</p></div>`, both, "each call says where it is")
}

func TestAFinishedToolCallReadsCalledThroughAWholeSession(t *testing.T) {
	// Every cut of an OpenAI stream with a tool call: while its arguments
	// stream the panel says "Calling", and from the frame its call
	// completes it says "Called" with the arguments, never "Calling" again.
	body := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Lyon\"}"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	sawCalling := 0
	for cut := 1; cut < len(body); cut++ {
		s := newSession(t, Config{Now: func() time.Time { return time.Time{} }})
		s.Begin()
		var shown []string
		for _, part := range []string{body[:cut], body[cut:]} {
			require.NoError(t, s.Write([]byte(part)))
			if p := s.Frame(); p.ToolsChanged {
				shown = append(shown, p.Tools)
			}
		}
		require.NotEmpty(t, shown, "cut %d", cut)
		last := shown[len(shown)-1]
		require.Equal(t, `<div data-trickle="tool"><p>Called <code>get_weather</code></p><pre><code>{&#34;city&#34;:&#34;Lyon&#34;}</code></pre></div>`, last, "cut %d", cut)
		if strings.Contains(shown[0], "Calling <code>get_weather</code>…") {
			sawCalling++
		}
		for i, h := range shown {
			if strings.Contains(h, "Called") {
				for _, later := range shown[i:] {
					require.NotContains(t, later, "Calling", "cut %d: a finished call never goes back to Calling", cut)
				}
				break
			}
		}
	}
	require.Greater(t, sawCalling, 100, "the cuts inside the arguments show the call in progress first")
}

func TestNoticesSayHowTheAnswerEnded(t *testing.T) {
	notice := func(st stream.Status, r Reason) string { return Outcome{Status: st, Reason: r}.Notice() }
	require.Empty(t, notice(stream.Complete, ReasonNone))
	require.Equal(t, "The answer ended before the model finished.", notice(stream.Incomplete, ReasonCutOff))
	require.Equal(t, "The model's service reported an error.", notice(stream.Failed, ReasonUpstream))
	require.Equal(t, "Stopped.", notice(stream.Stopped, ReasonNone))
	require.Empty(t, notice(stream.Waiting, ReasonNone), "an answer that has not ended has no notice")
	require.Empty(t, notice(stream.Streaming, ReasonNone))
}

func TestWarmUpRunsAWholeAnswer(t *testing.T) {
	// WarmUp must exercise the real path; a sample that failed to decode
	// would warm nothing. Run the same bytes and check the outcome.
	s, html, err := warmSession(render.Policy{})
	require.NoError(t, err)
	require.Equal(t, stream.Complete, s.Status())
	require.Equal(t, warmSample, s.Text())
	want := convert(t, warmSample, RenderOptions(render.Policy{})...)
	require.Contains(t, want, `<table dir="auto">`, "the sample covers tables (GFM)")
	require.Equal(t, want, html, "the HTML handed to the browser's parser is the sample's")
}
