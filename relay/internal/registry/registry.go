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
	// ErrMemoryFull: the streams running hold the whole budget for
	// streams' logs (SetMaxBytes), so a new one could not grow.
	ErrMemoryFull error = &wire.Error{Type: wire.TypeRateLimit, Code: wire.CodeMemoryFull, RetryAfter: 5,
		Message: "relay: the relay's memory for streams is full (the streams running hold it); try again shortly"}
)

// Registry holds the streams by id. Its zero value is not usable: make
// one with New.
type Registry struct {
	max       int
	retention time.Duration

	mu       sync.Mutex
	streams  map[string]*streamlog.Log
	finished []*streamlog.Log // finished streams still kept, oldest first

	// The budget for the logs' bytes (SetMaxBytes): what every listed log
	// holds together (each log knows its own share, Log.Retained). It is
	// added to without the lock; making room takes it.
	maxBytes  int64
	retained  atomic.Int64
	evictions atomic.Int64 // finished streams forgotten early for the budget

	running  atomic.Int64 // generations running (reserved)
	draining atomic.Bool
	idle     chan struct{} // signalled when a generation ends
}

// New makes a registry that admits at most max generations at once and
// keeps a finished one for retention (and at most 2×max finished ones).
func New(max int, retention time.Duration) *Registry {
	return &Registry{max: max, retention: retention, streams: map[string]*streamlog.Log{}, idle: make(chan struct{}, 1)}
}

// SetMaxBytes bounds the bytes every log listed holds together (0: no
// bound; set before use). A log that grows past it makes room by
// forgetting the oldest finished streams; a running one is never
// forgotten: when the running streams alone fill it, the one that grows
// fails (Retain) and new ones are refused (Reserve, ErrMemoryFull).
func (g *Registry) SetMaxBytes(n int64) { g.maxBytes = n }

// Retained is the bytes the listed logs hold (a running one's with what
// it took ahead of its events), for metrics.
func (g *Registry) Retained() *atomic.Int64 { return &g.retained }

// Evictions counts the finished streams forgotten before their retention
// ended, to make room within SetMaxBytes.
func (g *Registry) Evictions() *atomic.Int64 { return &g.evictions }

// Retain charges n more bytes to l (streamlog.Config.Retain): false when
// they do not fit even once every finished stream is forgotten; force
// takes them anyway; a negative n gives back what l took ahead. It is
// called with l's lock held and takes no log's.
func (g *Registry) Retain(l *streamlog.Log, n int, force bool) bool {
	if n < 0 {
		g.retained.Add(-l.GiveBackRetained(int64(-n)))
		return true
	}
	// Every event comes here: within the budget it costs two atomic adds,
	// no lock (a little over it, by the events being added at the same
	// moment, at worst).
	if g.maxBytes == 0 || force || g.retained.Add(int64(n)) <= g.maxBytes {
		if g.maxBytes == 0 || force {
			g.retained.Add(int64(n))
		}
		l.AddRetained(int64(n))
		return true
	}
	g.retained.Add(-int64(n))
	g.mu.Lock()
	defer g.mu.Unlock()
	g.makeRoomLocked(int64(n))
	if g.retained.Add(int64(n)) > g.maxBytes {
		g.retained.Add(-int64(n))
		return false
	}
	l.AddRetained(int64(n))
	return true
}

// makeRoomLocked forgets the oldest finished streams until n more bytes
// fit within the budget, or none is left.
func (g *Registry) makeRoomLocked(n int64) {
	for g.retained.Load()+n > g.maxBytes && len(g.finished) > 0 {
		old := g.finished[0]
		g.finished[0] = nil
		g.finished = g.finished[1:]
		g.forgetLocked(old)
		g.evictions.Add(1)
	}
}

// forgetLocked unlists l and gives back its bytes.
func (g *Registry) forgetLocked(l *streamlog.Log) {
	if g.streams[l.ID()] == l {
		delete(g.streams, l.ID())
	}
	g.retained.Add(-l.TakeRetained())
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
	if g.maxBytes > 0 {
		// A new stream needs room to write its first event: with the
		// finished streams forgotten, the running ones must leave some.
		g.mu.Lock()
		g.makeRoomLocked(minRoom)
		total := g.retained.Load()
		full := total+minRoom > g.maxBytes
		g.mu.Unlock()
		if full {
			g.running.Add(-1)
			g.signal()
			return fmt.Errorf("%w: the logs hold %d bytes of %d", ErrMemoryFull, total, g.maxBytes)
		}
	}
	return nil
}

// minRoom is the room a new stream needs in the budget to be admitted:
// enough for a few events and its end.
const minRoom = 4 << 10

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
	g.finished = append(g.finished, l)
	if over := len(g.finished) - 2*g.max; over > 0 {
		for _, old := range g.finished[:over] {
			g.forgetLocked(old)
		}
		g.finished = append(g.finished[:0:0], g.finished[over:]...)
	}
	g.mu.Unlock()
	time.AfterFunc(g.retention, func() {
		g.mu.Lock()
		g.forgetLocked(l)
		if len(g.finished) > 0 && g.finished[0] == l {
			g.finished[0] = nil
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
	// Readers takes l's lock: never with ours held, since a log takes
	// ours with its own held (Retain, Ended).
	if l.Readers() != 0 {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.forgetLocked(l)
	return true
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
