package streamlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// host records what a log tells its server.
type host struct {
	tokens  atomic.Int32
	firsts  atomic.Int32
	touches atomic.Int32
	watched atomic.Bool
	ended   chan wire.State // the state of each log that ended
	dropped chan *Log
}

func newHost() *host { return &host{ended: make(chan wire.State, 8), dropped: make(chan *Log, 8)} }

func (h *host) Token(first bool, d time.Duration) {
	h.tokens.Add(1)
	if first {
		h.firsts.Add(1)
	}
}
func (h *host) Touch(*Log)                 { h.touches.Add(1) }
func (h *host) Ended(_ *Log, s wire.State) { h.ended <- s }
func (h *host) Watched(string) bool        { return h.watched.Load() }
func (h *host) DropFollowed(l *Log)        { h.dropped <- l }
func discard() *slog.Logger                { return slog.New(slog.DiscardHandler) }
func config(grace time.Duration) *Config {
	return &Config{MaxEventSize: 1 << 10, MaxEvents: 1000, Grace: grace, Logger: discard()}
}

// sink collects what a reader sends, as a client would read it.
type sink struct {
	mu         sync.Mutex
	got        bytes.Buffer
	events     int
	keepAlives chan struct{}
	sendErr    error // Send and KeepAlive fail with it when set
	inline     bool  // TrySend takes every batch
	halfClose  bool
	halfClosed chan struct{}
}

func newSink() *sink {
	return &sink{keepAlives: make(chan struct{}, 64), halfClosed: make(chan struct{}, 1)}
}

func (s *sink) Send(b Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendErr != nil {
		return s.sendErr
	}
	s.got.Write(b.Data)
	s.events += len(b.Ends)
	return nil
}

func (s *sink) KeepAlive() error {
	if s.sendErr != nil {
		return s.sendErr
	}
	s.keepAlives <- struct{}{}
	return nil
}

func (s *sink) HalfClose() bool {
	s.halfClosed <- struct{}{}
	return s.halfClose
}

func (s *sink) TrySend(b Batch) (bool, bool) {
	if !s.inline {
		return false, false
	}
	return true, s.Send(b) != nil
}

func (s *sink) Flush() error { return nil }

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got.String()
}

func readers() *Readers {
	return &Readers{Heartbeat: time.Hour, WriteTimeout: time.Second, CutWait: time.Hour, Kick: context.Background(),
		Connections: new(atomic.Int64), Cuts: new(atomic.Int64), Logger: discard()}
}

// token is the data of the i-th token event.
func token(i int) string { return fmt.Sprintf(`{"choices":[{"delta":{"content":"w%d "}}]}`, i) }

// client reads a log's bytes as an SSE client would: the events with
// their ids.
func client(t *testing.T, b string) []sse.Event {
	t.Helper()
	dec, err := sse.NewDecoder(strings.NewReader(b))
	require.NoError(t, err)
	var out []sse.Event
	for {
		ev, err := dec.Next()
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}

func TestEveryReaderGetsEveryEventOnceAndInOrderWhenEverItComes(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline sends %v", inline), func(t *testing.T) {
			const n = 300
			h := newHost()
			l := New(config(time.Minute), h, "s1", "openai")
			rs := readers()
			type result struct {
				out *sink
				end End
				err error
			}
			results := make(chan result, 8)
			start := func() {
				out := newSink()
				out.inline = inline
				rs.Start(t.Context(), l, 0, out, func(e End, err error) { results <- result{out, e, err} })
			}
			start() // before the first event
			for i := 1; i <= n; i++ {
				require.True(t, l.Emit("", token(i), true))
				if i == 1 || i == n/2 || i == n {
					start() // mid-stream and at the end, from the start
				}
			}
			l.End(StateComplete, "")
			require.Equal(t, StateComplete, <-h.ended)
			start() // after the end
			for range 5 {
				r := <-results
				require.Equal(t, EndDone, r.end)
				require.NoError(t, r.err)
				evs := client(t, r.out.String())
				require.Len(t, evs, n)
				for i, ev := range evs {
					require.Equal(t, fmt.Sprintf("s1:%d", i+1), ev.LastEventID)
					require.Equal(t, token(i+1), ev.Data)
				}
			}
			require.Zero(t, rs.Connections.Load(), "every reader left")
			require.Zero(t, l.Readers())
			require.EqualValues(t, n, h.tokens.Load())
			require.EqualValues(t, 1, h.firsts.Load(), "the first token is timed from the start, once")
		})
	}
}

func TestAResumeAfterAnyEventGetsExactlyTheBytesThatFollowedIt(t *testing.T) {
	h := newHost()
	l := New(config(time.Minute), h, "s1", "anthropic")
	var whole strings.Builder
	first := newSink()
	done := make(chan End, 1)
	readers().Start(t.Context(), l, 0, first, func(e End, _ error) { done <- e })
	for i := 1; i <= 20; i++ {
		require.True(t, l.Emit("content_block_delta", token(i), true))
	}
	require.True(t, l.Stop(StateStopped, "relay: stopped by the client"))
	require.Equal(t, EndDone, <-done)
	whole.WriteString(first.String())
	evs := client(t, whole.String())
	require.Len(t, evs, 22, "20 events, the status and Anthropic's own error")

	for pos := 0; pos <= l.Count(); pos++ {
		out := newSink()
		end, err := readers().Pump(t.Context(), l, pos, out)
		require.NoError(t, err)
		require.Equal(t, EndDone, end)
		b, _, _ := l.Read(0, 0, nil)
		offset := 0
		if pos > 0 {
			offset = b.Ends[pos-1]
		}
		require.Equal(t, whole.String()[offset:], out.String(), "resumed after event %d", pos)
	}
}

func TestAFaultCutsOnlyTheFirstConnectionAfterItsEvent(t *testing.T) {
	l := New(config(time.Minute), newHost(), "s1", "openai")
	l.SetDropAfter(3)
	require.Equal(t, 3, l.DropAfter())
	for i := 1; i <= 5; i++ {
		l.Emit("", token(i), true)
	}
	out := newSink()
	end, err := readers().Pump(t.Context(), l, 0, out)
	require.NoError(t, err)
	require.Equal(t, EndDrop, end)
	require.Len(t, client(t, out.String()), 3)

	l.End(StateComplete, "")
	again := newSink()
	end, _ = readers().Pump(t.Context(), l, 1, again)
	require.Equal(t, EndDone, end, "a resume from before the fault is not cut again")
	require.Len(t, client(t, again.String()), 4)
}

func TestALogEndsFailedAndSaysWhyWhenALimitIsPassed(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		data string
		want string
	}{
		{"an event over the size limit", Config{MaxEventSize: 8, MaxEvents: 10}, "123456789", "event 2 of stream s1 is 9 bytes, over the limit of 8"},
		{"one event too many", Config{MaxEventSize: 8, MaxEvents: 1}, "x", "stream s1 reached the limit of 1 events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost()
			l := New(&tc.cfg, h, "s1", "openai")
			cancelled := make(chan struct{})
			l.SetCancel(func() { close(cancelled) })
			require.True(t, l.Emit("", "ok", true))
			require.False(t, l.Emit("", tc.data, true))
			<-cancelled // the generator is told to stop
			require.Equal(t, StateFailed, <-h.ended)
			info := l.Info()
			require.Equal(t, StateFailed, info.State)
			require.Contains(t, info.Message, tc.want)
			require.True(t, info.UpstreamCancelled)
			evs := client(t, string(mustRead(l)))
			require.Len(t, evs, 2)
			require.Equal(t, stream.StatusEventType, evs[1].Type)
			var st struct {
				Status string `json:"status"`
				Error  struct{ Type, Code string }
			}
			require.NoError(t, json.Unmarshal([]byte(evs[1].Data), &st))
			require.Equal(t, "failed", st.Status)
			require.Equal(t, "trickle_status", st.Error.Type)
			require.False(t, l.Emit("", "late", true), "nothing is appended after the end")
		})
	}
}

func mustRead(l *Log) []byte {
	b, _, _ := l.Read(0, 0, nil)
	return b.Data
}

func TestStopSaysWhatItCostAndCancelsTheGeneratorOnce(t *testing.T) {
	h := newHost()
	l := New(config(time.Minute), h, "s1", "openai")
	var calls atomic.Int32
	l.SetCancel(func() { calls.Add(1) })
	for i := 1; i <= 4; i++ {
		l.Emit("", token(i), true)
	}
	var costs []store.Usage
	l.OnEnd(func(u store.Usage) { costs = append(costs, u) })
	require.True(t, l.Stop(StateStopped, "relay: stopped"))
	require.False(t, l.Stop(StateStopped, "again"), "a stream stops once")
	require.False(t, l.StopWith(StateCancelled, "again", false))
	require.EqualValues(t, 1, calls.Load(), "Stop reaches the generator at once, and once")
	require.Equal(t, []store.Usage{{CompletionTokens: 4}}, costs)
	require.Equal(t, StateStopped, <-h.ended)
	evs := client(t, string(mustRead(l)))
	require.Len(t, evs, 5, "no provider ending for OpenAI: its SDKs read the status's error")
	require.JSONEq(t, StatusData(stream.RelayStopped, "relay: stopped", &store.Usage{CompletionTokens: 4}), evs[4].Data)
	l.End(StateComplete, "") // the generator's own end after a Stop changes nothing
	require.Equal(t, StateStopped, l.Info().State)
}

func TestAShutdownStopEndsTheLogWithoutAStatusSoReadersCanResumeElsewhere(t *testing.T) {
	l := New(config(time.Minute), newHost(), "s1", "openai")
	l.Emit("", token(1), true)
	require.True(t, l.StopWith(StateCancelled, "relay: shutting down", false))
	require.Len(t, client(t, string(mustRead(l))), 1)
	require.Equal(t, StateCancelled, l.Info().State)
}

func TestUsageCountsTokensUntilTheModelReportsItsOwn(t *testing.T) {
	l := New(config(time.Minute), newHost(), "s1", "openai")
	l.EstimateTokens()
	l.Emit("", token(1), true)
	l.Emit("", token(2), true)
	l.Emit("ping", "{}", false) // not a token
	require.Equal(t, store.Usage{CompletionTokens: 2, Estimated: true}, l.Info().Usage)
	l.ReportTokens(9)
	l.ReportTokens(7) // a lower count never replaces a higher
	require.Equal(t, store.Usage{CompletionTokens: 9}, l.Info().Usage)
}

func TestTheLastReaderOfAClientThatWillNotResumeCancelsTheGenerationAtOnce(t *testing.T) {
	h := newHost()
	l := New(config(time.Hour), h, "s1", "openai")
	cancelled := make(chan struct{})
	l.SetCancel(func() { close(cancelled) })
	l.NoResume()
	l.Attach()
	l.Attach()
	l.Detach()
	require.Equal(t, StateRunning, l.Info().State, "one reader is still there")
	l.Detach()
	<-cancelled
	require.Equal(t, StateCancelled, <-h.ended)
	info := l.Info()
	require.Contains(t, info.Message, "will not resume")
	require.True(t, info.UpstreamCancelled)
}

func TestAStreamNobodyComesBackToIsCancelledAfterTheGraceAndOneReadElsewhereIsNot(t *testing.T) {
	h := newHost()
	l := New(config(5*time.Millisecond), h, "s1", "openai")
	l.Attach()
	l.Detach()
	require.Equal(t, StateCancelled, <-h.ended)
	require.Contains(t, l.Info().Message, "no client for 5ms")

	// Watched on another instance: the grace is renewed, until a reader
	// comes back here.
	h2 := newHost()
	h2.watched.Store(true)
	w := New(config(5*time.Millisecond), h2, "s2", "openai")
	w.Attach()
	w.Detach()
	w.Attach() // cancels the pending grace
	w.Detach()
	w.Attach()
	require.Equal(t, 1, w.Readers())
	w.End(StateComplete, "")
	require.Equal(t, StateComplete, <-h2.ended)
	w.Detach() // an ended stream starts no grace
}

func TestAReaderSaysTheClientLeftWhenItsContextEnds(t *testing.T) {
	l := New(config(time.Minute), newHost(), "s1", "openai")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan End, 1)
	readers().Start(ctx, l, 0, newSink(), func(e End, _ error) { done <- e })
	cancel()
	require.Equal(t, EndGone, <-done)
	require.Zero(t, l.Readers())
}

func TestAReaderLeavesAtTheShutdownDeadline(t *testing.T) {
	l := New(config(time.Minute), newHost(), "s1", "openai")
	rs := readers()
	kick, cancel := context.WithCancel(t.Context())
	rs.Kick = kick
	done := make(chan End, 1)
	rs.Start(t.Context(), l, 0, newSink(), func(e End, _ error) { done <- e })
	cancel()
	l.StopWith(StateCancelled, "shutdown", false) // what Shutdown does: it wakes the reader
	require.Equal(t, EndShutdown, <-done)
}

func TestAnIdleReaderSendsKeepAlives(t *testing.T) {
	l := New(config(time.Minute), newHost(), "s1", "openai")
	rs := readers()
	rs.Heartbeat = 5 * time.Millisecond
	out := newSink()
	done := make(chan End, 1)
	rs.Start(t.Context(), l, 0, out, func(e End, _ error) { done <- e })
	<-out.keepAlives
	<-out.keepAlives
	l.End(StateComplete, "")
	require.Equal(t, EndDone, <-done)
}

func TestASlowClientCutIsCountedAndHalfClosedUntilItHangsUp(t *testing.T) {
	l := New(config(time.Minute), newHost(), "s1", "openai")
	l.Emit("", token(1), true)
	rs := readers()
	out := newSink()
	out.sendErr = fmt.Errorf("write: %w", ErrCut)
	out.halfClose = true
	ctx, hangUp := context.WithCancel(t.Context())
	done := make(chan End, 1)
	var cutErr error
	rs.Start(ctx, l, 0, out, func(e End, err error) {
		cutErr = err
		done <- e
	})
	<-out.halfClosed
	select {
	case <-done:
		t.Fatal("the reader left before the client hung up")
	default:
	}
	hangUp()
	require.Equal(t, EndGone, <-done)
	require.ErrorIs(t, cutErr, ErrCut)
	require.EqualValues(t, 1, rs.Cuts.Load())

	// A write that failed otherwise is no cut.
	gone := newSink()
	gone.sendErr = errors.New("broken pipe")
	end, err := readers().Pump(t.Context(), l, 0, gone)
	require.Equal(t, EndGone, end)
	require.EqualError(t, err, "broken pipe")
	require.Empty(t, gone.halfClosed)
}

func TestAHeldEventEntersTheLogOnlyWhenReleased(t *testing.T) {
	h := newHost()
	l := New(config(time.Minute), h, "s1", "openai")
	k := &heldEvents{}
	l.SetHolder(k)
	require.True(t, l.Emit("", token(1), true))
	require.Zero(t, l.Count(), "held, not logged")
	l.End(StateComplete, "")
	require.Equal(t, []string{token(1), "end complete"}, k.taken)
	require.Equal(t, StateRunning, l.Info().State, "the end waits for the events before it")
	require.True(t, l.Release("", token(1), true))
	require.Equal(t, 1, l.Count())
	l.ReleaseEnd(StateComplete, "")
	require.Equal(t, StateComplete, <-h.ended)
	require.False(t, l.Release("", token(2), true))
	require.False(t, l.EmitAt(time.Now(), "", token(3), true, false), "an ended log holds nothing")
	require.Len(t, k.taken, 2)
}

type heldEvents struct{ taken []string }

func (k *heldEvents) Hold(_ time.Time, _ string, data string, _ bool) {
	k.taken = append(k.taken, data)
}
func (k *heldEvents) HoldEnd(state wire.State, _ string) {
	k.taken = append(k.taken, "end "+string(state))
}
func (k *heldEvents) Drop() {}

func TestAGatedLogShowsReadersOnlyWhatTheStoreHolds(t *testing.T) {
	h := newHost()
	l := New(config(time.Minute), h, "s1", "openai")
	l.Gate()
	out := newSink()
	out.inline = true
	done := make(chan End, 1)
	readers().Start(t.Context(), l, 0, out, func(e End, _ error) { done <- e })
	for i := 1; i <= 3; i++ {
		l.Emit("", token(i), true)
	}
	require.EqualValues(t, 3, h.touches.Load(), "the store hears of each event")
	require.True(t, l.StoredRunning())
	u, ok := l.TakeUnstored()
	require.True(t, ok)
	require.Equal(t, 1, u.First)
	require.Len(t, u.Events, 3)
	require.True(t, u.Running)
	require.Empty(t, out.String(), "nothing before the store holds it")

	l.Commit(2)
	l.End(StateComplete, "")
	u, _ = l.TakeUnstored()
	require.Empty(t, u.Events)
	require.True(t, u.Ended)
	require.Equal(t, string(StateComplete), u.State) // the store contract carries the state as its word
	require.Equal(t, 3, u.Usage.CompletionTokens)
	u, _ = l.TakeUnstored()
	require.False(t, u.Ended, "the end is handed over once")
	l.Commit(1) // an older acknowledgement changes nothing
	b, _, _ := l.Read(0, 0, nil)
	require.Len(t, b.Ends, 2)

	l.Commit(3)
	require.Equal(t, EndDone, <-done)
	require.Len(t, client(t, out.String()), 3)
}

func TestAStreamTheStoreLostEndsWithAPlainSentenceAndGivesWhatItHad(t *testing.T) {
	h := newHost()
	l := New(config(time.Minute), h, "s1", "openai")
	l.Gate()
	l.Emit("", token(1), true)
	l.StoreFailed("dial tcp 10.0.0.7:6379: connection refused")
	require.Equal(t, StateFailed, <-h.ended)
	evs := client(t, string(mustRead(l)))
	require.Len(t, evs, 2, "the event not yet stored, then the end")
	require.Contains(t, evs[1].Data, StoreLostMessage)
	require.NotContains(t, evs[1].Data, "10.0.0.7", "the store's address is for the log")
	_, ok := l.TakeUnstored()
	require.False(t, ok)
	require.False(t, l.StoredRunning())
	l.StoreFailed("again") // an ended log only wakes its readers
}

func TestAFollowedLogTakesTheStoresEventsInOrderAndEndsAsTheStoreSays(t *testing.T) {
	h := newHost()
	unfollowed := false
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := NewFollowed(config(time.Millisecond), h, "s1", "ollama", created, func() { unfollowed = true })
	require.True(t, l.Followed())
	require.Equal(t, created, l.Created())
	require.Equal(t, "ollama", l.Dialect())
	require.Equal(t, "s1", l.ID())

	out := newSink()
	done := make(chan End, 1)
	readers().Start(t.Context(), l, 0, out, func(e End, _ error) { done <- e })
	ev := sse.AppendMessage(nil, sse.Message{ID: "s1:1", Data: "x"})
	require.NoError(t, l.AppendFollowed(1, ev))
	require.ErrorContains(t, l.AppendFollowed(3, ev), "the store holds event 3 where event 2 was due")
	require.False(t, l.Stop(StateStopped, "x"), "another instance generates it: the store stops it")
	l.EndFollowed(StateComplete, "", false, store.Usage{CompletionTokens: 5, Estimated: true})
	l.EndFollowed(StateFailed, "late", true, store.Usage{}) // once
	require.Equal(t, EndDone, <-done)
	require.Equal(t, string(ev), out.String())
	info := l.Info()
	require.Equal(t, StateComplete, info.State)
	require.Equal(t, store.Usage{CompletionTokens: 5, Estimated: true}, info.Usage)

	require.Same(t, l, <-h.dropped, "forgotten once nobody read it for the grace")
	l.DropIfUnread()
	require.Same(t, l, <-h.dropped)
	l.Unfollow()
	require.True(t, unfollowed)
	select {
	case s := <-h.ended:
		t.Fatalf("a followed log's end is not this instance's to record (%s)", s)
	default:
	}
}

func TestAnAnthropicStreamThatDidNotCompleteEndsWithAnthropicsOwnError(t *testing.T) {
	for _, tc := range []struct {
		status stream.RelayStatus
		typ    string
	}{{stream.RelayFailed, "api_error"}, {stream.RelayStopped, "trickle_stopped"}, {"gone", "trickle_gone"}} {
		b := AppendProviderEnd(nil, "anthropic", tc.status, "why")
		evs := client(t, string(b))
		require.Len(t, evs, 1)
		require.Equal(t, "error", evs[0].Type)
		require.JSONEq(t, `{"type":"error","error":{"type":"`+tc.typ+`","message":"why"}}`, evs[0].Data)
	}
	require.Equal(t, "keep", string(AppendProviderEnd([]byte("keep"), "openai", stream.RelayFailed, "why")))
}

func TestStatusDataIsBothTheWidgetsStatusAndAnSDKsError(t *testing.T) {
	require.JSONEq(t, `{"status":"failed","message":"m","error":{"message":"m","type":"trickle_status","code":"failed"}}`,
		StatusData(stream.RelayFailed, "m", nil))
	require.JSONEq(t, `{"status":"stopped","message":"m","error":{"message":"m","type":"trickle_status","code":"stopped"},"usage":{"completion_tokens":3,"estimated":false}}`,
		StatusData(stream.RelayStopped, "m", &store.Usage{CompletionTokens: 3}))
}
