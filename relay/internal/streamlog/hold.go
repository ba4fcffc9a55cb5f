package streamlog

import (
	"time"

	"github.com/trickle-dev/trickle/wire"
)

// Holder holds a generation's events back before they enter the log: the
// hold-back gate (package holdback) releases each one once the text it
// carries is cleared, through Release and ReleaseEnd, in the order it
// took them. Its methods must not block; none is called with the log's
// lock held, except Drop.
type Holder interface {
	// Hold takes one generator event.
	Hold(now time.Time, event, data string, token bool)
	// HoldEnd takes the generator's end (End).
	HoldEnd(state wire.State, message string)
	// Drop says the log ended (stopped, cancelled, withheld, failed):
	// nothing held will be released. It is called with the log's lock
	// held and must not take it.
	Drop()
}

// SetHolder makes h take the generator's events (before the generation
// starts).
func (l *Log) SetHolder(h Holder) { l.holder = h }

// EmitAt is Emit for a generator that knows the time (the simulated
// model's clock has just read it). With inline false, the readers go on on
// goroutines of their own. With a Holder, the event goes to it instead,
// and EmitAt reports whether the stream is still running.
func (l *Log) EmitAt(now time.Time, event, data string, token, inline bool) bool {
	if l.holder == nil {
		return l.emitAt(now, event, data, token, inline)
	}
	l.mu.Lock()
	running := l.state == StateRunning
	l.mu.Unlock()
	if running {
		l.holder.Hold(now, event, data, token)
	}
	return running
}

// End is called by the generator when it has finished on its own. With a
// Holder, the end goes to it, to follow the events it holds.
func (l *Log) End(state wire.State, message string) {
	if l.holder != nil {
		// The generator is done: a Stop or a withheld sentence before the
		// Holder releases the end cancels nothing (Info's
		// upstream_cancelled).
		l.mu.Lock()
		l.cancel = nil
		l.mu.Unlock()
		l.holder.HoldEnd(state, message)
		return
	}
	l.end(state, message)
}

// Release appends an event the Holder cleared, as EmitAt would have; it
// reports false once the stream has ended.
func (l *Log) Release(event, data string, token bool) bool {
	return l.emitAt(time.Now(), event, data, token, false)
}

// ReleaseEnd ends the log as the generator asked, once the Holder has
// released every event before the end.
func (l *Log) ReleaseEnd(state wire.State, message string) { l.end(state, message) }
