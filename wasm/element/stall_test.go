package element

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// delta is one plain-dialect SSE event carrying text.
func delta(text string) []byte { return []byte(`data: {"delta":"` + text + `"}` + "\n\n") }

func thinkingDelta(text string) []byte {
	return []byte(`data: {"choices":[{"index":0,"delta":{"reasoning_content":"` + text + `"}}]}` + "\n\n")
}

func TestStallAfterIsTheLongerOfTheFloorAndThreeP95Gaps(t *testing.T) {
	cases := []struct {
		p95, want time.Duration
	}{
		{0, MinStall},
		{20 * time.Millisecond, MinStall},
		{500 * time.Millisecond, MinStall},
		{501 * time.Millisecond, 1503 * time.Millisecond},
		{2 * time.Second, 6 * time.Second},
	}
	for _, c := range cases {
		require.Equal(t, c.want, StallAfter(c.p95), "p95 %v", c.p95)
	}
}

func TestTheStallNoticeShowsOnceAfterSilenceAndTheNextTokenClearsIt(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	s := newSession(t, Config{Dialect: "plain", Now: clock.Now})
	var sc screen
	step := func(d time.Duration, chunk string) protocol.Patch {
		clock.now = clock.now.Add(d)
		if chunk != "" {
			require.NoError(t, s.Write(delta(chunk)))
		}
		p := s.Frame()
		sc.apply(t, p)
		return p
	}

	// Before the first token there is nothing to stall.
	p := step(5*time.Second, "")
	require.False(t, p.StalledChanged, "waiting for the first token is not a stall")
	_, ok := s.NextAnnouncement()
	require.False(t, ok)

	for i := 0; i < 20; i++ {
		p = step(20*time.Millisecond, "word ")
		require.False(t, p.StalledChanged)
	}
	due, ok := s.NextAnnouncement()
	require.True(t, ok, "the session asks for a frame when the notice would be due")
	require.Equal(t, clock.now.Add(MinStall), due)

	p = step(MinStall-time.Millisecond, "")
	require.False(t, p.StalledChanged, "not yet")
	require.False(t, s.Dirty())
	clock.now = clock.now.Add(time.Millisecond)
	require.True(t, s.Dirty(), "the notice is due: a frame would change something")
	p = step(0, "")
	require.True(t, p.Stalled && p.StalledChanged)
	require.Equal(t, StallNotice, sc.status, "said in the status region")

	for i := 0; i < 3; i++ {
		p = step(time.Second, "")
		require.False(t, p.StalledChanged, "said once")
		require.False(t, p.StatusChanged)
	}

	p = step(10*time.Millisecond, "back")
	require.True(t, p.StalledChanged)
	require.False(t, p.Stalled, "the next token clears it")
	require.Empty(t, sc.status)
}

func TestASlowModelIsNotStalledAtItsOwnPace(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	s := newSession(t, Config{Dialect: "plain", Now: clock.Now})
	for i := 0; i < 40; i++ {
		clock.now = clock.now.Add(800 * time.Millisecond)
		require.NoError(t, s.Write(delta("w ")))
		require.False(t, s.Frame().StalledChanged, "gaps of 0.8 s are this model's pace")
	}
	clock.now = clock.now.Add(2300 * time.Millisecond)
	require.False(t, s.Frame().StalledChanged, "below 3 × p95 (2.4 s)")
	clock.now = clock.now.Add(100 * time.Millisecond)
	p := s.Frame()
	require.True(t, p.Stalled && p.StalledChanged, "at 3 × p95")
}

func TestThinkingCountsAsLifeAndTheEndClearsTheNotice(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	s := newSession(t, Config{Now: clock.Now})
	for i := 0; i < 10; i++ {
		clock.now = clock.now.Add(time.Second)
		require.NoError(t, s.Write(thinkingDelta("hmm ")))
		require.False(t, s.Frame().StalledChanged, "reasoning arriving every second is no stall")
	}
	clock.now = clock.now.Add(2 * time.Second)
	p := s.Frame()
	require.True(t, p.Stalled, "silence after reasoning is")
	s.End(nil)
	p = s.Frame()
	require.True(t, p.Final)
	require.True(t, p.StalledChanged)
	require.False(t, p.Stalled, "no notice once the answer has ended")
	_, on := s.stallAt()
	require.False(t, on, "no stall is scheduled after the end")
}

func TestTimeToFirstAnswerTokenComesAfterThinking(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	s := newSession(t, Config{Now: clock.Now})
	clock.now = clock.now.Add(100 * time.Millisecond)
	require.NoError(t, s.Write(thinkingDelta("let me think")))
	clock.now = clock.now.Add(900 * time.Millisecond)
	require.NoError(t, s.Write([]byte(`data: {"choices":[{"index":0,"delta":{"content":"Answer"}}]}`+"\n\n")))
	m := s.Metrics()
	require.Equal(t, 100.0, m.TTFT, "the first visible token is the reasoning")
	require.Equal(t, 1000.0, m.TTFAT, "the answer's own first token")
	require.Contains(t, m.JSON(), `"ttft_ms":100,"ttfat_ms":1000,`)

	// Without thinking both are the same.
	s = newSession(t, Config{Dialect: "plain", Now: clock.Now})
	clock.now = clock.now.Add(250 * time.Millisecond)
	require.NoError(t, s.Write(delta("hi")))
	m = s.Metrics()
	require.Equal(t, 250.0, m.TTFT)
	require.Equal(t, m.TTFT, m.TTFAT)
}
