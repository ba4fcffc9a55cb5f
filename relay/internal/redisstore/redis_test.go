package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/redisstore"
	"github.com/trickle-dev/trickle/relay/internal/redistest"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/relay/store/storetest"
)

// The Redis store keeps the contract, on a redis-server of its own.
func TestTheRedisStoreKeepsTheContract(t *testing.T) {
	r := redistest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := redisstore.New(r.URL())
		require.NoError(t, err)
		return st
	})
}
