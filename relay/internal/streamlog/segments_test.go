package streamlog

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wire"
)

// A log longer than a segment reads, from every position, exactly the
// bytes the sse encoder writes for its events, in batches that each lie
// in one segment and end on an event; the store is handed each event
// whole. Segments never copy what was written: a long log is never one
// array reallocated to twice its size.
func TestALogOfManySegmentsReadsAsOneFromEveryPosition(t *testing.T) {
	cfg := &Config{MaxEventSize: 1 << 20, MaxEvents: 1000}
	l := New(cfg, quietHost{}, "abcdefghijklmnop", "openai")
	l.Gate() // the store's writer sees every event (TakeUnstored)
	var want []byte
	var ends []int
	for i := range 60 {
		data := strings.Repeat(strconv.Itoa(i%10), 20<<10+i*1013)
		require.True(t, l.Emit("", data, true))
		want = sse.AppendMessage(want, sse.Message{ID: l.ID() + ":" + strconv.Itoa(i+1), Data: data})
		ends = append(ends, len(want))
	}
	l.Stop(wire.StateStopped, "enough")
	require.NotEmpty(t, l.sealed, "the log spans several segments")
	full := l.ends[len(l.ends)-1]
	l.Commit(len(l.ends))
	for pos := 0; pos <= len(l.ends); pos++ {
		start := 0
		if pos > 0 {
			start = l.ends[pos-1]
		}
		got := readAll(t, l, pos)
		require.Len(t, got, full-start, "from event %d", pos)
		if pos < len(ends) {
			require.Equal(t, string(want[start:]), string(got[:len(want)-start]), "from event %d", pos)
		}
	}
	l.stored = 0 // the writer takes it all again
	u, ok := l.TakeUnstored()
	require.True(t, ok)
	require.Len(t, u.Events, len(l.ends))
	for i, ev := range u.Events[:len(ends)] {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		require.Equal(t, string(want[start:ends[i]]), string(ev), "event %d whole", i+1)
	}
}

// readAll reads the log from pos to its end, batch after batch, checking
// that each batch lies in one segment and ends on an event.
func readAll(t *testing.T, l *Log, pos int) []byte {
	t.Helper()
	var out []byte
	for {
		b, next, done := l.Read(pos, 0, nil)
		if done || len(b.Ends) == 0 {
			return out
		}
		require.Equal(t, b.Base+len(b.Data), b.Ends[len(b.Ends)-1], "a batch ends on an event")
		require.Equal(t, next-pos, len(b.Ends))
		require.LessOrEqual(t, len(b.Data), 2*segmentSize, "a batch lies in one segment")
		out = append(out, b.Data...)
		pos = next
	}
}

// A log counts against the relay's budget exactly the bytes it holds once
// it has ended (8 more an event), whatever it took ahead while it ran; a
// budget that cannot give it a step ahead still gives it what an event
// needs, and one that cannot give that fails the stream in the relay's
// words, the refused event unread.
func TestALogCountsExactlyWhatItHoldsAgainstTheBudget(t *testing.T) {
	for _, limit := range []int{1 << 30, 3000} {
		var total int
		cfg := &Config{MaxEventSize: 1 << 10, MaxEvents: 1000, Retain: func(_ *Log, n int, force bool) bool {
			if !force && total+n > limit {
				return false
			}
			total += n
			return true
		}}
		l := New(cfg, quietHost{}, "abcdefghijklmnop", "openai")
		emitted := 0
		for range 40 {
			if !l.Emit("", strings.Repeat("x", 100), true) {
				break
			}
			emitted++
			require.LessOrEqual(t, total, limit)
		}
		l.Stop(wire.StateStopped, "enough")
		in := l.Info()
		require.Equal(t, l.sizeLocked()+eventOverhead*len(l.ends), total, "limit %d: exactly what the log holds", limit)
		if limit < 1<<30 {
			require.Less(t, emitted, 40, "the budget ran out")
			require.Equal(t, wire.StateFailed, in.State)
			require.Contains(t, in.Message, "the relay's memory for streams is full")
			require.Equal(t, emitted+1, len(l.ends), "the refused event was taken back; the end was added")
		} else {
			require.Equal(t, 40, emitted)
		}
	}
}
