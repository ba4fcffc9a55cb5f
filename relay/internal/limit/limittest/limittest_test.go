package limittest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/limit/limittest"
)

// broken is a memory counter with one rule of the contract broken.
type broken struct {
	*limit.Memory
	how string
}

func (b broken) Allow(ctx context.Context, key string, n int, per time.Duration) (time.Duration, error) {
	if b.how == "rate" {
		return 0, nil // never over the rate
	}
	return b.Memory.Allow(ctx, key, n, per)
}

func (b broken) Acquire(ctx context.Context, key, lease string, max int) (bool, error) {
	if b.how == "slots" {
		return true, nil // every request gets a slot
	}
	return b.Memory.Acquire(ctx, key, lease, max)
}

func (b broken) Spend(key, day string, n int64) {
	if b.how == "tokens" {
		return // spending is forgotten
	}
	b.Memory.Spend(key, day, n)
}

// TestABrokenCounter is run by TestTheContractTellsABrokenCounter in a
// process of its own, with LIMITTEST_BROKEN naming the rule to break.
func TestABrokenCounter(t *testing.T) {
	how := os.Getenv("LIMITTEST_BROKEN")
	if how == "" {
		t.Skip("run by TestTheContractTellsABrokenCounter")
	}
	m := limit.NewMemory()
	limittest.Run(t, func() limit.Counter { return broken{m, how} })
}

// The contract passes the memory counter and fails a counter that breaks
// any one of its rules, naming the rule's subtest.
func TestTheContractTellsABrokenCounter(t *testing.T) {
	m := limit.NewMemory()
	limittest.Run(t, func() limit.Counter { return broken{m, ""} })

	for how, subtest := range map[string]string{
		"rate":   "a_rate_lets_N_requests_through_at_once",
		"slots":  "slots_are_shared_by_the_instances_and_freed_on_release",
		"tokens": "tokens_add_up_per_key_and_day",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestABrokenCounter$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "LIMITTEST_BROKEN="+how)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "a counter whose %s rule is broken passed the contract:\n%s", how, out)
			require.Contains(t, string(out), "--- FAIL: TestABrokenCounter/"+subtest, "the failing rule is named:\n%s", out)
			require.NotContains(t, strings.ToLower(string(out)), "panic:", "it fails, not crashes")
		})
	}
}
