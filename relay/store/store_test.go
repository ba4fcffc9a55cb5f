package store_test

import (
	"testing"

	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/relay/store/storetest"
)

// The memory store keeps the contract: nothing to follow, nothing to stop
// elsewhere.
func TestTheMemoryStoreKeepsTheContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return store.Memory() })
}
