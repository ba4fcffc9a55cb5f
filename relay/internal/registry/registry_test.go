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
