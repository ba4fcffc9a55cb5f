package relay

import (
	"container/heap"
	"sync"
	"time"
)

// simClock runs every simulated generation of a server on one timer and
// one goroutine: a heap of the generations by the time their next event is
// due. With a timer per generation, each event cost a runtime timer
// operation and a goroutine started by time.AfterFunc, and ten thousand
// streams at 20 tokens/s woke the process 200,000 times a second; here the
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
	src.dueAt = t
	heap.Push(&c.due, src)
	if !c.running && (c.armedAt.IsZero() || t.Before(c.armedAt)) {
		c.armLocked(t)
	}
}

// remove forgets src (cancelled).
func (c *simClock) remove(src *simSource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if src.index >= 0 {
		heap.Remove(&c.due, src.index)
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
	var batch []*simSource
	for {
		now := time.Now()
		batch = batch[:0]
		for len(c.due) > 0 && !c.due[0].dueAt.After(now) {
			batch = append(batch, heap.Pop(&c.due).(*simSource))
		}
		if len(batch) == 0 {
			break
		}
		c.mu.Unlock()
		for _, src := range batch {
			src.step() // schedules its next event through at
		}
		c.mu.Lock()
	}
	c.running = false
	if len(c.due) > 0 {
		c.armLocked(c.due[0].dueAt)
	}
	c.mu.Unlock()
}

// simHeap orders generations by when their next event is due.
type simHeap []*simSource

func (h simHeap) Len() int           { return len(h) }
func (h simHeap) Less(i, j int) bool { return h[i].dueAt.Before(h[j].dueAt) }
func (h simHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *simHeap) Push(x any) {
	src := x.(*simSource)
	src.index = len(*h)
	*h = append(*h, src)
}
func (h *simHeap) Pop() any {
	old := *h
	src := old[len(old)-1]
	old[len(old)-1] = nil
	src.index = -1
	*h = old[:len(old)-1]
	return src
}
