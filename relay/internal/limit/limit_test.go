package limit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/limit/limittest"
	"github.com/trickle-dev/trickle/relay/internal/redistest"
	"github.com/trickle-dev/trickle/relay/store"
)

func TestTheMemoryCounterKeepsTheContract(t *testing.T) {
	m := limit.NewMemory()
	limittest.Run(t, func() limit.Counter { return m })
}

func TestRatesAreReadAsOperatorsWriteThem(t *testing.T) {
	for in, want := range map[string]limit.Rate{
		"20/min": {20, time.Minute}, "5/s": {5, time.Second}, "1000/h": {1000, time.Hour},
		" 3 / minute ": {3, time.Minute}, "1/SEC": {1, time.Second}, "2/hour": {2, time.Hour},
	} {
		got, err := limit.ParseRate(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	require.Equal(t, "20/min", limit.Rate{N: 20, Per: time.Minute}.String())
	for _, bad := range []string{"", "20", "0/min", "-1/s", "x/min", "20/day", "20/"} {
		_, err := limit.ParseRate(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "20/min", "%q: the error shows the form", bad)
	}
}

func TestEachLimitRefusesSayingWhichAndWhen(t *testing.T) {
	ctx := context.Background()
	var refused []string
	l := limit.New(limit.Settings{Rate: limit.Rate{N: 3, Per: time.Minute}, Streams: 1, TokensPerDay: 100},
		limit.NewMemory(), func(name string) { refused = append(refused, name) })

	first, err := l.Admit(ctx, "sub:alice", 0)
	require.NoError(t, err)
	_, err = l.Admit(ctx, "sub:alice", 0)
	r := refusal(t, err, "too_many_streams")
	require.Equal(t, limit.StreamLimit, r.Limit)
	require.Contains(t, r.Message, "1 generating at a time")
	require.Contains(t, r.Message, "DELETE /v1/streams/{id}")

	other, err := l.Admit(ctx, "sub:bob", 0)
	require.NoError(t, err, "bob has limits of his own")
	other.End(5)

	first.End(100)
	first.End(100) // a second End counts nothing
	_, err = l.Admit(ctx, "sub:alice", 0)
	r = refusal(t, err, "token_budget_exhausted")
	require.Equal(t, limit.TokenLimit, r.Limit)
	require.Contains(t, r.Message, "100 output tokens a day and has generated 100 today")
	require.LessOrEqual(t, r.RetryAfter, 24*time.Hour, "until midnight UTC")
	require.Positive(t, r.RetryAfter)

	// Alice was refused twice and counted once: her rate has two
	// requests left; carol's third is her last.
	for _, who := range []string{"sub:carol", "sub:carol", "sub:carol"} {
		tk, err := l.Admit(ctx, who, 0)
		require.NoError(t, err)
		tk.End(0)
	}
	_, err = l.Admit(ctx, "sub:carol", 0)
	r = refusal(t, err, "rate_limited")
	require.Equal(t, limit.RateLimit, r.Limit)
	require.Contains(t, r.Message, "3 requests a minute")
	require.InDelta(t, 20*time.Second, r.RetryAfter, float64(time.Second), "one interval: a minute over 3")
	require.Contains(t, r.Message, "try again in 20 seconds")

	require.Equal(t, []string{"streams", "tokens", "rate"}, refused)

	var nothing *limit.Limiter
	tk, err := nothing.Admit(ctx, "x", 0)
	require.NoError(t, err, "no limiter admits everything")
	tk.End(5)
	tk.Refund(ctx)
}

// A request refused by a limit, or refunded because it was refused after
// the limits admitted it, takes nothing: not its rate, not a slot.
func TestARefusedRequestCountsAgainstNoLimit(t *testing.T) {
	ctx := context.Background()
	l := limit.New(limit.Settings{Rate: limit.Rate{N: 2, Per: time.Hour}, Streams: 1}, limit.NewMemory(), nil)
	held, err := l.Admit(ctx, "k", 0)
	require.NoError(t, err)
	for range 5 {
		_, err := l.Admit(ctx, "k", 0)
		refusal(t, err, "too_many_streams")
	}
	held.End(0)
	for range 5 {
		tk, err := l.Admit(ctx, "k", 0)
		require.NoError(t, err, "a refunded request gave its place in the rate and its slot back")
		tk.Refund(ctx)
		tk.Refund(ctx) // a second refund gives nothing more
		tk.End(0)      // nor an End after it
	}
	tk, err := l.Admit(ctx, "k", 0)
	require.NoError(t, err, "the second request of the rate")
	tk.End(0)
	_, err = l.Admit(ctx, "k", 0)
	refusal(t, err, "rate_limited")
}

func refusal(t *testing.T, err error, code string) *limit.Refusal {
	t.Helper()
	var r *limit.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, code, string(r.Code))
	require.True(t, strings.HasPrefix(r.Message, "relay: "), r.Message)
	return r
}

func TestACounterThatFailsIsTheStoreBeingUnavailable(t *testing.T) {
	r := redistest.Start(t)
	rdb := newClient(t, r)
	l := limit.New(limit.Settings{Rate: limit.Rate{N: 1, Per: time.Second}}, limit.NewRedis(rdb, time.Second, quiet()), nil)
	_, err := l.Admit(context.Background(), "k", 0)
	require.NoError(t, err)
	r.Stop()
	_, err = l.Admit(context.Background(), "k", 0)
	require.True(t, errors.Is(err, store.ErrUnavailable), "%v", err)
}

// plainCounter hides Memory's Reserve: a Counter as outside code may
// write it, without store.Reserver.
type plainCounter struct{ limit.Counter }

// The day's budget holds each request's cap from its admission to its
// end, and the end settles it to what was generated: given back when
// less, added when more. So it holds with a counter that reserves in one
// step and, one request at a time, with one that does not.
func TestTheBudgetHoldsEachRequestsCapUntilItEnds(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]limit.Counter{"a store.Reserver": limit.NewMemory(), "Spent then Spend": plainCounter{limit.NewMemory()}} {
		t.Run(name, func(t *testing.T) {
			l := limit.New(limit.Settings{TokensPerDay: 30}, c, nil)
			a, err := l.Admit(ctx, "k", 20)
			require.NoError(t, err)
			b, err := l.Admit(ctx, "k", 20)
			require.NoError(t, err, "20 of 30 held: the day has room")
			_, err = l.Admit(ctx, "k", 20)
			refusal(t, err, "token_budget_exhausted")
			a.End(5) // 15 given back: 25 held or spent
			spent, err := c.Spent(ctx, "k", time.Now().UTC().Format(time.DateOnly))
			require.NoError(t, err)
			require.Equal(t, int64(25), spent)
			c2, err := l.Admit(ctx, "k", 20)
			require.NoError(t, err)
			c2.Refund(ctx) // refused after all: its 20 given back
			b.End(26)      // over its cap: the excess counts too
			spent, _ = c.Spent(ctx, "k", time.Now().UTC().Format(time.DateOnly))
			require.Equal(t, int64(31), spent)
			_, err = l.Admit(ctx, "k", 1)
			refusal(t, err, "token_budget_exhausted")
		})
	}
}

// 12 requests at once hold 20 tokens each against a 30-token day: two
// are admitted, whatever the order.
func TestParallelAdmissionsCannotOvershootTheBudget(t *testing.T) {
	ctx := context.Background()
	l := limit.New(limit.Settings{TokensPerDay: 30}, limit.NewMemory(), nil)
	var admitted atomic.Int32
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tk, err := l.Admit(ctx, "k", 20); err == nil {
				admitted.Add(1)
				tk.End(20)
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, 20*int(admitted.Load()), 30+20)
}

// A client that asks again the moment its answer ends is not refused
// for that answer: its slot is freed a moment after the last event (in
// a fleet, by one more Redis write), and the next request waits up to
// limit.Settle for it. A slot that stays held is still refused, after
// that wait, and a request whose client leaves stops waiting.
func TestTheNextRequestIsNotRefusedForTheAnswerThatJustEnded(t *testing.T) {
	r := redistest.Start(t)
	counters := map[string]func() (limit.Counter, limit.Counter){
		"memory": func() (limit.Counter, limit.Counter) { m := limit.NewMemory(); return m, m },
		// Two relays of one fleet: the release is written on one, the
		// next request counted on the other.
		"redis": func() (limit.Counter, limit.Counter) {
			return limit.NewRedis(newClient(t, r), time.Minute, quiet()), limit.NewRedis(newClient(t, r), time.Minute, quiet())
		},
	}
	for name, pair := range counters {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ca, cb := pair()
			a := limit.New(limit.Settings{Streams: 1}, ca, nil)
			b := limit.New(limit.Settings{Streams: 1}, cb, nil)
			key := "sub:" + name
			for i := range 20 {
				tk, err := a.Admit(ctx, key, 0)
				require.NoError(t, err, "request %d", i)
				tk.End(1)
				next, err := b.Admit(ctx, key, 0)
				require.NoError(t, err, "request %d, asked as the one before ended", i)
				next.End(1)
			}

			held, err := a.Admit(ctx, key, 0)
			require.NoError(t, err)
			start := time.Now()
			_, err = b.Admit(ctx, key, 0)
			refusal(t, err, "too_many_streams")
			require.GreaterOrEqual(t, time.Since(start), limit.Settle, "refused only after waiting for a slot")

			// Freed during the wait: admitted.
			go func() { time.Sleep(limit.Settle / 4); held.End(1) }()
			tk, err := b.Admit(ctx, key, 0)
			require.NoError(t, err, "the slot freed while the request waited")
			tk.End(1)

			// A client that leaves stops the wait: refused, without the rest of it.
			held, err = a.Admit(ctx, key, 0)
			require.NoError(t, err)
			defer held.End(1)
			gone, cancel := context.WithCancel(ctx)
			time.AfterFunc(limit.Settle/10, cancel)
			start = time.Now()
			_, err = b.Admit(gone, key, 0)
			refusal(t, err, "too_many_streams")
			require.Less(t, time.Since(start), limit.Settle, "the wait ends with its client")
		})
	}
}
