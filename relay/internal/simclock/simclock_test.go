package simclock

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/sim"
)

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

// host is a server that keeps nothing (streamlog.Host).
type host struct{}

func (host) Token(bool, time.Duration)        {}
func (host) Touch(*streamlog.Log)             {}
func (host) Ended(*streamlog.Log, wire.State) {}
func (host) Watched(string) bool              { return false }
func (host) DropFollowed(*streamlog.Log)      {}

// After Stop nothing more can be generated: the generator is off the
// simulated clock (nothing left to wake it) and the log refuses events.
func TestAfterStopTheGeneratorIsOffTheClockAndTheLogRefusesEvents(t *testing.T) {
	cfg := &streamlog.Config{MaxEventSize: 1 << 20, MaxEvents: 1 << 20, Grace: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	l := streamlog.New(cfg, host{}, "s", "openai")
	gen, err := sim.New(sim.Params{Dialect: "openai", Answer: "sample-100k", Gap: 5 * time.Millisecond})
	require.NoError(t, err)
	clocks := New()
	clocks.Start(l, gen)
	queued := func() int {
		n := 0
		for _, c := range clocks.clocks {
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
	require.True(t, l.Stop(streamlog.StateStopped, "stopped by the client"))
	require.Equal(t, 0, queued(), "stopped: off every clock")
	n := l.Count()
	require.False(t, l.Emit("", "late", true), "the log refuses events after Stop")
	require.Equal(t, n, l.Count())
	require.True(t, l.Info().UpstreamCancelled)
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
