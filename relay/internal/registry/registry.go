// Package registry is the relay's list of the streams this instance knows:
// the generations it runs (admitted within the stream limit, kept for the
// retention window after they end) and the streams it follows from a
// shared store.
package registry

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// Errors of Reserve, with how the relay refuses them.
var (
	ErrShuttingDown error = &wire.Error{Type: wire.TypeShuttingDown, RetryAfter: 5, Message: "relay: shutting down"}
	ErrTooMany      error = &wire.Error{Type: wire.TypeRateLimit, RetryAfter: 1, Message: "relay: too many streams"}
)

// Registry holds the streams by id. Its zero value is not usable: make
// one with New.
type Registry struct {
	max       int
	retention time.Duration

	mu       sync.Mutex
	streams  map[string]*streamlog.Log
	finished []string // ids of finished streams still kept, oldest first

	running  atomic.Int64 // generations running (reserved)
	draining atomic.Bool
	idle     chan struct{} // signalled when a generation ends
}

// New makes a registry that admits at most max generations at once and
// keeps a finished one for retention (and at most 2×max finished ones).
func New(max int, retention time.Duration) *Registry {
	return &Registry{max: max, retention: retention, streams: map[string]*streamlog.Log{}, idle: make(chan struct{}, 1)}
}

// Running is the counter of generations running, for metrics.
func (g *Registry) Running() *atomic.Int64 { return &g.running }

// Drain makes every later Reserve fail with ErrShuttingDown.
func (g *Registry) Drain()         { g.draining.Store(true) }
func (g *Registry) Draining() bool { return g.draining.Load() }

// Idle is signalled (without blocking, so it may coalesce) when a
// generation ends or a reservation is given back.
func (g *Registry) Idle() <-chan struct{} { return g.idle }

// WaitIdle waits until no generation runs (none reserved), or ctx is
// done; it returns ctx's error then. Every end and Unreserve signals it:
// it never polls.
func (g *Registry) WaitIdle(ctx context.Context) error {
	for g.running.Load() > 0 {
		select {
		case <-g.idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// signal wakes a WaitIdle (after running went down).
func (g *Registry) signal() {
	select {
	case g.idle <- struct{}{}:
	default:
	}
}

// Reserve takes a generation's place within the limit; Unreserve gives
// back one that did not start, Ended one that did.
func (g *Registry) Reserve() error {
	if g.draining.Load() {
		return ErrShuttingDown
	}
	if n := g.running.Add(1); n > int64(g.max) {
		g.running.Add(-1)
		return fmt.Errorf("%w: %d running, limit %d", ErrTooMany, n-1, g.max)
	}
	return nil
}

func (g *Registry) Unreserve() {
	g.running.Add(-1)
	g.signal()
}

// Add lists a generation that Reserve admitted.
func (g *Registry) Add(l *streamlog.Log) {
	g.mu.Lock()
	g.streams[l.ID()] = l
	g.mu.Unlock()
}

// Ended is called once per generation when it ends: its place is given
// back, and it stays listed for the retention window.
func (g *Registry) Ended(l *streamlog.Log) {
	g.running.Add(-1)
	g.signal()
	// At most twice the stream limit of finished streams are kept, so
	// that many short answers cannot pile up in memory.
	g.mu.Lock()
	g.finished = append(g.finished, l.ID())
	if over := len(g.finished) - 2*g.max; over > 0 {
		for _, id := range g.finished[:over] {
			delete(g.streams, id)
		}
		g.finished = append(g.finished[:0:0], g.finished[over:]...)
	}
	g.mu.Unlock()
	time.AfterFunc(g.retention, func() {
		g.mu.Lock()
		delete(g.streams, l.ID())
		if len(g.finished) > 0 && g.finished[0] == l.ID() {
			g.finished = g.finished[1:]
		}
		g.mu.Unlock()
	})
}

// Lookup is the stream listed under id, or nil.
func (g *Registry) Lookup(id string) *streamlog.Log {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams[id]
}

// Adopt lists a stream followed from the store, unless another request
// listed one under its id meanwhile: then that one is returned and l is
// not listed (its caller unfollows it).
func (g *Registry) Adopt(l *streamlog.Log) (*streamlog.Log, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if have := g.streams[l.ID()]; have != nil {
		return have, false
	}
	g.streams[l.ID()] = l
	return l, true
}

// DropIdle unlists a followed stream if nobody reads it, and says whether
// it did (its caller then unfollows it).
func (g *Registry) DropIdle(l *streamlog.Log) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	idle := l.Readers() == 0
	if idle && g.streams[l.ID()] == l {
		delete(g.streams, l.ID())
	}
	return idle
}

// All lists every stream listed, generated here or followed.
func (g *Registry) All() []*streamlog.Log {
	g.mu.Lock()
	defer g.mu.Unlock()
	all := make([]*streamlog.Log, 0, len(g.streams))
	for _, l := range g.streams {
		all = append(all, l)
	}
	return all
}
