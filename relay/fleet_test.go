package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/sse"
)

// node is one relay of a fleet: its server and its base URL.
type node struct {
	srv  *relay.Server
	base string
	name string
}

// fleet starts n relays on loopback sharing the Redis r, each with its own
// listener, as a load balancer without sticky sessions would see them.
func fleet(t testing.TB, r *redisServer, n int, opts ...relay.Option) []node {
	t.Helper()
	var out []node
	for i := range n {
		srv, base := startMemory(t, append(storeOptions(t, r.URL()), opts...)...)
		out = append(out, node{srv: srv, base: base, name: string(rune('A' + i))})
	}
	return out
}

// fleetQuery streams about 30 events, 15 ms apart: long enough to cut the
// connection twice while the generation goes on.
const fleetQuery = "?dialect=openai&answer=short&token_chars=24&gap_ms=15&ttft_ms=5"

// readSSE reads n events (all when n < 0) from an SSE response, then
// drops the connection (cancel). It returns the events read.
func readSSE(t *testing.T, resp *http.Response, n int, cancel func()) []sse.Event {
	t.Helper()
	defer cancel()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	dec := decoder(t, resp.Body)
	var out []sse.Event
	for n < 0 || len(out) < n {
		ev, err := dec.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF, "after %d events", len(out))
			break
		}
		out = append(out, ev)
	}
	return out
}

func openSSE(t *testing.T, method, url, body, last string) (*http.Response, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	require.NoError(t, err)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	if method == http.MethodPost {
		req.Header.Set(relay.ResumeHeader, "on") // these clients resume on another instance
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp, func() { cancel(); resp.Body.Close() }
}

// requireWhole checks that got is the reference stream: every sequence
// number once, in order (0 gaps, 0 duplicates), with the same events.
func requireWhole(t *testing.T, ref, got []sse.Event, msg string) {
	t.Helper()
	for i, ev := range got {
		require.Equal(t, itoa(i+1), seqOf(ev.LastEventID), "%s: event %d: a gap or a duplicate", msg, i)
	}
	same(t, ref, got, msg)
}

// resumeAcross streams a request on the first node, cuts the connection
// after a few events, resumes on the second, cuts again, and resumes on
// the third to the end, over SSE.
func resumeAcrossSSE(t *testing.T, nodes []node, ref []sse.Event) {
	t.Helper()
	resp, cancel := openSSE(t, http.MethodPost, nodes[0].base+"/v1/chat/completions"+fleetQuery, hello, "")
	id := resp.Header.Get("X-Trickle-Stream")
	got := readSSE(t, resp, 7, cancel)
	for i, n := range nodes[1:] {
		resp, cancel := openSSE(t, http.MethodGet, n.base+"/v1/streams/"+id, "", got[len(got)-1].LastEventID)
		want := 8
		if i == len(nodes)-2 {
			want = -1 // the last one reads to the end
		}
		got = append(got, readSSE(t, resp, want, cancel)...)
	}
	requireWhole(t, ref, got, "SSE across "+fmt.Sprint(len(nodes))+" relays")
}

func resumeAcrossWebSocket(t *testing.T, nodes []node, ref []sse.Event) {
	t.Helper()
	read := func(c *websocket.Conn, n int) []sse.Event {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		defer c.CloseNow()
		var out []sse.Event
		for n < 0 || len(out) < n {
			_, msg, err := c.Read(ctx)
			if err != nil {
				require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "after %d events: %v", len(out), err)
				break
			}
			out = append(out, wsEvents(t, []string{string(msg)})...)
		}
		return out
	}
	got := read(wsDial(t, nodes[0].base, fleetQuery, hello), 7)
	for i, n := range nodes[1:] {
		last := got[len(got)-1].LastEventID
		id, _, _ := strings.Cut(last, ":")
		want := 8
		if i == len(nodes)-2 {
			want = -1
		}
		got = append(got, read(wsDial(t, n.base, "", fmt.Sprintf(`{"type":"resume","stream":%q,"last_event_id":%q}`, id, last)), want)...)
	}
	requireWhole(t, ref, got, "WebSocket across "+fmt.Sprint(len(nodes))+" relays")
}

func fleetReference(t *testing.T, n node) []sse.Event {
	t.Helper()
	resp := post(t, n.base+"/v1/chat/completions"+fleetQuery, hello)
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Greater(t, len(evs), 25)
	return evs
}

// The fleet: three relays, one Redis. A stream started on A, cut,
// resumed on B, cut again and resumed on C adds up to the uninterrupted
// stream, over SSE and over WebSocket, while the generation goes on on A.
func TestAFleetResumesAStreamOnAnyInstanceWithNoGapAndNoDuplicate(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 3)
	ref := fleetReference(t, nodes[0])
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
		var ns []node
		for _, i := range order {
			ns = append(ns, nodes[i])
		}
		t.Run("SSE from "+ns[0].name, func(t *testing.T) { resumeAcrossSSE(t, ns, ref) })
		t.Run("WebSocket from "+ns[0].name, func(t *testing.T) { resumeAcrossWebSocket(t, ns, ref) })
	}
}

// A finished stream resumes on any instance after every one of its events.
func TestAFinishedStreamResumesOnAnotherInstanceAfterEveryEvent(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 2)
	resp := post(t, nodes[0].base+"/v1/chat/completions"+shortQuery, hello)
	id := resp.Header.Get("X-Trickle-Stream")
	ref, err := events(resp.Body)
	require.NoError(t, err)
	for k := 0; k <= len(ref); k++ {
		last := ""
		if k > 0 {
			last = ref[k-1].LastEventID
		}
		got, err := events(get(t, nodes[1].base+"/v1/streams/"+id, "Last-Event-ID", last).Body)
		require.NoError(t, err)
		require.Equal(t, ref[k:], append([]sse.Event{}, got...), "resume on B after event %d", k)
	}
}

// stopAcross starts a long stream on A, reads a few events, sends DELETE
// to C and returns how long C took to answer that A has stopped.
func stopAcross(t *testing.T, a, c node) time.Duration {
	t.Helper()
	resp, cancel := openSSE(t, http.MethodPost, a.base+"/v1/chat/completions?dialect=openai&answer=sample-100k&gap_ms=5", hello, "")
	defer cancel()
	id := resp.Header.Get("X-Trickle-Stream")
	dec := decoder(t, resp.Body)
	for range 3 {
		_, err := dec.Next()
		require.NoError(t, err)
	}
	start := time.Now()
	d := del(t, c.base+"/v1/streams/"+id)
	took := time.Since(start)
	require.Equal(t, http.StatusOK, d.StatusCode)
	var in relay.Info
	require.NoError(t, json.NewDecoder(d.Body).Decode(&in))
	require.Equal(t, relay.StateStopped, in.State, "C answers once A has stopped")
	require.True(t, in.UpstreamCancelled)
	onA := info(t, a.base, id)
	require.Equal(t, relay.StateStopped, onA.State)
	require.True(t, onA.UpstreamCancelled, "A cancelled its generation")

	// A's own reader ends with the stopped status, which is the last
	// event A ever logged: what it says it has is what it sent.
	last := lastEvent(t, dec)
	require.Equal(t, relay.StatusEvent, last.Type)
	var st struct {
		Status, Message string
		Error           struct{ Message, Type, Code string }
		Usage           relay.Usage
	}
	require.NoError(t, json.Unmarshal([]byte(last.Data), &st), last.Data)
	require.Equal(t, "stopped", st.Status)
	require.Equal(t, "stopped by the client", st.Message)
	require.Equal(t, "stopped", st.Error.Code, "an OpenAI-style error, for the SDKs")
	require.Positive(t, st.Usage.CompletionTokens, "what the Stop cost")
	require.Equal(t, onA.Usage, st.Usage, "the status and A's info say the same")
	require.Equal(t, onA.Usage, in.Usage, "and so does C's, which followed the stream from the store")
	require.Equal(t, id+":"+itoa(onA.Events), last.LastEventID)
	return took
}

// DELETE on C stops the generation running on A within 100 ms (the best
// of three tries, so that one scheduling hiccup of a loaded machine does
// not decide; each try must stop A).
func TestDeleteOnOneInstanceStopsTheGenerationOnAnotherWithin100ms(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 3)
	best := time.Hour
	for range 3 {
		best = min(best, stopAcross(t, nodes[0], nodes[2]))
	}
	t.Logf("DELETE on C to A stopped, best of 3: %v", best)
	require.Less(t, best, 100*time.Millisecond)
}

// The durable Stop flag stops the generator even when the pub/sub message
// never reaches it (here: it is never sent).
func TestTheStopFlagAloneStopsTheGenerator(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 1)
	resp, cancel := openSSE(t, http.MethodPost, nodes[0].base+"/v1/chat/completions?dialect=openai&answer=sample-100k&gap_ms=5", hello, "")
	defer cancel()
	id := resp.Header.Get("X-Trickle-Stream")
	require.NoError(t, redisClient(t, r).Set(context.Background(), "trickle:{"+id+"}:stop", "1", time.Minute).Err())
	evs := readSSE(t, resp, -1, cancel)
	require.Equal(t, relay.StatusEvent, evs[len(evs)-1].Type)
	require.Contains(t, evs[len(evs)-1].Data, `"stopped"`)
	require.True(t, info(t, nodes[0].base, id).UpstreamCancelled)
}

// A relay that dies mid-stream: the readers following the stream on
// another instance get a terminal error once its lease lapses, at most
// the lease plus one blocking read later (plus scheduling slack).
func TestReadersElsewhereLearnThatTheGeneratingRelayDied(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 2)
	a, b := nodes[0], nodes[1]
	resp, cancelA := openSSE(t, http.MethodPost, a.base+"/v1/chat/completions?dialect=openai&answer=sample-100k&gap_ms=5", hello, "")
	defer cancelA()
	id := resp.Header.Get("X-Trickle-Stream")
	first := readSSE(t, resp, 3, func() {})
	onB, cancelB := openSSE(t, http.MethodGet, b.base+"/v1/streams/"+id, "", first[2].LastEventID)
	dec := decoder(t, onB.Body)
	for range 3 {
		_, err := dec.Next()
		require.NoError(t, err)
	}
	a.srv.Crash()
	died := time.Now()
	last := lastEvent(t, dec, "a clean end after the status")
	took := time.Since(died)
	cancelB()
	t.Logf("relay died → terminal error on another instance: %v (lease %v)", took, testLease)
	require.Equal(t, relay.StatusEvent, last.Type)
	var st struct{ Status, Message string }
	require.NoError(t, json.Unmarshal([]byte(last.Data), &st))
	require.Equal(t, "failed", st.Status)
	require.Contains(t, st.Message, "the relay generating this answer stopped")
	// Within about a lease (it lapses, then the follower's next look
	// sees it); the bound is loose since a loaded machine's timers fire
	// late, and still fails a reader left waiting for the grace period.
	require.Less(t, took, 3*testLease+2*time.Second)

	// The end is in the store: a resume on B now gets it at once.
	again, err := events(get(t, b.base+"/v1/streams/"+id, "Last-Event-ID", last.LastEventID).Body)
	require.NoError(t, err)
	require.Empty(t, again)
}

// A resume after events the store no longer holds is refused with 410 and
// a body that says why; nothing is skipped silently.
func TestAResumeOfTrimmedOrExpiredEventsIsRefusedWith410(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 3)
	rdb := redisClient(t, r)
	ctx := context.Background()
	resp := post(t, nodes[0].base+"/v1/chat/completions"+shortQuery, hello)
	id := resp.Header.Get("X-Trickle-Stream")
	ref, err := events(resp.Body)
	require.NoError(t, err)

	require.NoError(t, rdb.XTrimMinID(ctx, "trickle:{"+id+"}:log", "3-0").Err())
	trimmed := get(t, nodes[1].base+"/v1/streams/"+id, "Last-Event-ID", ref[0].LastEventID)
	require.Equal(t, http.StatusGone, trimmed.StatusCode)
	body, _ := io.ReadAll(trimmed.Body)
	require.Contains(t, string(body), "trimmed")

	require.NoError(t, rdb.Del(ctx, "trickle:{"+id+"}:log").Err())
	expired := get(t, nodes[2].base+"/v1/streams/"+id, "Last-Event-ID", ref[0].LastEventID)
	require.Equal(t, http.StatusGone, expired.StatusCode)
	body, _ = io.ReadAll(expired.Body)
	require.Contains(t, string(body), "expired")

	c := wsDial(t, nodes[2].base, "", fmt.Sprintf(`{"type":"resume","stream":%q,"last_event_id":%q}`, id, ref[0].LastEventID))
	msgs, _ := wsMessages(t, c)
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0], "expired")

	// The relay that generated it still has it in memory, whole.
	got, err := events(get(t, nodes[0].base+"/v1/streams/"+id).Body)
	require.NoError(t, err)
	require.Equal(t, ref, got)
}

// Redis stopped: readers everywhere get a terminal error, /healthz says
// not ready, new streams get 503 with a clear body. Redis started again
// (empty): the fleet resumes across instances as before.
func TestRedisStoppedAndStartedAgain(t *testing.T) {
	r := startRedis(t)
	nodes := fleet(t, r, 3)
	a, b := nodes[0], nodes[1]
	resp, cancelA := openSSE(t, http.MethodPost, a.base+"/v1/chat/completions?dialect=openai&answer=sample-100k&gap_ms=5", hello, "")
	defer cancelA()
	id := resp.Header.Get("X-Trickle-Stream")
	first := readSSE(t, resp, 3, func() {})
	onB, cancelB := openSSE(t, http.MethodGet, b.base+"/v1/streams/"+id, "", first[2].LastEventID)
	defer cancelB()
	require.Equal(t, http.StatusOK, onB.StatusCode)

	r.Stop()
	for _, rd := range []struct {
		name string
		body io.Reader
	}{{"on A", resp.Body}, {"on B", onB.Body}} {
		dec := decoder(t, rd.body)
		last := lastEvent(t, dec, rd.name)
		require.Equal(t, relay.StatusEvent, last.Type, rd.name)
		require.Contains(t, last.Data, `"failed"`, rd.name)
		require.Contains(t, last.Data, "stream store", rd.name)
	}

	var hb []byte
	eventually(t, "A not ready", func() bool {
		health := get(t, a.base+"/healthz")
		hb, _ = io.ReadAll(health.Body)
		return health.StatusCode == http.StatusServiceUnavailable
	})
	require.JSONEq(t, `{"status":"store unavailable"}`, string(hb), "the probe learns the status word, not the store's address or error")
	refused := post(t, b.base+"/v1/chat/completions"+fleetQuery, hello)
	require.Equal(t, http.StatusServiceUnavailable, refused.StatusCode)
	require.NotEmpty(t, refused.Header.Get("Retry-After"))
	rb, _ := io.ReadAll(refused.Body)
	require.Contains(t, string(rb), "the stream store is unavailable")

	restartRedis(t, r)
	for _, n := range nodes {
		eventually(t, n.name+" ready again", func() bool { return get(t, n.base+"/healthz").StatusCode == http.StatusOK })
	}
	ref := fleetReference(t, nodes[2])
	resumeAcrossSSE(t, nodes, ref)
	resumeAcrossWebSocket(t, []node{nodes[1], nodes[2], nodes[0]}, ref)
	best := time.Hour
	for range 3 {
		best = min(best, stopAcross(t, nodes[1], nodes[0]))
	}
	require.Less(t, best, 100*time.Millisecond)
}

// BenchmarkResumeToFirstEvent measures how long a resume takes to deliver
// its first event: a finished stream of about 30 events resumed after
// event 10, on the relay that generated it (memory store) and on another
// relay of a fleet (Redis store: the stream is loaded from Redis, then
// served). The second relay forgets a followed stream as soon as its
// reader leaves (grace 0), so every resume there reads Redis.
func BenchmarkResumeToFirstEvent(b *testing.B) {
	run := func(b *testing.B, gen, resume string) {
		var ids []string
		for range 64 {
			resp := post(b, gen+"/v1/chat/completions"+shortQuery, hello)
			io.Copy(io.Discard, resp.Body)
			ids = append(ids, resp.Header.Get("X-Trickle-Stream"))
		}
		var took []time.Duration
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			id := ids[i%len(ids)]
			start := time.Now()
			req, _ := http.NewRequest(http.MethodGet, resume+"/v1/streams/"+id, nil)
			req.Header.Set("Last-Event-ID", id+":10")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(b, err)
			ev, err := decoder(b, resp.Body).Next()
			took = append(took, time.Since(start))
			require.NoError(b, err)
			require.Equal(b, id+":11", ev.LastEventID)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		b.StopTimer()
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1e3, "p50-ms")
		b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1e3, "p99-ms")
	}
	b.Run("memory store, same relay", func(b *testing.B) {
		_, base := startMemory(b)
		run(b, base, base)
	})
	b.Run("redis store, another relay", func(b *testing.B) {
		r := startRedis(b)
		a := fleet(b, r, 1)[0]
		other := fleet(b, r, 1, relay.WithGrace(0))[0]
		run(b, a.base, other.base)
	})
}

// outsideStore is a store the relay did not write: it has only the
// contract's methods (here those of the Redis store it wraps) and returns
// Followers of its own, so the relay can neither recognise it nor reach
// behind it.
type outsideStore struct{ inner store.Store }

func (o outsideStore) String() string                                  { return "outside(" + o.inner.String() + ")" }
func (o outsideStore) Bind(h store.Host) error                         { return o.inner.Bind(h) }
func (o outsideStore) Ready() error                                    { return o.inner.Ready() }
func (o outsideStore) Durable() bool                                   { return o.inner.Durable() }
func (o outsideStore) Begin(ctx context.Context, s store.Stream) error { return o.inner.Begin(ctx, s) }
func (o outsideStore) Append(s store.Stream)                           { o.inner.Append(s) }
func (o outsideStore) Follow(ctx context.Context, id string) (store.Follower, error) {
	f, err := o.inner.Follow(ctx, id)
	if err != nil {
		return nil, err
	}
	return outsideFollower{f}, nil // a Follower of its own: the relay must not care
}

type outsideFollower struct{ store.Follower }

func (o outsideStore) Stop(ctx context.Context, id string) error { return o.inner.Stop(ctx, id) }
func (o outsideStore) Watched(id string) bool                    { return o.inner.Watched(id) }
func (o outsideStore) Close(ctx context.Context)                 { o.inner.Close(ctx) }

// outsideLimitStore also counts the limits (store.LimitStore).
type outsideLimitStore struct{ outsideStore }

func (o outsideLimitStore) Limits() store.Counter { return o.inner.(store.LimitStore).Limits() }

// A store written outside the relay works as the Redis store does: a
// stream started on A is resumed and stopped on B, and the limits are
// the fleet's when the store offers to count them, each relay's own when
// it does not.
func TestAStoreWrittenOutsideTheRelayServesAFleet(t *testing.T) {
	r := startRedis(t)
	for _, counts := range []bool{true, false} {
		var nodes []node
		for i := range 2 {
			st, err := relay.RedisStore(r.URL())
			require.NoError(t, err)
			var outside relay.Store = outsideStore{st}
			if counts {
				outside = outsideLimitStore{outsideStore{st}}
			}
			srv, base := startMemory(t, relay.WithStore(outside), relay.WithLease(testLease),
				relay.WithAuthSecret(authSecret), relay.WithMaxStreamsPerClient(1))
			nodes = append(nodes, node{srv: srv, base: base, name: string(rune('A' + i))})
		}
		a, b := nodes[0], nodes[1]
		sub := "Bearer " + mint(t, fmt.Sprintf("erin-%v", counts), time.Minute)
		long := "/v1/chat/completions?dialect=openai&answer=sample-100k&gap_ms=5"
		onA := post(t, a.base+long, hello, "Authorization", sub, relay.ResumeHeader, "on")
		require.Equal(t, http.StatusOK, onA.StatusCode)
		id := onA.Header.Get("X-Trickle-Stream")
		first, err := decoder(t, onA.Body).Next()
		require.NoError(t, err)

		onB := get(t, b.base+"/v1/streams/"+id, "Last-Event-ID", first.LastEventID, "Authorization", sub)
		next, err := decoder(t, onB.Body).Next()
		require.NoError(t, err, "B resumes A's stream through the outside store")
		require.Equal(t, id+":2", next.LastEventID)

		second := post(t, b.base+long, hello, "Authorization", sub)
		if counts {
			requireOverLimit(t, second, "too_many_streams", "1 generating at a time", 1)
		} else {
			require.Equal(t, http.StatusOK, second.StatusCode, "without the store's counter each relay counts its own")
			second.Body.Close()
		}

		req, _ := http.NewRequest(http.MethodDelete, b.base+"/v1/streams/"+id, nil)
		req.Header.Set("Authorization", sub)
		stopped, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var in relay.Info
		require.NoError(t, json.NewDecoder(stopped.Body).Decode(&in))
		stopped.Body.Close()
		require.Equal(t, relay.StateStopped, in.State, "B stopped the stream A generates")
	}
}
