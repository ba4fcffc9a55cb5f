package registry

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

func stream(id string) *streamlog.Log {
	return streamlog.New(&streamlog.Config{MaxEventSize: 1, MaxEvents: 1, Grace: time.Minute}, nil, id, "openai")
}

func TestReserveAdmitsAtMostTheLimitAtOnceEvenWhenRaced(t *testing.T) {
	g := New(5, time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var admitted, refused int
	for range 50 {
		wg.Go(func() {
			err := g.Reserve()
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				admitted++
				return
			}
			require.ErrorIs(t, err, ErrTooMany)
			require.ErrorContains(t, err, "limit 5")
			refused++
		})
	}
	wg.Wait()
	require.Equal(t, 5, admitted)
	require.Equal(t, 45, refused)
	require.EqualValues(t, 5, g.Running().Load())
	g.Unreserve()
	require.NoError(t, g.Reserve(), "a place given back is taken again")
}

func TestADrainingRegistryAdmitsNothing(t *testing.T) {
	g := New(5, time.Hour)
	require.False(t, g.Draining())
	g.Drain()
	require.True(t, g.Draining())
	require.ErrorIs(t, g.Reserve(), ErrShuttingDown)
	require.Zero(t, g.Running().Load())
}

func TestAnEndedGenerationGivesBackItsPlaceSaysSoAndStaysListed(t *testing.T) {
	g := New(1, time.Hour)
	require.NoError(t, g.Reserve())
	l := stream("s1")
	g.Add(l)
	require.Same(t, l, g.Lookup("s1"))
	require.Error(t, g.Reserve())
	g.Ended(l)
	<-g.Idle()
	require.Zero(t, g.Running().Load())
	require.Same(t, l, g.Lookup("s1"), "kept for resumes within the retention")
	require.Nil(t, g.Lookup("s2"))
}

func TestAFinishedStreamIsForgottenAfterTheRetention(t *testing.T) {
	g := New(4, time.Millisecond)
	require.NoError(t, g.Reserve())
	l := stream("s1")
	g.Add(l)
	g.Ended(l)
	require.Eventually(t, func() bool { return g.Lookup("s1") == nil }, 10*time.Second, time.Millisecond)
	require.Empty(t, g.All())
}

func TestAtMostTwiceTheLimitOfFinishedStreamsAreKept(t *testing.T) {
	g := New(2, time.Hour)
	for i := range 7 {
		require.NoError(t, g.Reserve())
		l := stream(fmt.Sprint("s", i))
		g.Add(l)
		g.Ended(l)
	}
	require.Len(t, g.All(), 4)
	for i := range 3 {
		require.Nil(t, g.Lookup(fmt.Sprint("s", i)), "the oldest go first")
	}
	for i := 3; i < 7; i++ {
		require.NotNil(t, g.Lookup(fmt.Sprint("s", i)))
	}
}

func TestAdoptKeepsTheStreamListedFirst(t *testing.T) {
	g := New(2, time.Hour)
	a := stream("s1")
	got, ok := g.Adopt(a)
	require.True(t, ok)
	require.Same(t, a, got)
	b := stream("s1")
	got, ok = g.Adopt(b)
	require.False(t, ok, "another request listed it meanwhile")
	require.Same(t, a, got)
}

func TestDropIdleUnlistsOnlyAnUnreadFollowedStream(t *testing.T) {
	g := New(2, time.Hour)
	l := stream("s1")
	g.Adopt(l)
	l.Attach()
	require.False(t, g.DropIdle(l), "read: kept")
	require.Same(t, l, g.Lookup("s1"))
	l.Detach()
	require.True(t, g.DropIdle(l))
	require.Nil(t, g.Lookup("s1"))

	// A stale follower does not unlist the stream listed now.
	newer := stream("s1")
	g.Adopt(newer)
	require.True(t, g.DropIdle(l))
	require.Same(t, newer, g.Lookup("s1"))
}

// The budget forgets finished streams oldest first to make room, never a
// running one: when the running ones alone hold it, a charge is refused
// (the growing stream fails) and so is a new stream, until one ends.
// Every forgetting gives its bytes back.
func TestTheBudgetForgetsFinishedStreamsOldestFirstAndNeverARunningOne(t *testing.T) {
	const u = minRoom
	g := New(10, time.Hour)
	g.SetMaxBytes(10 * u)
	run := func(id string) *streamlog.Log {
		require.NoError(t, g.Reserve())
		l := stream(id)
		g.Add(l)
		return l
	}
	for _, id := range []string{"s0", "s1"} {
		l := run(id)
		require.True(t, g.Retain(l, 3*u, false))
		g.Ended(l)
	}
	s2, s3 := run("s2"), run("s3")
	require.True(t, g.Retain(s2, 3*u, false))
	require.EqualValues(t, 9*u, g.Retained().Load())
	require.Zero(t, g.Evictions().Load())

	require.True(t, g.Retain(s3, 3*u, false))
	require.Nil(t, g.Lookup("s0"), "the oldest finished stream made room")
	require.NotNil(t, g.Lookup("s1"))
	require.True(t, g.Retain(s3, 3*u, false))
	require.Nil(t, g.Lookup("s1"))
	require.EqualValues(t, 2, g.Evictions().Load())
	require.EqualValues(t, 9*u, g.Retained().Load(), "the forgotten streams' bytes were given back")

	require.False(t, g.Retain(s3, 2*u, false), "only running streams left: refused")
	require.Same(t, s2, g.Lookup("s2"), "a running stream is never forgotten")
	require.True(t, g.Retain(s3, u, true), "forced (a terminal event): taken")
	require.EqualValues(t, 10*u, g.Retained().Load())
	require.ErrorIs(t, g.Reserve(), ErrMemoryFull, "no room for a new stream")
	require.EqualValues(t, 2, g.Running().Load())

	g.Ended(s2)
	require.NoError(t, g.Reserve(), "the ended stream is forgotten to make room")
	require.Nil(t, g.Lookup("s2"))
	require.EqualValues(t, 7*u, g.Retained().Load())
	require.EqualValues(t, 3, g.Evictions().Load())
}

// Streams forgotten at the end of their retention, by the cap on
// finished streams or when their follower is dropped give their bytes
// back.
func TestEveryWayOfForgettingGivesTheBytesBack(t *testing.T) {
	g := New(1, 20*time.Millisecond)
	g.SetMaxBytes(1 << 30)
	for i := range 3 {
		require.NoError(t, g.Reserve())
		l := stream(fmt.Sprint("s", i))
		g.Add(l)
		require.True(t, g.Retain(l, 100, false))
		g.Ended(l)
	}
	require.EqualValues(t, 200, g.Retained().Load(), "at most twice the limit of finished streams")
	f := stream("followed")
	g.Adopt(f)
	require.True(t, g.Retain(f, 50, true))
	require.True(t, g.DropIdle(f))
	require.EqualValues(t, 200, g.Retained().Load())
	require.Eventually(t, func() bool { return g.Retained().Load() == 0 }, 10*time.Second, time.Millisecond, "the retention ended")
	require.Zero(t, g.Evictions().Load(), "none was forgotten early")
}
