package streamlog

import (
	"context"
	"encoding/json"

	"github.com/trickle-dev/trickle/wire"
)

// StatusData is the JSON data of a trickle.status event (wire.StatusData)
// saying status and message; u, when not nil, is what was generated up to
// the end.
func StatusData(status wire.Status, message string, u *wire.Usage) string {
	b, _ := json.Marshal(wire.NewStatusData(status, message, u))
	return string(b)
}

// Info is the stream's state now.
func (l *Log) Info() wire.Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return wire.Info{ID: l.id, State: l.state, Events: len(l.ends), UpstreamCancelled: l.upstreamCancelled,
		Readers: l.readers, Message: l.message, Created: l.created, Usage: l.usageLocked()}
}

// WaitEnded waits until the stream has ended, or ctx is done; it reports
// whether the stream ended.
func (l *Log) WaitEnded(ctx context.Context) bool {
	l.mu.Lock()
	if l.state != StateRunning {
		l.mu.Unlock()
		return true
	}
	if l.endedCh == nil {
		l.endedCh = make(chan struct{})
	}
	ended := l.endedCh
	l.mu.Unlock()
	select {
	case <-ended:
		return true
	case <-ctx.Done():
		return false
	}
}

// State is the stream's state now.
func (l *Log) State() wire.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state
}
