package relay

import (
	"sync"
	"time"
)

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
