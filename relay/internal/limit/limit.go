// Package limit counts what each identity of the relay may spend: its
// requests per period (a GCRA rate), its generations running at once, and
// its output tokens per UTC day. The counts live in this process (Memory)
// or in Redis (Redis), where a fleet of relays shares them. It never
// answers a client: the relay turns a *Refusal into its 429.
package limit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/trickle-dev/trickle/relay/store"
)

// Rate is a request rate: N requests per Per. Up to N may come at once;
// after that one more each Per/N.
type Rate struct {
	N   int
	Per time.Duration
}

// IsZero reports an unset rate (no rate limit).
func (r Rate) IsZero() bool { return r == Rate{} }

// String writes the rate as ParseRate reads it ("20/min").
func (r Rate) String() string {
	switch r.Per {
	case time.Second:
		return strconv.Itoa(r.N) + "/s"
	case time.Minute:
		return strconv.Itoa(r.N) + "/min"
	case time.Hour:
		return strconv.Itoa(r.N) + "/h"
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

// units are the periods ParseRate reads.
var units = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "second": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute,
	"h": time.Hour, "hour": time.Hour,
}

// ParseRate reads a rate written N/s, N/min or N/h ("20/min"; also
// N/sec, N/second, N/m, N/minute, N/hour).
func ParseRate(s string) (Rate, error) {
	n, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, errors.New("want N/s, N/min or N/h (e.g. 20/min)")
	}
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || count <= 0 {
		return Rate{}, fmt.Errorf("the count %q is not a positive whole number (want e.g. 20/min)", n)
	}
	per, ok := units[strings.ToLower(strings.TrimSpace(unit))]
	if !ok {
		return Rate{}, fmt.Errorf("the period %q is not s, min or h (want e.g. 20/min)", unit)
	}
	return Rate{N: count, Per: per}, nil
}

// Settings are the limits of every identity; a zero field is no limit.
type Settings struct {
	Rate         Rate  // requests
	Streams      int   // generations running at once
	TokensPerDay int64 // output tokens per UTC day
}

// On reports whether any limit is set.
func (s Settings) On() bool { return !s.Rate.IsZero() || s.Streams > 0 || s.TokensPerDay > 0 }

// The limits, as /metrics labels them.
const (
	RateLimit   = "rate"
	StreamLimit = "streams"
	TokenLimit  = "tokens"
)

// The error codes of the limits' refusals.
const (
	CodeRateLimited          = wire.CodeRateLimited
	CodeTooManyStreams       = wire.CodeTooManyStreams
	CodeTokenBudgetExhausted = wire.CodeTokenBudgetExhausted
)

// Refusal is a request over one of its identity's limits.
type Refusal struct {
	Limit      string        // RateLimit, StreamLimit or TokenLimit
	Code       wire.Code     // the error code clients get: rate_limited, too_many_streams, token_budget_exhausted
	RetryAfter time.Duration // when trying again may succeed
	Message    string        // what happened and what the client can do
}

func (r *Refusal) Error() string { return r.Message }

// Refusal is how the relay refuses the request: 429 with the limit's code
// and Retry-After.
func (r *Refusal) Refusal() wire.Error {
	return wire.Error{Type: wire.TypeRateLimit, Code: r.Code, Message: r.Message, RetryAfter: RetryAfter(r.RetryAfter)}
}

// Counter is where the counts live: Memory, Redis, or what a store
// offers (store.LimitStore).
type Counter = store.Counter

// Limiter applies Settings to identities, counting in a Counter.
type Limiter struct {
	set     Settings
	c       Counter
	refused func(limit string)
	now     func() time.Time
	// settle is how long a request over the stream limit waits for a
	// slot before it is refused (Settle).
	settle time.Duration
	// freed wakes a waiting request when a ticket of this limiter gives
	// its slot back (a Memory counter has its own).
	freed signal
}

// Settle is how long a request over its stream limit waits for one of
// its identity's generations to free a slot before it is refused. A
// generation's last event reaches its client a moment before its slot
// is freed (its end is recorded after the event is sent, and a fleet's
// release is one more Redis write), so a client that asks again as
// soon as an answer ends would otherwise be refused for the answer it
// has just read.
const Settle = time.Second

// New limits by s in c; refused, if not nil, is called with the limit of
// each refusal (the metric).
func New(s Settings, c Counter, refused func(limit string)) *Limiter {
	if refused == nil {
		refused = func(string) {}
	}
	return &Limiter{set: s, c: c, refused: refused, now: time.Now, settle: Settle}
}

// Settings are the limiter's limits.
func (l *Limiter) Settings() Settings { return l.set }

// Counter is where the limiter counts (nil for a nil Limiter).
func (l *Limiter) Counter() Counter {
	if l == nil {
		return nil
	}
	return l.c
}

// Wait waits for the counts still being written (Redis's releases and
// spends), so that they are not lost when the relay closes its client.
func (l *Limiter) Wait() {
	if l != nil {
		l.c.Wait()
	}
}

// Admit counts one request of the identity key: its token budget, then
// its rate, then a slot for its generation. The budget holds the
// request's output cap (reserve: what the request may generate at most,
// 0 when nothing caps it) against the identity's day until End settles it
// to what the generation cost, so parallel requests cannot together
// spend more than the budget and one request's cap. It returns the
// ticket to End when the generation ends (or Refund when the request is
// refused after all), a *Refusal naming the limit, or the counter's
// failure (wrapping store.ErrUnavailable). A request refused here counts
// against no limit. A nil Limiter admits everything (a nil ticket, which
// End and Refund ignore).
func (l *Limiter) Admit(ctx context.Context, key string, reserve int64) (*Ticket, error) {
	if l == nil {
		return nil, nil
	}
	s := l.set
	t := &Ticket{l: l, key: key}
	if s.TokensPerDay > 0 {
		now := l.now().UTC()
		t.day = day(now)
		spent, ok, err := l.reserve(ctx, key, t.day, max(0, reserve))
		if err != nil {
			return nil, unavailable(err)
		}
		if ok {
			t.reserved = max(0, reserve)
		} else {
			midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
			retry := midnight.Sub(now)
			return nil, l.refuse(&Refusal{Limit: TokenLimit, Code: CodeTokenBudgetExhausted, RetryAfter: retry,
				Message: fmt.Sprintf("relay: daily token budget used up: this client may generate %s a day and has generated %d today; it renews at 00:00 UTC, in %s",
					count(int(s.TokensPerDay), "output token"), spent, retry.Round(time.Minute))})
		}
	}
	if !s.Rate.IsZero() {
		retry, err := l.c.Allow(ctx, key, s.Rate.N, s.Rate.Per)
		if err != nil {
			t.Refund(ctx)
			return nil, unavailable(err)
		}
		if retry > 0 {
			t.Refund(ctx)
			return nil, l.refuse(&Refusal{Limit: RateLimit, Code: CodeRateLimited, RetryAfter: retry,
				Message: fmt.Sprintf("relay: too many requests: this client may send %s %s; try again in %s", count(s.Rate.N, "request"), per(s.Rate.Per), seconds(retry))})
		}
		t.rated = true
	}
	if s.Streams > 0 {
		t.lease = newLease()
		ok, err := l.acquire(ctx, key, t.lease)
		if err == nil && !ok {
			err = l.refuse(&Refusal{Limit: StreamLimit, Code: CodeTooManyStreams, RetryAfter: time.Second,
				Message: fmt.Sprintf("relay: too many answers at once: this client may have %d generating at a time; wait for one to end or stop one (DELETE /v1/streams/{id}), then try again", s.Streams)})
		} else if err != nil {
			err = unavailable(err)
		}
		if err != nil {
			t.lease = ""
			t.Refund(ctx)
			return nil, err
		}
	}
	return t, nil
}

// acquire takes a slot for key's generation; when every slot is held it
// tries again for up to l.settle (with ctx), for a generation that is
// ending: woken when a ticket here frees a slot, and, with a counter a
// fleet shares (where other instances free slots), every few tens of
// milliseconds too.
func (l *Limiter) acquire(ctx context.Context, key, lease string) (bool, error) {
	freedHere, local := &l.freed, false
	if m, ok := l.c.(*Memory); ok {
		freedHere, local = &m.freed, true
	}
	deadline := time.NewTimer(l.settle)
	defer deadline.Stop()
	poll := 10 * time.Millisecond
	for {
		freed := freedHere.next()
		ok, err := l.c.Acquire(ctx, key, lease, l.set.Streams)
		if ok || err != nil {
			return ok, err
		}
		var elsewhere <-chan time.Time
		if !local {
			elsewhere = time.After(poll)
			poll = min(2*poll, 100*time.Millisecond)
		}
		select {
		case <-freed:
		case <-elsewhere:
		case <-deadline.C:
			return false, nil
		case <-ctx.Done():
			return false, nil
		}
	}
}

// signal is closed and replaced each time it fires: a wait on next()
// taken before a check cannot miss a fire after it.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// next is closed when the signal next fires.
func (s *signal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// fire wakes whoever waits on next().
func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// reserve holds n tokens of key's day unless the day's budget is spent,
// in one step when the counter can (a store.Reserver).
func (l *Limiter) reserve(ctx context.Context, key, day string, n int64) (int64, bool, error) {
	if r, ok := l.c.(store.Reserver); ok {
		return r.Reserve(ctx, key, day, n, l.set.TokensPerDay)
	}
	spent, err := l.c.Spent(ctx, key, day)
	if err != nil || spent >= l.set.TokensPerDay {
		return spent, false, err
	}
	if n > 0 {
		l.c.Spend(key, day, n)
	}
	return spent, true, nil
}

func (l *Limiter) refuse(r *Refusal) *Refusal {
	l.refused(r.Limit)
	return r
}

func unavailable(err error) error {
	return fmt.Errorf("%w: counting the limits: %w", store.ErrUnavailable, err)
}

// per phrases a period: "a minute".
func per(d time.Duration) string {
	switch d {
	case time.Second:
		return "a second"
	case time.Minute:
		return "a minute"
	case time.Hour:
		return "an hour"
	}
	return "every " + d.String()
}

// seconds phrases a wait in whole seconds, as Retry-After gives it.
func seconds(d time.Duration) string { return count(RetryAfter(d), "second") }

// count phrases n things: "1 request", "20 requests".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// RetryAfter is a wait as the Retry-After header's whole seconds: rounded
// up, at least 1.
func RetryAfter(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

func newLease() string {
	var b [9]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Ticket is one admitted generation: End it when the generation ends,
// or Refund it when the request is refused after all.
type Ticket struct {
	l     *Limiter
	key   string
	lease string // its slot, when streams are limited
	rated bool   // the rate counted it
	// The output tokens held against the day's budget (day) at
	// admission, settled at End.
	reserved int64
	day      string
	once     sync.Once
}

// Refund gives back what admitting the request took: its slot, its
// place in the rate and the tokens it held against the day, for a request refused after Admit (the relay full,
// the store unavailable). A refund the counter could not make is logged
// by nobody: the request then counts, as it did before refunds. After
// End or Refund it does nothing; a nil ticket's does nothing.
func (t *Ticket) Refund(ctx context.Context) {
	if t == nil {
		return
	}
	t.once.Do(func() {
		if t.lease != "" {
			t.l.c.Release(t.key, t.lease)
			t.l.freed.fire()
		}
		if t.rated {
			t.l.c.Refund(ctx, t.key, t.l.set.Rate.N, t.l.set.Rate.Per)
		}
		if t.reserved > 0 {
			t.l.c.Spend(t.key, t.day, -t.reserved)
		}
	})
}

// End frees the generation's slot and settles its identity's day (the
// day it was admitted) to the output tokens it generated: what it held
// at admission is given back, or the excess added. It never blocks; the
// second End and a nil ticket's do nothing.
func (t *Ticket) End(tokens int) {
	if t == nil {
		return
	}
	t.once.Do(func() {
		if t.lease != "" {
			t.l.c.Release(t.key, t.lease)
			t.l.freed.fire()
		}
		if d := int64(max(0, tokens)) - t.reserved; t.l.set.TokensPerDay > 0 && d != 0 {
			t.l.c.Spend(t.key, t.day, d)
		}
	})
}
