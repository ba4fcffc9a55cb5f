// Package storetest is the contract test of a store.Store (and of the
// limits' Counter of a store.LimitStore): the one test
// the relay's memory and Redis stores both pass, and that another
// implementation runs the same way:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return mystore.New(backend) })
//	}
//
// open must return a new store on the same backing each time it is called
// within one Run (relays sharing it); the stream ids of the subtests are
// distinct.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/limit/limittest"
	"github.com/trickle-dev/trickle/relay/store"
)

// Lease is the lease Run gives its stores: short, so that a dead
// generator is noticed quickly, and long enough for a loaded machine.
const Lease = time.Second

// wait is how long a store may take to do what it was asked.
const wait = 10 * time.Second

// Run checks the contract of the stores open makes.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Run("the limits a store counts are one count for every relay using it", func(t *testing.T) {
		st, _ := bind(t, open)
		if _, ok := st.(store.LimitStore); !ok {
			t.Skip("the store counts no limits: each relay counts its own")
		}
		limittest.Run(t, func() store.Counter {
			st, _ := bind(t, open)
			return st.(store.LimitStore).Limits()
		})
	})
	t.Run("an unknown stream cannot be followed", func(t *testing.T) {
		st, _ := bind(t, open)
		_, err := st.Follow(context.Background(), "never-was")
		if !errors.Is(err, store.ErrUnknown) {
			t.Fatalf("Follow of an unknown stream: %v, want store.ErrUnknown", err)
		}
		if st.Watched("never-was") {
			t.Fatal("an unknown stream is watched")
		}
	})
	t.Run("a store that is not durable is given nothing and holds nothing", func(t *testing.T) {
		st, _ := bind(t, open)
		if st.Durable() {
			t.Skip("durable")
		}
		if err := st.Stop(context.Background(), "never-was"); !errors.Is(err, store.ErrUnknown) {
			t.Fatalf("Stop of a stream a store that is not durable cannot hold: %v, want store.ErrUnknown", err)
		}
	})
	t.Run("another relay follows every event in order, then the end", func(t *testing.T) {
		a, ha := bind(t, open)
		if !a.Durable() {
			t.Skip("not durable: nothing to follow")
		}
		b, hb := bind(t, open)
		s := ha.generate(t, a, "s1")
		s.emit(a, 3)
		s.waitStored(t, 3)

		f := followOK(t, b, hb, "s1")
		f.waitEvents(t, s.events(), "the replay")
		s.emit(a, 2)
		s.waitStored(t, 5)
		f.waitEvents(t, s.events(), "the live tail")
		s.end(a, "stopped", "stopped by the client", true)
		f.waitEnd(t, "stopped", "stopped by the client", true)
	})
	t.Run("a stream that ended is replayed whole with its end", func(t *testing.T) {
		a, ha := bind(t, open)
		if !a.Durable() {
			t.Skip("not durable: nothing to follow")
		}
		b, hb := bind(t, open)
		s := ha.generate(t, a, "s2")
		s.emit(a, 4)
		s.end(a, "complete", "", false)
		s.waitStored(t, 4)
		f := followOK(t, b, hb, "s2")
		f.waitEvents(t, s.events(), "the replay")
		f.waitEnd(t, "complete", "", false)
	})
	t.Run("Stop on another relay reaches the relay generating the stream", func(t *testing.T) {
		a, ha := bind(t, open)
		if !a.Durable() {
			t.Skip("not durable: nothing to stop elsewhere")
		}
		b, _ := bind(t, open)
		s := ha.generate(t, a, "s3")
		s.emit(a, 1)
		s.waitStored(t, 1)
		if err := b.Stop(context.Background(), "s3"); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		ha.waitStop(t, "s3")
	})
	t.Run("readers elsewhere make the stream watched", func(t *testing.T) {
		a, ha := bind(t, open)
		if !a.Durable() {
			t.Skip("not durable")
		}
		b, hb := bind(t, open)
		s := ha.generate(t, a, "s4")
		s.emit(a, 1)
		s.waitStored(t, 1)
		hb.readers.Store(1)
		f := followOK(t, b, hb, "s4")
		f.waitEvents(t, s.events(), "the replay")
		eventually(t, func() bool { return a.Watched("s4") }, "the stream is watched while a follower has readers")
	})
	t.Run("a stream whose generator died ends failed for its followers", func(t *testing.T) {
		a, ha := bind(t, open)
		if !a.Durable() {
			t.Skip("not durable")
		}
		b, hb := bind(t, open)
		s := ha.generate(t, a, "s5")
		s.emit(a, 2)
		s.waitStored(t, 2)
		f := followOK(t, b, hb, "s5")
		f.waitEvents(t, s.events(), "the replay")
		// The generator's store goes away without writing the end: its
		// lease is no longer renewed.
		ha.gone.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		a.Close(ctx)
		cancel()
		f.waitFailed(t)
	})
}

// bind opens a store and binds it to a fresh host, closed at the end.
func bind(t *testing.T, open func(t *testing.T) store.Store) (store.Store, *host) {
	t.Helper()
	st := open(t)
	h := &host{instance: "relay-" + strconv.FormatInt(time.Now().UnixNano(), 36), stops: make(chan string, 16)}
	if err := st.Bind(h); err != nil {
		t.Fatalf("Bind: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		st.Close(ctx)
	})
	eventually(t, func() bool { return st.Ready() == nil }, "the store is ready")
	return st, h
}

func followOK(t *testing.T, st store.Store, h *host, id string) *follower {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	got, err := st.Follow(ctx, id)
	if err != nil {
		t.Fatalf("Follow %s: %v", id, err)
	}
	f, ok := got.(*follower)
	if !ok || f != h.lastFollower() {
		t.Fatalf("Follow returned %T, not the Follower the host made", got)
	}
	return f
}

// eventually waits for cond, failing the test with what after wait.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", wait, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// host is a relay as a store sees it.
type host struct {
	instance string
	stops    chan string
	readers  atomic.Int64
	gone     atomic.Bool // Generated lists nothing: the relay died

	mu        sync.Mutex
	streams   []*stream
	followers []*follower
}

func (h *host) Instance() string     { return h.instance }
func (h *host) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
func (h *host) Settings() store.Settings {
	return store.Settings{Retention: time.Minute, Grace: 2 * time.Second, Lease: Lease, MaxEvents: 1000, MaxStreams: 100}
}

func (h *host) Generated() []store.Stream {
	if h.gone.Load() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []store.Stream
	for _, s := range h.streams {
		if s.Running() {
			out = append(out, s)
		}
	}
	return out
}

func (h *host) StopLocal(id, by string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.streams {
		if s.id == id {
			h.stops <- id
		}
	}
}

func (h *host) NewFollower(id, dialect string, created time.Time, unfollow func()) store.Follower {
	f := &follower{id: id, h: h, unfollow: unfollow}
	h.mu.Lock()
	h.followers = append(h.followers, f)
	h.mu.Unlock()
	return f
}

func (h *host) lastFollower() *follower {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.followers) == 0 {
		return nil
	}
	return h.followers[len(h.followers)-1]
}

func (h *host) waitStop(t *testing.T, id string) {
	t.Helper()
	select {
	case got := <-h.stops:
		if got != id {
			t.Fatalf("StopLocal(%s), want %s", got, id)
		}
	case <-time.After(wait):
		t.Fatalf("Stop of %s did not reach the relay generating it", id)
	}
}

// generate begins a stream generated by h's relay on st.
func (h *host) generate(t *testing.T, st store.Store, id string) *stream {
	t.Helper()
	s := &stream{id: id, created: time.Now(), state: "running"}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := st.Begin(ctx, s); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	h.mu.Lock()
	h.streams = append(h.streams, s)
	h.mu.Unlock()
	return s
}

// stream is a stream generated here (store.Stream).
type stream struct {
	id      string
	created time.Time

	mu        sync.Mutex
	evs       [][]byte
	taken     int // events handed to the store
	endTaken  bool
	stored    int
	lost      string
	state     string
	message   string
	cancelled bool
}

func (s *stream) ID() string         { return s.id }
func (s *stream) Dialect() string    { return "openai" }
func (s *stream) Created() time.Time { return s.created }

func (s *stream) Unstored() (store.Unstored, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost != "" {
		return store.Unstored{}, false
	}
	u := store.Unstored{First: s.taken + 1, Events: s.evs[s.taken:], Running: s.state == "running"}
	s.taken = len(s.evs)
	if !u.Running && !s.endTaken {
		u.Ended, u.State, u.Message, u.UpstreamCancelled = true, s.state, s.message, s.cancelled
		s.endTaken = true
	}
	return u, true
}

func (s *stream) Stored(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stored = max(s.stored, n)
}

func (s *stream) Lost(message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = message
}

func (s *stream) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost == "" && s.state == "running"
}

// emit appends n events and tells the store, as the relay does (with the
// stream's lock held).
func (s *stream) emit(st store.Store, n int) {
	s.mu.Lock()
	for range n {
		seq := len(s.evs) + 1
		s.evs = append(s.evs, fmt.Appendf(nil, "id: %s:%d\ndata: {\"n\":%d}\n\n", s.id, seq, seq))
	}
	st.Append(s)
	s.mu.Unlock()
}

func (s *stream) end(st store.Store, state, message string, cancelled bool) {
	s.mu.Lock()
	s.state, s.message, s.cancelled = state, message, cancelled
	st.Append(s)
	s.mu.Unlock()
}

func (s *stream) events() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.evs...)
}

func (s *stream) waitStored(t *testing.T, n int) {
	t.Helper()
	eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.stored >= n
	}, "the store acknowledges "+strconv.Itoa(n)+" events")
}

// follower is a stream followed from the store (store.Follower).
type follower struct {
	id       string
	h        *host
	unfollow func()

	mu    sync.Mutex
	evs   [][]byte
	ended bool
	state string
	msg   string
	uc    bool
	lost  string
	err   error // an Append out of order
}

func (f *follower) Append(seq int, event []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if want := len(f.evs) + 1; seq != want {
		f.err = fmt.Errorf("event %d where %d was due", seq, want)
		return f.err
	}
	f.evs = append(f.evs, append([]byte(nil), event...))
	return nil
}

func (f *follower) End(state, message string, uc bool, _ store.Usage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended, f.state, f.msg, f.uc = true, state, message, uc
}

func (f *follower) Lost(message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lost = message
}

func (f *follower) Events() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.evs)
}

func (f *follower) Readers() int { return int(f.h.readers.Load()) }

func (f *follower) waitEvents(t *testing.T, want [][]byte, what string) {
	t.Helper()
	eventually(t, func() bool { return f.Events() >= len(want) }, what+": "+strconv.Itoa(len(want))+" events")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		t.Fatalf("%s: %v", what, f.err)
	}
	for i := range want {
		if string(f.evs[i]) != string(want[i]) {
			t.Fatalf("%s: event %d is %q, want the bytes appended, %q", what, i+1, f.evs[i], want[i])
		}
	}
}

func (f *follower) waitEnd(t *testing.T, state, msg string, uc bool) {
	t.Helper()
	eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.ended
	}, "the follower gets the end")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state != state || f.msg != msg || f.uc != uc {
		t.Fatalf("end %q %q %v, want %q %q %v", f.state, f.msg, f.uc, state, msg, uc)
	}
}

// waitFailed waits for the follower to end failed, by a terminal entry or
// as lost.
func (f *follower) waitFailed(t *testing.T) {
	t.Helper()
	eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.ended && f.state == "failed" || f.lost != ""
	}, "the follower of a dead generator's stream ends failed")
}
