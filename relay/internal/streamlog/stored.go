// The log as a store sees it: the events a store's writer takes, the
// acknowledgements that let gated readers on, and the logs of streams
// another instance generates, followed from the store.

package streamlog

import (
	"fmt"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/trickle-dev/trickle/relay/store"
)

// NewFollowed makes the log of a stream another instance generates, as
// the store holds it; unfollow stops following it there.
func NewFollowed(cfg *Config, h Host, id, dialect string, created time.Time, unfollow func()) *Log {
	l := New(cfg, h, id, dialect)
	l.created, l.follow = created, unfollow
	return l
}

// Commit records that the store holds the first n events (and the end,
// once written), and wakes the readers waiting for them.
func (l *Log) Commit(n int) {
	l.mu.Lock()
	if n > l.durable {
		l.durable = n
	}
	woken := l.waiters
	l.waiters = nil
	l.mu.Unlock()
	for _, w := range woken {
		w.Wake(true)
	}
}

// StoreLostMessage is what the readers of a stream the store lost are
// told: the store's address and error (in the message StoreFailed gets)
// are the relay's internals, for its log.
const StoreLostMessage = "relay: the stream store lost this answer; send the request again"

// StoreFailed ends a stream the store can no longer hold: its readers
// here get everything generated so far, then a terminal error
// (StoreLostMessage); message, which says why, goes to the log.
func (l *Log) StoreFailed(message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = true
	l.gated = false
	if l.state == StateRunning {
		l.cfg.Logger.Warn("stream failed: the store lost it", "stream", l.id, "err", message)
		l.finishLocked(StateFailed, StoreLostMessage, true)
		return
	}
	l.wakeLocked()
}

// AppendFollowed adds an event read from the store to a followed log.
func (l *Log) AppendFollowed(seq int, data []byte) error {
	l.mu.Lock()
	if want := len(l.ends) + 1; seq != want {
		l.mu.Unlock()
		return fmt.Errorf("relay: stream %s: the store holds event %d where event %d was due", l.id, seq, want)
	}
	l.sealLocked()
	was := len(l.buf)
	l.buf = append(l.buf, data...)
	l.ends = append(l.ends, l.sizeLocked())
	// Counted, never refused: the generating relay bounds the stream, and
	// an unread followed stream is dropped after the grace period.
	l.chargeLocked(was, true)
	var few [4]Waker
	woken := append(few[:0], l.waiters...)
	clear(l.waiters)
	l.waiters = l.waiters[:0]
	l.mu.Unlock()
	for _, w := range woken {
		w.Wake(true)
	}
	return nil
}

// EndFollowed ends a followed log as the store's terminal entry says.
func (l *Log) EndFollowed(state wire.State, message string, upstreamCancelled bool, u store.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != StateRunning {
		return
	}
	l.upstreamCancelled = upstreamCancelled
	l.tokens, l.estimated = u.CompletionTokens, u.Estimated
	l.finishLocked(state, message, false)
}

// DropIfUnread forgets a followed log after the grace period unless a
// reader comes.
func (l *Log) DropIfUnread() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.readers == 0 {
		l.dropLaterLocked()
	}
}

// dropLaterLocked forgets a followed stream once nobody has read it for
// the grace period; a later resume follows it from the store again.
func (l *Log) dropLaterLocked() {
	if l.grace != nil {
		l.grace.Stop()
	}
	l.grace = time.AfterFunc(l.cfg.Grace, func() { l.host.DropFollowed(l) })
}

// StoredRunning reports that the store holds l, generated here and still
// running (the streams whose leases the store renews).
func (l *Log) StoredRunning() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gated && !l.lost && l.state == StateRunning
}

// TakeUnstored hands the store's writer what it has not written yet and
// marks it handed; ok is false when the store has lost the stream.
func (l *Log) TakeUnstored() (u store.Unstored, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return u, false
	}
	upto := len(l.ends)
	u.First = l.stored + 1
	for seq := l.stored + 1; seq <= upto; seq++ {
		start := 0
		if seq > 1 {
			start = l.ends[seq-2]
		}
		u.Events = append(u.Events, l.sliceLocked(start, l.ends[seq-1]))
	}
	u.Running = l.state == StateRunning
	if !u.Running && !l.endStored {
		u.Ended, u.State, u.Message, u.UpstreamCancelled = true, string(l.state), l.message, l.upstreamCancelled
		u.Usage = l.usageLocked()
		l.endStored = true
	}
	l.stored = upto
	return u, true
}
