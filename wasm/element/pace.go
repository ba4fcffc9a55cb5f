package element

import "time"

// Pacer decides when the widget's Web Worker posts a frame to the page, so
// that a token is painted in the page's first animation frame after it
// arrived, for one message per page frame.
//
// The page applies frames in its animation frames and acknowledges each
// applied one with that animation frame's time (Applied). A frame posted
// the moment bytes arrive would show them no sooner — the page paints at
// its next animation frame either way — but bytes arriving after it would
// wait for its acknowledgement, one whole frame more, or need a message
// of their own (each a task on the page's main thread: one per network
// chunk cost the page more than the whole rendering). So the worker posts
// once per page frame, as late as it safely can: Margin before the page's
// next animation frame, with everything that arrived by then. Bytes that
// arrive after that deadline go in the next frame's message.
//
// The page's animation frames are at Period intervals from the last one
// acknowledged; Period is the shortest interval seen between two
// acknowledgements (a display's refresh interval: 16.7 ms at 60 Hz), and
// a page frame acknowledged more than Stale ago is not extrapolated from
// (the page may have been hidden or idle): then the frame goes at once.
type Pacer struct {
	_ incomparable
	// Margin is how long before the page's animation frame the frame is
	// posted: Go's frame building, the message's trip to the page's main
	// thread and the worker's timer lateness must fit in it.
	Margin time.Duration

	last   time.Time     // the last acknowledged animation frame
	period time.Duration // the shortest interval between two seen

	armed  bool // a timer runs for the next post (Due)
	fired  bool // that timer fired (Fired): post at the next Due
	ending bool // an answer ended (End): post at the next Due
}

// DefaultPostMargin is the Pacer's Margin in the widget.
const DefaultPostMargin = 3 * time.Millisecond

// Stale is how old the last acknowledged page frame may be for the next
// ones to be predicted from it.
const Stale = time.Second

// frame60Hz is the period assumed until two acknowledgements measure one.
const frame60Hz = time.Second / 60

// Applied records that the page applied a frame in its animation frame of
// time at.
func (p *Pacer) Applied(at time.Time) {
	if !p.last.IsZero() && at.After(p.last) {
		// Intervals of a few frames (the page had nothing to apply in
		// between) are multiples of the period; the shortest is the period.
		// Under 4 ms is not a display's (a timer stood in).
		if d := at.Sub(p.last); d >= 4*time.Millisecond && (p.period == 0 || d < p.period) {
			p.period = d
		}
	}
	p.last = at
}

// Period is the page's animation frame interval as measured (60 Hz until
// measured).
func (p *Pacer) Period() time.Duration {
	if p.period == 0 {
		return frame60Hz
	}
	return p.period
}

// PostAt is when to post a frame holding what arrived by now: now when the
// page's animation frames are unknown or stale, else Margin before the
// first page animation frame that is still at least Margin away.
func (p *Pacer) PostAt(now time.Time) time.Time {
	if p.last.IsZero() || now.Sub(p.last) > Stale || now.Before(p.last) {
		return now
	}
	period := p.Period()
	// The first animation frame after now, then the first whose deadline
	// is not past.
	next := p.last.Add(period * (now.Sub(p.last)/period + 1))
	deadline := next.Add(-p.Margin)
	for deadline.Before(now) {
		deadline = deadline.Add(period)
	}
	return deadline
}

// Due says what to do when a frame has something new to show: post it
// now, or arm a timer for wait and post when it fired (Fired, then Due
// again); wait is zero while a timer already runs. Only a worker paces
// (worker): on the page's main thread frames go in its animation frame.
func (p *Pacer) Due(now time.Time, worker bool) (post bool, wait time.Duration) {
	if p.ending {
		// A timer still armed stays in charge of the post after this one.
		p.ending = false
		return true, 0
	}
	if worker && !p.fired {
		if p.armed {
			return false, 0
		}
		if at := p.PostAt(now); at.After(now) {
			p.armed = true
			return false, at.Sub(now)
		}
	}
	p.fired = false
	return true, 0
}

// Fired records that the timer Due armed fired.
func (p *Pacer) Fired() { p.armed, p.fired = false, true }

// End records that an answer ended (its connection closed, or the reader
// stopped it): the next Due posts at once, whatever the pace. That frame
// carries the answer's end, which the page shows in its next animation
// frame (host.js): the final text follows the last token by a page frame,
// not by up to a whole frame of the pace and the page's cadence more.
func (p *Pacer) End() { p.ending = true }
