// Package store is the contract between the relay and where its stream
// logs live beyond the process that generates them, in log terms: a store
// takes the events a relay appends to a stream, lets relays follow a
// stream another one generates, keeps a lease on every stream while its
// generator lives, and carries Stop to the relay generating a stream.
//
// Memory (the relay's default) keeps nothing beyond the process; the
// relay's RedisStore keeps logs in Redis Streams, shared by a fleet. Both
// pass storetest.Run, the one contract test, which another implementation
// runs too. A store never encodes events and never talks to clients: the
// relay does.
package store

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/trickle-dev/trickle/wire"
)

// Store keeps the relay's stream logs. A Store serves one relay.
//
// Every relay keeps the streams it serves in memory, as the generator
// writes them or as it follows them from the store: readers are always
// fanned out from there, so a thousand readers of one stream cost the
// store one follower.
type Store interface {
	// String names the store in logs and errors.
	String() string
	// Bind attaches the store to its relay (once) and starts what the
	// store runs in the background.
	Bind(h Host) error
	// Ready is nil when the store can take new streams.
	Ready() error
	// Durable reports that readers may only be sent what the store
	// holds (Stream.Stored): a client then never has an event another
	// relay cannot resume after. A store that is not durable is never
	// given a stream (Begin, Append).
	Durable() bool

	// Begin records a new stream generated here and takes its lease.
	Begin(ctx context.Context, s Stream) error
	// Append tells the store that s has news (events, its end); it is
	// called with the stream's lock held and must not block. The store
	// takes the news with s.Unstored and answers with s.Stored or s.Lost.
	Append(s Stream)
	// Follow follows a stream generated elsewhere, into the Follower the
	// host makes (Host.NewFollower), which it returns: ErrUnknown,
	// ErrExpired or ErrTrimmed when it cannot, or an error wrapping
	// ErrUnavailable.
	Follow(ctx context.Context, id string) (Follower, error)
	// Stop asks the relay generating stream id to stop it
	// (Host.StopLocal there).
	Stop(ctx context.Context, id string) error
	// Watched reports that clients on other relays read stream id, so
	// that the disconnect grace period must not cancel it.
	Watched(id string) bool
	// Close stops the background work after a last write of what is
	// pending.
	Close(ctx context.Context)
}

// Stream is a stream generated here, as its store sees it.
type Stream interface {
	ID() string
	Dialect() string
	Created() time.Time
	// Unstored hands the store the events it has not taken yet and, once,
	// the end; ok is false when the store has lost the stream.
	Unstored() (u Unstored, ok bool)
	// Stored records that the store holds the first n events (and the
	// end, once written): readers may be sent them.
	Stored(n int)
	// Lost ends a stream the store can no longer hold, with message.
	Lost(message string)
	// Running reports that the stream is still generated, held by the
	// store and not lost: the streams whose leases the store renews.
	Running() bool
}

// Usage is what a stream generated (the contract's wire.Usage).
type Usage = wire.Usage

// Unstored is what a store takes from a stream in one round trip.
type Unstored struct {
	First  int      // the number of the first event in Events (from 1)
	Events [][]byte // encoded SSE events, exactly the bytes clients get; never changed
	// Ended: the end is to be written, with State, Message and
	// UpstreamCancelled.
	Ended             bool
	State, Message    string
	UpstreamCancelled bool
	Usage             Usage // what was generated, written with the end
	Running           bool  // the stream still runs
}

// Follower is the log of a stream another relay generates, fed from the
// store.
type Follower interface {
	// Append adds event number seq; it fails when seq is not the next.
	Append(seq int, event []byte) error
	// End ends the stream as its terminal entry says.
	End(state, message string, upstreamCancelled bool, u Usage)
	// Lost ends the stream with message: the store cannot follow it.
	Lost(message string)
	// Events is the number of events so far.
	Events() int
	// Readers is the number of clients reading the stream here.
	Readers() int
}

// Host is the relay as its store sees it.
type Host interface {
	// Instance names this relay in the store (random, per process).
	Instance() string
	Logger() *slog.Logger
	Settings() Settings
	// Generated lists the streams generated here that are Running.
	Generated() []Stream
	// StopLocal stops a stream generated here (a Stop that reached the
	// store; by says from where).
	StopLocal(id, by string)
	// NewFollower makes the log of a stream another relay generates;
	// unfollow stops the store's following.
	NewFollower(id, dialect string, created time.Time, unfollow func()) Follower
}

// LimitStore is a Store that can also count the relay's per-identity
// limits (rate, generations at once, tokens a day) where every relay using
// it sees the counts: the relays of a fleet then share their clients'
// limits. A store that does not offer it leaves each relay counting in
// its own memory. The relay asks for it once, after Bind.
type LimitStore interface {
	Store
	// Limits is the store's Counter.
	Limits() Counter
}

// Counter is where a relay's limits are counted; storetest.Run checks the
// contract of a LimitStore's. Its calls that take a context may fail (the
// backing unreachable: wrap ErrUnavailable or not, the relay treats any
// failure as the store being unavailable); Release and Spend never block.
type Counter interface {
	// Allow counts one request of key against a rate of n requests per
	// per: n may come at once, then one each per/n (GCRA). It returns 0
	// when the request is allowed, else how long until one would be; a
	// request it refuses is not counted.
	Allow(ctx context.Context, key string, n int, per time.Duration) (time.Duration, error)
	// Refund takes back one request Allow counted against the same rate,
	// for a request that was refused after all.
	Refund(ctx context.Context, key string, n int, per time.Duration) error
	// Acquire takes one of key's max slots for lease (a generation); false
	// when all are taken. A slot taken by a relay that died lapses within
	// the lease (Settings.Lease).
	Acquire(ctx context.Context, key, lease string, max int) (bool, error)
	// Release frees lease's slot of key.
	Release(key, lease string)
	// Spent is what key spent on day (2006-01-02, UTC).
	Spent(ctx context.Context, key, day string) (int64, error)
	// Spend adds n to what key spent on day; n may be negative (a
	// reservation settled below what it held), and the sum stays at 0 or
	// more.
	Spend(key, day string, n int64)
	// Wait waits for the writes still under way (Release, Spend), so that
	// they are not lost when the relay closes.
	Wait()
}

// Owned is a Stream that belongs to the identity that made it (the
// relay's with auth on: only it may resume, inspect or stop the stream).
// A store that keeps Owner with the stream's meta in Begin, and hands it
// to the Follower of another relay (an OwnedFollower) in Follow, keeps
// streams their owners' across a fleet; a store that does not leaves a
// followed stream anyone's who knows its id.
type Owned interface {
	Owner() string // "" for anyone's
}

// OwnedFollower is a Follower that takes its stream's owner (Owned).
type OwnedFollower interface {
	SetOwner(identity string)
}

// Reserver is a Counter that reserves in one step: the relay holds each
// request's output cap against its identity's day at admission, and
// settles it to what the generation cost when it ends. A Counter without
// Reserve is asked Spent, then Spend: parallel requests can then all pass
// the check before any reservation is counted, so the day's budget holds
// only within one relay's own Memory-like ordering.
type Reserver interface {
	// Reserve adds n to what key spent on day unless that is already
	// budget or more, in one step no other Reserve or Spend interleaves
	// with; it returns what was spent before, and whether n was added.
	Reserve(ctx context.Context, key, day string, n, budget int64) (spent int64, ok bool, err error)
}

// Settings are the relay's options a store follows.
type Settings struct {
	Retention  time.Duration // a finished stream stays resumable this long
	Grace      time.Duration // a stream without readers runs this long
	Lease      time.Duration // a stream outlives its silent generator this long
	MaxEvents  int           // events of one stream
	MaxStreams int           // streams generated at once
}

// Why a stream cannot be followed.
var (
	// ErrUnknown: no relay knows the stream (it never existed, or it
	// expired long ago).
	ErrUnknown = errors.New("relay: unknown stream")
	// ErrExpired: the stream existed but its events are gone (retention).
	ErrExpired = errors.New("relay: stream expired")
	// ErrTrimmed: the store no longer holds the stream's first events.
	ErrTrimmed = errors.New("relay: stream trimmed")
	// ErrUnavailable is wrapped by every refusal because the store cannot
	// be reached.
	ErrUnavailable = errors.New("relay: the stream store is unavailable")
)

// Memory keeps every stream in the relay's memory only: nothing to run,
// nothing shared with another relay, nothing to follow.
func Memory() Store { return memory{} }

type memory struct{}

func (memory) String() string                                   { return "memory" }
func (memory) Bind(Host) error                                  { return nil }
func (memory) Ready() error                                     { return nil }
func (memory) Durable() bool                                    { return false }
func (memory) Begin(context.Context, Stream) error              { return nil }
func (memory) Append(Stream)                                    {}
func (memory) Follow(context.Context, string) (Follower, error) { return nil, ErrUnknown }
func (memory) Stop(context.Context, string) error               { return ErrUnknown }
func (memory) Watched(string) bool                              { return false }
func (memory) Close(context.Context)                            {}
