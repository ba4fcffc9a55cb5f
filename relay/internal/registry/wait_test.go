package registry_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/registry"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// WaitIdle returns once every generation reserved has ended or given its
// place back, however the two interleave; and with ctx's error when ctx
// ends first.
func TestWaitIdleWaitsForEveryEndAndEveryUnreserve(t *testing.T) {
	g := registry.New(4, time.Minute)
	require.NoError(t, g.WaitIdle(context.Background()), "nothing runs")

	for range 3 {
		require.NoError(t, g.Reserve())
	}
	l := streamlog.New(nil, nil, "s1", "openai")
	g.Add(l)
	idle := make(chan error, 1)
	go func() { idle <- g.WaitIdle(context.Background()) }()
	g.Unreserve()
	g.Unreserve()
	select {
	case err := <-idle:
		t.Fatalf("WaitIdle returned with a generation running: %v", err)
	default:
	}
	g.Ended(l)
	require.NoError(t, <-idle)
	require.Zero(t, g.Running().Load())

	require.NoError(t, g.Reserve())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { idle <- g.WaitIdle(ctx) }()
	cancel()
	require.ErrorIs(t, <-idle, context.Canceled)

	g.Drain()
	require.ErrorIs(t, g.Reserve(), registry.ErrShuttingDown, "a draining registry takes nothing new")
	g.Unreserve()
	require.NoError(t, g.WaitIdle(context.Background()))
}
