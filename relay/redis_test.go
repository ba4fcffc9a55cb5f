package relay_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/internal/redistest"
)

// sharedStore is the Redis URL every relay of the package's tests uses
// when TRICKLE_TEST_STORE=redis (make test runs the package twice: with
// the memory store, then with Redis); empty for the memory store.
var sharedStore string

// testLease is the lease of the relays in tests: short, so that a dead
// relay is noticed quickly, yet long enough for a loaded machine to renew
// it in time.
const testLease = time.Second

// redisServer is a redis-server a test started (redistest).
type redisServer = redistest.Server

// startRedis runs a redis-server for one test.
func startRedis(t testing.TB) *redisServer { return redistest.Start(t) }

// restart starts the server again on the same port, empty (no
// persistence): what a Redis restart without persistence is.
func restartRedis(t testing.TB, r *redisServer) {
	t.Helper()
	again, err := redistest.Launch(redistest.Need(t), r.Dir, r.Port)
	require.NoError(t, err)
	*r = *again
}

// redisClient is a client to look at or change what a store wrote.
func redisClient(t testing.TB, r *redisServer) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// storeOptions are the options that put a relay on the Redis at url.
func storeOptions(t testing.TB, url string) []relay.Option {
	t.Helper()
	st, err := relay.RedisStore(url)
	require.NoError(t, err)
	return []relay.Option{relay.WithStore(st), relay.WithLease(testLease)}
}

// setUpSharedStore starts the package's redis-server when
// TRICKLE_TEST_STORE=redis; the returned func stops it.
func setUpSharedStore() (func(), error) {
	switch os.Getenv("TRICKLE_TEST_STORE") {
	case "", "memory":
		return func() {}, nil
	case "redis":
	default:
		return nil, fmt.Errorf("TRICKLE_TEST_STORE=%q: want memory or redis", os.Getenv("TRICKLE_TEST_STORE"))
	}
	bin, err := redistest.Binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "trickle-redis-")
	if err != nil {
		return nil, err
	}
	r, err := redistest.Launch(bin, dir, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	sharedStore = r.URL()
	fmt.Fprintf(os.Stderr, "relay tests: stream store redis at %s\n", r.Addr())
	return func() { r.Stop(); os.RemoveAll(dir) }, nil
}
