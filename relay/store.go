// The stream store: where a generation's log lives beyond the process that
// generates it (package store), and the relay as its store sees it.

package relay

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/redisstore"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/wire"
)

// Store keeps the relay's stream logs (package store has the contract):
// MemoryStore (the default) keeps them in this process only; RedisStore
// keeps them in Redis Streams so that a fleet of relays sharing one Redis
// resumes and stops any stream on any instance. Code outside may
// implement it; storetest.Run checks an implementation. A store that
// also implements store.LimitStore counts the per-identity limits for
// the fleet (RedisStore does).
type Store = store.Store

// ErrStoreUnavailable is wrapped by every refusal because the stream store
// cannot be reached.
var ErrStoreUnavailable = store.ErrUnavailable

// MemoryStore keeps every stream in this process's memory (the default):
// nothing to run, and nothing shared with another instance.
func MemoryStore() Store { return store.Memory() }

// RedisStore keeps stream logs in Redis Streams at url
// (redis://[:password@]HOST:PORT/DB, or rediss:// for TLS). Nothing is
// dialled before the server starts; a Redis that cannot be reached makes
// /healthz report not ready and new streams get 503 until it can.
func RedisStore(url string) (Store, error) {
	st, err := redisstore.New(url)
	if err != nil {
		return nil, &OptionError{Option: "RedisStore", Value: fmt.Sprintf("%q", url), Reason: "not a redis:// URL: " + err.Error()}
	}
	return st, nil
}

// storeHost is the server as its store sees it (store.Host).
type storeHost Server

func (h *storeHost) Instance() string     { return h.instance }
func (h *storeHost) Logger() *slog.Logger { return h.log }
func (h *storeHost) Settings() store.Settings {
	c := &h.cfg
	return store.Settings{Retention: c.retention, Grace: c.grace, Lease: c.lease, MaxEvents: c.maxEvents, MaxStreams: c.maxStreams}
}

// Generated lists the running streams this instance generates and keeps
// in the store.
func (h *storeHost) Generated() []store.Stream {
	// A log's state is read under its own lock, and never with the
	// registry's held: a stream that ends takes the registry's lock with
	// its own held (streamEnded). Followed is set before a log is listed
	// and never changed.
	var out []store.Stream
	for _, l := range h.reg.All() {
		if !l.Followed() && l.StoredRunning() {
			out = append(out, (*generated)(l))
		}
	}
	return out
}

func (h *storeHost) StopLocal(id, by string) {
	s := (*Server)(h)
	if l := s.reg.Lookup(id); l != nil && !l.Followed() {
		s.stop(context.Background(), l, by)
	}
}

func (h *storeHost) NewFollower(id, dialect string, created time.Time, unfollow func()) store.Follower {
	l := streamlog.NewFollowed(&h.logCfg, (*logHost)(h), id, dialect, created, unfollow)
	h.follows.made(id, l)
	return (*followed)(l)
}

// follows are the Follow calls under way, one per stream at a time: the
// log NewFollower makes during a call is the call's, found by the
// stream's id. The relay never looks at the Follower the store returns,
// so a store may hand back its own (a wrapper, say).
type follows struct {
	mu    sync.Mutex
	calls map[string]*followCall
}

type followCall struct {
	sync.Mutex     // held by the one find following the stream
	waiting    int // finds holding or waiting for it
	log        *streamlog.Log
}

// begin waits for the stream's call, if another find follows it, and
// takes it.
func (f *follows) begin(id string) *followCall {
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]*followCall{}
	}
	c := f.calls[id]
	if c == nil {
		c = &followCall{}
		f.calls[id] = c
	}
	c.waiting++
	f.mu.Unlock()
	c.Lock()
	return c
}

// take returns the log NewFollower made during the call c, once.
func (f *follows) take(c *followCall) *streamlog.Log {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := c.log
	c.log = nil
	return l
}

// end gives the call back.
func (f *follows) end(id string, c *followCall) {
	f.mu.Lock()
	c.log = nil
	if c.waiting--; c.waiting == 0 {
		delete(f.calls, id)
	}
	f.mu.Unlock()
	c.Unlock()
}

// made records the log NewFollower made for stream id.
func (f *follows) made(id string, l *streamlog.Log) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.calls[id]; c != nil {
		c.log = l
	}
}

// generated is a log generated here as its store sees it (store.Stream).
type generated streamlog.Log

func (g *generated) log() *streamlog.Log                   { return (*streamlog.Log)(g) }
func (g *generated) ID() string                            { return g.log().ID() }
func (g *generated) Dialect() string                       { return g.log().Dialect() }
func (g *generated) Created() time.Time                    { return g.log().Created() }
func (g *generated) Unstored() (u store.Unstored, ok bool) { return g.log().TakeUnstored() }
func (g *generated) Stored(n int)                          { g.log().Commit(n) }
func (g *generated) Lost(message string)                   { g.log().StoreFailed(message) }
func (g *generated) Running() bool                         { return g.log().StoredRunning() }
func (g *generated) Owner() string                         { return g.log().Owner() }

// followed is a log followed from the store (store.Follower).
type followed streamlog.Log

func (f *followed) log() *streamlog.Log                { return (*streamlog.Log)(f) }
func (f *followed) Append(seq int, event []byte) error { return f.log().AppendFollowed(seq, event) }
func (f *followed) End(state, message string, uc bool, u store.Usage) {
	f.log().EndFollowed(wire.State(state), message, uc, u)
}
func (f *followed) Lost(message string) { f.log().StoreFailed(message) }
func (f *followed) Events() int         { return f.log().Count() }
func (f *followed) Readers() int        { return f.log().Readers() }
func (f *followed) SetOwner(id string)  { f.log().SetOwner(id) }
