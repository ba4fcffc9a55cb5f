package streamlog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/wire"
)

// WaitEnded returns when the stream ends, by whatever end (its own, a
// Stop, a followed stream's end from the store), and when its context is
// done before that; a stream that already ended returns at once.
func TestWaitEndedWakesAtTheEndOrTheContext(t *testing.T) {
	cfg := &Config{MaxEventSize: 1 << 10, MaxEvents: 10, Grace: time.Minute}
	ends := map[string]func(l *Log){
		"its own end":   func(l *Log) { l.End(StateComplete, "") },
		"a stop":        func(l *Log) { l.Stop(StateStopped, "stopped by the client") },
		"the store end": func(l *Log) { l.EndFollowed(wire.StateStopped, "stopped by the client", true, wire.Usage{}) },
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			l := New(cfg, quietHost{}, "s", "openai")
			if name == "the store end" {
				l = NewFollowed(cfg, quietHost{}, "s", "openai", time.Now(), func() {})
			}
			waiting := make(chan bool)
			for range 3 { // several waiters, all woken
				go func() { waiting <- l.WaitEnded(context.Background()) }()
			}
			end(l)
			for range 3 {
				require.True(t, <-waiting)
			}
			require.True(t, l.State().Ended())
			require.True(t, l.WaitEnded(context.Background()), "an ended stream returns at once")
		})
	}
	l := New(cfg, quietHost{}, "s", "openai")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { done <- l.WaitEnded(ctx) }()
	cancel()
	require.False(t, <-done, "the context ended first")
	require.Equal(t, wire.StateRunning, l.State())
}
