package relay

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/sse"
)

// The log's fast path for tokens writes exactly what the sse encoder
// writes, for any data and any stream id, including ids and data the fast
// path must leave to the encoder.
func TestTheLogEncodesEveryEventAsTheSSEEncoderDoes(t *testing.T) {
	events := []struct{ event, data string }{
		{"", `{"delta":"# De"}`},
		{"", "plain words"},
		{"", ""},
		{"", "two\nlines"},
		{"", "cr\rline"},
		{"", "crlf\r\nline"},
		{"", " leading space"},
		{StatusEvent, `{"status":"failed"}`},
		{"ping", "x"},
		{"", "[DONE]"},
	}
	for _, id := range []string{"abcdefghijklmnop", "with\nnewline", "nul\x00id", "co:lon", ""} {
		l := newLog(nil, id, "plain")
		var want []byte
		for i, ev := range events {
			l.appendLocked(ev.event, ev.data)
			want = sse.AppendMessage(want, sse.Message{ID: id + ":" + strconv.Itoa(i+1), Event: ev.event, Data: ev.data})
			require.Equal(t, len(want), l.ends[i], "id %q, event %d ends where the encoder's does", id, i+1)
		}
		require.Equal(t, string(want), string(l.buf), "id %q", id)
	}
}

// The simulated model's clock takes generations out in order of their due
// time, whatever was pushed and removed before (the oracle: a sorted list).
func TestTheSimHeapYieldsGenerationsInDueOrderAfterAnyRemovals(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var h simHeap
		live := map[*simSource]int64{}
		for range rng.IntN(60) {
			switch {
			case rng.IntN(4) == 0 && len(h) > 0:
				// Cancel one (any position), as simSource.cancel does.
				i := rng.IntN(len(h))
				src := h[i].src
				require.Same(t, src, h.remove(i), "round %d", round)
				require.Equal(t, -1, src.index)
				delete(live, src)
			default:
				src := &simSource{index: -1}
				at := rng.Int64N(50) // ties on purpose
				h.push(src, at)
				live[src] = at
			}
			for i, e := range h {
				require.Equal(t, i, e.src.index, "round %d: every entry knows its place", round)
			}
		}
		var want []int64
		for _, at := range live {
			want = append(want, at)
		}
		slices.Sort(want)
		var got []int64
		for len(h) > 0 {
			src := h.remove(0)
			got = append(got, live[src])
		}
		require.Equal(t, want, got, "round %d", round)
	}
}

// A close reason is cut between characters, never inside one, and fits
// the close frame, for every length around the limit and characters of
// every UTF-8 width.
func TestCloseReasonsAreCutBetweenCharactersWithinTheFrame(t *testing.T) {
	for _, ch := range []string{"a", "é", "€", "😀"} {
		for n := 100; n <= 140; n++ {
			for pad := range 4 {
				s := strings.Repeat("x", pad) + strings.Repeat(ch, n)
				got := trim(s)
				require.LessOrEqual(t, len(got), maxCloseReason, "%q×%d", ch, n)
				require.True(t, utf8.ValidString(got), "%q×%d+%d: %q", ch, n, pad, got)
				if len(s) <= maxCloseReason {
					require.Equal(t, s, got)
					continue
				}
				body, ok := strings.CutSuffix(got, "...")
				require.True(t, ok)
				require.True(t, strings.HasPrefix(s, body))
				require.Greater(t, len(body), maxCloseReason-3-utf8.UTFMax, "cut no more than one character short")
			}
		}
	}
}

// After Stop nothing more can be generated: the generator is off the
// simulated clock (nothing left to wake it) and the log refuses events.
func TestAfterStopTheGeneratorIsOffTheClockAndTheLogRefusesEvents(t *testing.T) {
	srv, err := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	defer srv.Shutdown(context.Background())
	gen, err := sim.New(sim.Params{Dialect: "openai", Answer: "sample-100k", Gap: 5 * time.Millisecond})
	require.NoError(t, err)
	l, err := srv.startSim(gen, sim.Params{Dialect: "openai"}, 0)
	require.NoError(t, err)
	queued := func() int {
		n := 0
		for _, c := range srv.clocks {
			c.mu.Lock()
			for _, e := range c.due {
				if e.src.l == l {
					n++
				}
			}
			c.mu.Unlock()
		}
		return n
	}
	require.Equal(t, 1, queued(), "running: its next event is on a clock")
	require.True(t, l.stop(StateStopped, "stopped by the client"))
	require.Equal(t, 0, queued(), "stopped: off every clock")
	n := l.count()
	require.False(t, l.emit("", "late", true), "the log refuses events after Stop")
	require.Equal(t, n, l.count())
	require.True(t, l.info().UpstreamCancelled)
}

// BenchmarkAppendToken is the log's append of one token event, by the fast
// path (an id without bytes to clean) and through the sse encoder.
func BenchmarkAppendToken(b *testing.B) {
	for _, c := range []struct{ name, id string }{{"fast", "abcdefghijklmnop"}, {"encoder", "co:lon"}} {
		b.Run(c.name, func(b *testing.B) {
			l := newLog(nil, c.id, "plain")
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%4096 == 0 {
					l.buf, l.ends = l.buf[:0], l.ends[:0]
				}
				l.appendLocked("", `{"choices":[{"delta":{"content":"word "}}]}`)
			}
		})
	}
}

// BenchmarkSimHeap is one due generation taken out of the simulated
// model's clock and pushed back for its next event, among 10,000.
func BenchmarkSimHeap(b *testing.B) {
	var h simHeap
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		h.push(&simSource{index: -1}, rng.Int64N(1e9))
	}
	b.ReportAllocs()
	for b.Loop() {
		at := h[0].at
		src := h.remove(0)
		h.push(src, at+rng.Int64N(1e8))
	}
}
