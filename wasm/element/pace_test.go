package element

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestThePacerPostsAtOnceWhileThePagesFramesAreUnknownOrStale(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := Pacer{Margin: 3 * time.Millisecond}
	require.Equal(t, t0, p.PostAt(t0), "no page frame acknowledged yet")

	p.Applied(t0)
	later := t0.Add(Stale + time.Millisecond)
	require.Equal(t, later, p.PostAt(later), "the last page frame is too old to predict the next")
	earlier := t0.Add(-time.Millisecond)
	require.Equal(t, earlier, p.PostAt(earlier), "a clock that went back predicts nothing")
}

func TestThePacerPostsAMarginBeforeThePagesNextAnimationFrame(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	t0 := time.Unix(1000, 0)
	period := time.Second / 60
	for _, tc := range []struct {
		name  string
		after time.Duration // now, after the acknowledged page frame
		want  time.Duration // the post, after the acknowledged page frame
	}{
		{"right after the page's frame: before its next one", ms(0.5), period - ms(3)},
		{"just before the deadline: still that frame", period - ms(3.1), period - ms(3)},
		{"at the deadline: now", period - ms(3), period - ms(3)},
		{"past the deadline: the frame after", period - ms(2.9), 2*period - ms(3)},
		{"between the next frame and its successor's deadline", period + ms(1), 2*period - ms(3)},
		{"frames later", 10*period + ms(5), 11*period - ms(3)},
		{"in the last margin before a later frame", 4*period - ms(1), 5*period - ms(3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Pacer{Margin: ms(3)}
			p.Applied(t0.Add(-period))
			p.Applied(t0)
			require.Equal(t, period, p.Period())
			got := p.PostAt(t0.Add(tc.after))
			require.Equal(t, tc.want, got.Sub(t0))
			require.False(t, got.Before(t0.Add(tc.after)), "never in the past")
		})
	}
}

func TestThePacerMeasuresThePagesFrameIntervalFromItsAcknowledgements(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := Pacer{Margin: 2 * time.Millisecond}
	require.Equal(t, time.Second/60, p.Period(), "60 Hz until measured")

	// A 120 Hz display, acknowledgements every one to three frames.
	period := time.Second / 120
	at := t0
	for _, frames := range []int{3, 2, 1, 2} {
		at = at.Add(time.Duration(frames) * period)
		p.Applied(at)
	}
	require.Equal(t, period, p.Period(), "the shortest interval is the display's")

	p.Applied(at.Add(time.Millisecond))
	require.Equal(t, period, p.Period(), "a timer's acknowledgement (hidden page) is not a display's interval")
}

// Every byte that arrives at least Margin before one of the page's
// animation frames is posted before that frame, and at most one message
// goes per page frame: simulated over arrivals at every phase of the frame.
func TestThePacerShowsEveryArrivalInTheFirstFrameItCanMakeWithOneMessagePerFrame(t *testing.T) {
	t0 := time.Unix(1000, 0)
	period := time.Second / 60
	margin := 3 * time.Millisecond
	p := Pacer{Margin: margin}
	p.Applied(t0.Add(-period))
	p.Applied(t0)
	frame := func(i int) time.Time { return t0.Add(time.Duration(i) * period) }

	step := 250 * time.Microsecond
	var timer time.Time // a post is due then (zero: none)
	posts := map[int]int{}
	for now := t0.Add(step); now.Before(frame(60)); now = now.Add(step) {
		if !timer.IsZero() && !now.Before(timer) {
			// The post goes: which page frame does it make?
			i := int(timer.Sub(t0)/period) + 1
			require.True(t, frame(i).Sub(timer) >= margin, "posted %v before frame %d", frame(i).Sub(timer), i)
			posts[i]++
			timer = time.Time{}
		}
		// Bytes arrive now; the first arrival since the last post sets
		// the timer, later ones go with it.
		if timer.IsZero() {
			timer = p.PostAt(now)
			next := int(now.Sub(t0)/period) + 1
			due := frame(next)
			if due.Sub(now) < margin {
				due = frame(next + 1)
			}
			require.Equal(t, due.Add(-margin), timer, "arrival at %v after t0", now.Sub(t0))
		}
	}
	for i, n := range posts {
		require.Equal(t, 1, n, "page frame %d got %d messages", i, n)
	}
}

func TestAWorkerArmsOneTimerPerFrameAndPostsWhenItFires(t *testing.T) {
	t0 := time.Unix(1000, 0)
	period := time.Second / 60
	p := Pacer{Margin: 3 * time.Millisecond}
	p.Applied(t0)
	p.Applied(t0.Add(period))
	now := t0.Add(period + 2*time.Millisecond)

	post, wait := p.Due(now, true)
	require.False(t, post, "a worker waits for the margin before the page's next frame")
	require.Equal(t, period-2*time.Millisecond-p.Margin, wait)

	post, wait = p.Due(now.Add(time.Millisecond), true)
	require.False(t, post, "more bytes before the timer fires wait for the same post")
	require.Zero(t, wait, "no second timer is armed")

	p.Fired()
	post, wait = p.Due(now.Add(wait), true)
	require.True(t, post, "the timer fired: the frame goes")
	require.Zero(t, wait)

	post, wait = p.Due(now.Add(2*time.Millisecond), true)
	require.False(t, post, "the next frame is paced again")
	require.Positive(t, wait)
}

func TestTheMainThreadAndAStalePagePostAtOnce(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := Pacer{Margin: 3 * time.Millisecond}
	p.Applied(t0)
	post, wait := p.Due(t0.Add(time.Millisecond), false)
	require.True(t, post, "on the main thread a frame goes in the page's animation frame")
	require.Zero(t, wait)

	post, wait = p.Due(t0.Add(Stale+time.Millisecond), true)
	require.True(t, post, "a worker whose page frames are stale posts at once")
	require.Zero(t, wait)
}

// An answer's end goes at once, whenever it falls between the page's
// frames, armed timer or not; the pace holds for every frame before and
// after it.
func TestAnAnswersEndIsPostedAtOnceAndThePaceHoldsAroundIt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	period := time.Second / 30 // the page applies frames at 30 Hz (host.js)
	for step := time.Duration(0); step < period; step += time.Millisecond {
		for _, armed := range []bool{false, true} {
			p := Pacer{Margin: 3 * time.Millisecond}
			p.Applied(t0)
			p.Applied(t0.Add(period))
			now := t0.Add(period + step)
			if armed {
				post, wait := p.Due(now, true)
				if post {
					continue // at the deadline: nothing is armed
				}
				require.Positive(t, wait)
				now = now.Add(wait / 2)
			}
			p.End()
			post, wait := p.Due(now, true)
			require.True(t, post, "%v after the page's frame (armed %v): the end goes at once", step, armed)
			require.Zero(t, wait)

			// The frame after the end is paced again: by the timer still
			// armed, or by a new one.
			post, wait = p.Due(now.Add(time.Microsecond), true)
			require.False(t, post, "%v (armed %v): the frame after the end is paced", step, armed)
			if armed {
				require.Zero(t, wait, "the armed timer still decides")
				p.Fired()
				post, _ = p.Due(now.Add(time.Millisecond), true)
				require.True(t, post)
			} else {
				require.Positive(t, wait)
			}
		}
	}

	// On the main thread an end is no different: every frame goes at once.
	p := Pacer{}
	p.End()
	post, _ := p.Due(t0, false)
	require.True(t, post)
	post, _ = p.Due(t0, false)
	require.True(t, post)
}
