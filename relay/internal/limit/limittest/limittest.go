// Package limittest is the contract test of a limit.Counter: the one test
// the relay's Memory and Redis counters both pass.
//
//	func TestContract(t *testing.T) {
//		limittest.Run(t, func() limit.Counter { return counterOnTheSameBacking() })
//	}
//
// open must return a counter on the same backing each time it is called
// (relays sharing it); the subtests use keys of their own, so one backing
// serves them all.
package limittest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/store"
)

// flush waits for the counter's background writes (Release, Spend).
func flush(c limit.Counter) { c.Wait() }

// Run checks the contract of the counters open makes.
func Run(t *testing.T, open func() limit.Counter) {
	ctx := context.Background()
	key := func(t *testing.T, name string) string { return t.Name() + "/" + name }

	t.Run("a rate lets N requests through at once, then one each Per/N", func(t *testing.T) {
		// An hour's rate: no interval can pass between these calls, however
		// loaded the machine.
		a, b := open(), open()
		r := limit.Rate{N: 5, Per: time.Hour}
		alice := key(t, "alice")
		for i := range r.N {
			retry, err := a.Allow(ctx, alice, r.N, r.Per)
			require.NoError(t, err)
			require.Zero(t, retry, "request %d is within the burst", i+1)
		}
		retry, err := b.Allow(ctx, alice, r.N, r.Per)
		require.NoError(t, err)
		require.Positive(t, retry, "the next request, on another instance, is over the rate")
		require.LessOrEqual(t, retry, r.Per/time.Duration(r.N), "one interval at most")

		other, err := a.Allow(ctx, key(t, "bob"), r.N, r.Per)
		require.NoError(t, err)
		require.Zero(t, other, "another identity has a budget of its own")
	})

	t.Run("after the wait it says, one more request is allowed, and only one", func(t *testing.T) {
		// An interval of 2 s: long beside two calls in a row, short to wait.
		a, b := open(), open()
		r := limit.Rate{N: 1, Per: 2 * time.Second}
		alice := key(t, "alice")
		first, err := a.Allow(ctx, alice, r.N, r.Per)
		require.NoError(t, err)
		require.Zero(t, first)
		retry, err := b.Allow(ctx, alice, r.N, r.Per)
		require.NoError(t, err)
		require.Positive(t, retry, "over the rate")
		time.Sleep(retry + 5*time.Millisecond) // the interval passes
		again, err := a.Allow(ctx, alice, r.N, r.Per)
		require.NoError(t, err)
		require.Zero(t, again, "after the wait it said, the request is allowed")
		refused, err := b.Allow(ctx, alice, r.N, r.Per)
		require.NoError(t, err)
		require.Positive(t, refused, "and only one")
	})

	t.Run("a refused request does not count", func(t *testing.T) {
		a := open()
		r := limit.Rate{N: 1, Per: time.Hour}
		k := key(t, "k")
		retry, err := a.Allow(ctx, k, r.N, r.Per)
		require.NoError(t, err)
		require.Zero(t, retry)
		first, err := a.Allow(ctx, k, r.N, r.Per)
		require.NoError(t, err)
		second, err := a.Allow(ctx, k, r.N, r.Per)
		require.NoError(t, err)
		require.InDelta(t, float64(first), float64(second), float64(time.Second), "refusals do not push the wait on")
	})

	t.Run("a refund gives a counted request back, on every instance", func(t *testing.T) {
		a, b := open(), open()
		r := limit.Rate{N: 2, Per: time.Hour}
		k := key(t, "k")
		for range r.N {
			retry, err := a.Allow(ctx, k, r.N, r.Per)
			require.NoError(t, err)
			require.Zero(t, retry)
		}
		require.NoError(t, a.Refund(ctx, k, r.N, r.Per))
		retry, err := b.Allow(ctx, k, r.N, r.Per)
		require.NoError(t, err)
		require.Zero(t, retry, "the refunded request's place is free")
		retry, err = b.Allow(ctx, k, r.N, r.Per)
		require.NoError(t, err)
		require.Positive(t, retry, "and only its place")
		require.NoError(t, b.Refund(ctx, key(t, "nobody"), r.N, r.Per), "a refund of nothing counted is no error")
		for range 3 {
			require.NoError(t, a.Refund(ctx, k, r.N, r.Per))
		}
		for i := range r.N {
			retry, err := a.Allow(ctx, k, r.N, r.Per)
			require.NoError(t, err)
			require.Zero(t, retry, "refunded to rest: request %d of the burst is allowed", i+1)
		}
		retry, err = a.Allow(ctx, k, r.N, r.Per)
		require.NoError(t, err)
		require.Positive(t, retry, "refunds never give more than the burst")
	})

	t.Run("slots are shared by the instances and freed on release", func(t *testing.T) {
		a, b := open(), open()
		k := key(t, "alice")
		for _, lease := range []string{"l1", "l2"} {
			ok, err := a.Acquire(ctx, k, lease, 2)
			require.NoError(t, err)
			require.True(t, ok, lease)
		}
		ok, err := b.Acquire(ctx, k, "l3", 2)
		require.NoError(t, err)
		require.False(t, ok, "both slots are taken, whichever instance asks")
		ok, err = b.Acquire(ctx, key(t, "bob"), "l4", 2)
		require.NoError(t, err)
		require.True(t, ok, "another identity has slots of its own")

		a.Release(k, "l1")
		flush(a)
		ok, err = b.Acquire(ctx, k, "l3", 2)
		require.NoError(t, err)
		require.True(t, ok, "a released slot is free")
		ok, err = a.Acquire(ctx, k, "l5", 2)
		require.NoError(t, err)
		require.False(t, ok)
		a.Release(k, "l2")
		b.Release(k, "l3")
		b.Release(key(t, "bob"), "l4")
		flush(a)
		flush(b)
	})

	t.Run("tokens add up per key and day, seen by every instance", func(t *testing.T) {
		a, b := open(), open()
		k := key(t, "alice")
		a.Spend(k, "2026-12-04", 300)
		b.Spend(k, "2026-12-04", 45)
		a.Spend(k, "2026-12-03", 1000)
		flush(a)
		flush(b)
		for _, c := range []limit.Counter{a, b} {
			n, err := c.Spent(ctx, k, "2026-12-04")
			require.NoError(t, err)
			require.Equal(t, int64(345), n)
		}
		n, err := a.Spent(ctx, key(t, "bob"), "2026-12-04")
		require.NoError(t, err)
		require.Zero(t, n, "another identity spent nothing")
		n, err = b.Spent(ctx, k, "2026-12-05")
		require.NoError(t, err)
		require.Zero(t, n, "a new day starts at zero")

		a.Spend(k, "2026-12-04", -1000)
		flush(a)
		n, err = b.Spent(ctx, k, "2026-12-04")
		require.NoError(t, err)
		require.Zero(t, n, "a settlement below zero stops at zero")
	})

	t.Run("reservations race and hold the budget, seen by every instance", func(t *testing.T) {
		a, b := open(), open()
		ra, ok := a.(store.Reserver)
		if !ok {
			t.Skip("the counter reserves with Spent then Spend (no store.Reserver)")
		}
		rb := b.(store.Reserver)
		k := key(t, "alice")
		// 12 requests hold 20 tokens each against a budget of 30, half
		// on each instance, all at once: one reserves at 0, one at 20,
		// and the rest find the budget held.
		var wg sync.WaitGroup
		var mu sync.Mutex
		var befores []int64
		var errs []error
		for i := range 12 {
			r := ra
			if i%2 == 1 {
				r = rb
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				before, ok, err := r.Reserve(ctx, k, "2026-12-04", 20, 30)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if ok {
					befores = append(befores, before)
				}
			}()
		}
		wg.Wait()
		require.Empty(t, errs)
		slices.Sort(befores)
		require.Equal(t, []int64{0, 20}, befores)
		n, err := b.Spent(ctx, k, "2026-12-04")
		require.NoError(t, err)
		require.Equal(t, int64(40), n)
		_, ok, err = rb.Reserve(ctx, key(t, "bob"), "2026-12-04", 20, 30)
		require.NoError(t, err)
		require.True(t, ok, "another identity's budget is its own")
	})
}
