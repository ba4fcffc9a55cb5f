package limit_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/limit/limittest"
	"github.com/trickle-dev/trickle/relay/internal/redistest"
)

func newClient(t *testing.T, r *redistest.Server) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestTheRedisCounterKeepsTheContract(t *testing.T) {
	r := redistest.Start(t)
	limittest.Run(t, func() limit.Counter { return limit.NewRedis(newClient(t, r), time.Second, quiet()) })
}

// A slot is held as long as its instance lives, however long past one
// lease, and lapses within a lease once the instance has died.
func TestARedisSlotLivesWithItsInstance(t *testing.T) {
	r := redistest.Start(t)
	rdb := newClient(t, r)
	const lease = 600 * time.Millisecond
	a := limit.NewRedis(newClient(t, r), lease, quiet())
	b := limit.NewRedis(newClient(t, r), lease, quiet())
	ctx := context.Background()
	const key = "sub:alice"
	ok, err := a.Acquire(ctx, key, "l1", 1)
	require.NoError(t, err)
	require.True(t, ok)
	zkey := "trickle:limit:{" + key + "}:streams"
	first, err := rdb.ZScore(ctx, zkey, "l1").Result()
	require.NoError(t, err)

	// Wait until Redis's clock is past the first lapse and the lease was
	// pushed on meanwhile: the slot is still held.
	require.Eventually(t, func() bool {
		score, err := rdb.ZScore(ctx, zkey, "l1").Result()
		now, terr := rdb.Time(ctx).Result()
		return err == nil && terr == nil && score > first && float64(now.UnixMilli()) > first
	}, 10*time.Second, 10*time.Millisecond, "the lease is renewed past its first lapse")
	ok, err = b.Acquire(ctx, key, "l2", 1)
	require.NoError(t, err)
	require.False(t, ok, "a renewed slot is still held")

	a.Crash()
	require.Eventually(t, func() bool {
		ok, err := b.Acquire(ctx, key, "l2", 1)
		return err == nil && ok
	}, 10*time.Second, 10*time.Millisecond, "the dead instance's slot lapses")
	b.Release(key, "l2")
	b.Wait()
	n, err := rdb.ZCard(ctx, zkey).Result()
	require.NoError(t, err)
	require.Zero(t, n)
}
