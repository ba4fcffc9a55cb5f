// Package simclock runs the simulated model's generations on a few shared
// clocks: a heap of the generations by the time their next event is due,
// one timer and one goroutine per clock. It emits into the generations'
// logs and never writes to a client.
package simclock

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/sim"
)

// Clocks are a server's clocks, one per CPU: the clock's goroutine also
// writes the events of the readers that are caught up (see streamlog), and
// one goroutine cannot write every stream's events (bench/load).
type Clocks struct {
	clocks []*simClock
	next   atomic.Uint32
}

// New makes one clock per CPU.
func New() *Clocks {
	c := &Clocks{}
	for range runtime.GOMAXPROCS(0) {
		c.clocks = append(c.clocks, newSimClock())
	}
	return c
}

// Start drives gen's events into l, from now, on the next clock; Stop on
// l takes the generation off its clock.
func (c *Clocks) Start(l *streamlog.Log, gen *sim.Generator) {
	clock := c.clocks[c.next.Add(1)%uint32(len(c.clocks))]
	src := &simSource{l: l, g: gen, start: l.Created(), clock: clock, index: -1}
	l.SetCancel(src.cancel)
	src.step(time.Now(), false)
}

// simClock runs every simulated generation of a server on one timer and
// one goroutine: a heap of the generations by the time their next event is
// due. With a timer per generation, each event cost a runtime timer
// operation and a goroutine started by time.AfterFunc, and every token of
// every stream woke the process; here the
// events due together are emitted in one pass, and the goroutine runs only
// while events are due.
type simClock struct {
	mu      sync.Mutex
	due     simHeap
	timer   *time.Timer
	running bool      // a goroutine is emitting (it re-arms the timer when done)
	armedAt time.Time // when the timer is set to fire; zero when it is not
}

func newSimClock() *simClock {
	c := &simClock{}
	c.timer = time.AfterFunc(time.Hour, c.tick)
	c.timer.Stop()
	return c
}

// at schedules src's next event at t.
func (c *simClock) at(src *simSource, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.due.push(src, t.UnixNano())
	if !c.running && (c.armedAt.IsZero() || t.Before(c.armedAt)) {
		c.armLocked(t)
	}
}

// remove forgets src (cancelled).
func (c *simClock) remove(src *simSource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if src.index >= 0 {
		c.due.remove(src.index)
	}
}

func (c *simClock) armLocked(t time.Time) {
	c.armedAt = t
	c.timer.Reset(max(time.Until(t), 0))
}

// tick emits every event that is due, then sleeps until the next one.
func (c *simClock) tick() {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return
	}
	c.running, c.armedAt = true, time.Time{}
	var batch []simEntry
	for {
		now := time.Now()
		batch = batch[:0]
		t := now.UnixNano()
		for len(c.due) > 0 && c.due[0].at <= t {
			at := c.due[0].at
			batch = append(batch, simEntry{at, c.due.remove(0)})
		}
		if len(batch) == 0 {
			break
		}
		c.mu.Unlock()
		for _, e := range batch {
			// On time, the clock's goroutine writes the event to the
			// readers that are caught up (the fastest way out). Late,
			// the machine is short of CPU: the readers' own goroutines
			// send it when they get to run, with whatever else has
			// accumulated by then in the same write, and the clock gets
			// on with the events due next.
			e.src.step(now, t-e.at < int64(lateInline))
		}
		c.mu.Lock()
	}
	c.running = false
	if len(c.due) > 0 {
		c.armLocked(time.Unix(0, c.due[0].at))
	}
	c.mu.Unlock()
}

// lateInline is how late an event may be for the clock to write it itself.
const lateInline = 10 * time.Millisecond

// simHeap orders generations by when their next event is due: a binary
// heap of values (the due time next to the pointer, so that comparisons
// read no generation), written out rather than through container/heap,
// whose interface calls showed in bench/load's profile (see
// BenchmarkSimHeap).
type simHeap []simEntry

type simEntry struct {
	at  int64 // unix nanoseconds
	src *simSource
}

func (h *simHeap) push(src *simSource, at int64) {
	*h = append(*h, simEntry{at, src})
	h.up(len(*h) - 1)
}

// remove takes out the entry at i and returns its generation.
func (h *simHeap) remove(i int) *simSource {
	old := *h
	src := old[i].src
	last := len(old) - 1
	if i != last {
		old[i] = old[last]
		old[i].src.index = i
	}
	old[last] = simEntry{}
	*h = old[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	src.index = -1
	return src
}

func (h simHeap) up(i int) {
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if h[p].at <= e.at {
			break
		}
		h[i] = h[p]
		h[i].src.index = i
		i = p
	}
	h[i] = e
	e.src.index = i
}

// down sifts the entry at i down; it reports whether it moved.
func (h simHeap) down(i0 int) bool {
	e, i, n := h[i0], i0, len(h)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].at < h[c].at {
			c = r
		}
		if e.at <= h[c].at {
			break
		}
		h[i] = h[c]
		h[i].src.index = i
		i = c
	}
	h[i] = e
	e.src.index = i
	return i > i0
}

// simSource drives a sim.Generator on the server's simClock: between two
// events a generation holds no goroutine and no timer of its own, so ten
// thousand idle generations cost little. Events are due at absolute offsets
// from the start, so lateness never accumulates.
type simSource struct {
	l     *streamlog.Log
	g     *sim.Generator
	start time.Time
	clock *simClock

	mu      sync.Mutex
	due     time.Duration
	pending sim.Message
	has     bool
	stopped bool

	// Owned by the clock (under its lock).
	index int // in the clock's heap; -1 when not in it
}

// step emits the pending event and every next one already due at now,
// then schedules the first that is not. inline lets the readers that are
// caught up be sent the event from this goroutine (see streamlog.Log.EmitAt).
func (s *simSource) step(now time.Time, inline bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.stopped {
		if s.has {
			s.has = false
			if !s.l.EmitAt(now, s.pending.Event, s.pending.Data, s.pending.Token, inline) {
				s.stopped = true
				return
			}
		}
		m, ok := s.g.Next()
		if !ok {
			s.stopped = true
			if s.g.Failed() {
				s.l.End(streamlog.StateFailed, "simulated upstream failure (error_after)")
			} else {
				s.l.End(streamlog.StateComplete, "")
			}
			return
		}
		s.due += m.Delay
		s.pending, s.has = m, true
		if at := s.start.Add(s.due); at.After(now) {
			s.clock.at(s, at)
			return
		}
	}
}

func (s *simSource) cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.clock.remove(s)
}
