// The reader/sink state machine: one reader per client connection sends a
// stream's log to a Sink (an SSE response or a WebSocket) and waits for
// news without holding a goroutine.

package streamlog

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Sink is where a reader sends a stream: an SSE response or a WebSocket
// (package sink).
type Sink interface {
	// Send writes the events of b in one write (SSE: one chunk;
	// WebSocket: one message per event).
	Send(b Batch) error
	// KeepAlive writes a heartbeat comment.
	KeepAlive() error
	// HalfClose ends the relay's side of the connection after what it
	// already sent (TCP FIN behind the queued bytes), keeping the client's
	// side open; false when the transport cannot.
	HalfClose() bool
	// TrySend sends b without blocking, when the transport can: ok
	// reports that b was taken (queued: part of it waits in the sink, to
	// be written by Flush); not ok, nothing was sent.
	TrySend(b Batch) (ok, queued bool)
	// Flush writes what TrySend queued (blocking, within the write
	// timeout); Send and KeepAlive flush first.
	Flush() error
}

// ErrCut marks a write the client did not take within the write timeout:
// the relay cuts the connection; the client may resume.
var ErrCut = errors.New("relay: the client did not read within the write timeout; connection cut")

// End is why a reader ended.
type End int

// Why a reader ended.
const (
	EndDone     End = iota // the stream ended and everything was sent
	EndGone                // the client went away or a write failed
	EndDrop                // fault injection: cut this connection
	EndShutdown            // the relay is shutting down
)

// Readers is what the readers of one server share.
type Readers struct {
	Heartbeat    time.Duration   // keep-alive after this much silence
	WriteTimeout time.Duration   // for the log only
	CutWait      time.Duration   // see afterCut
	Kick         context.Context // cancelled at the shutdown deadline: readers leave
	Connections  *atomic.Int64   // readers connected now
	Cuts         *atomic.Int64   // slow clients cut
	Logger       *slog.Logger
}

// Pump sends the stream from event position pos (the number of events the
// client already has) until it ends, the client leaves or a fault cuts it,
// and returns why. It blocks; Start is the same without a goroutine
// waiting.
func (s *Readers) Pump(ctx context.Context, l *Log, pos int, out Sink) (End, error) {
	type result struct {
		end End
		err error
	}
	ch := make(chan result, 1)
	s.Start(ctx, l, pos, out, func(end End, err error) { ch <- result{end, err} })
	r := <-ch
	return r.end, r.err
}

// reader sends one stream to one client. It holds no goroutine while it
// waits: news in the log (including the end Shutdown gives every running
// stream), the client leaving (ctx) and the heartbeat timer each call wake, which runs the reader on a fresh
// goroutine until it has sent everything there is and must wait again. An
// idle stream then costs a small struct instead of a parked goroutine whose
// stack has grown writing through the TCP stack (bench/load's memory per
// idle stream), and an event costs starting a goroutine instead of waking a
// parked one, about the same.
type reader struct {
	s     *Readers
	l     *Log
	ctx   context.Context
	out   Sink
	onEnd func(End, error)

	// Owned by the goroutine running the reader (one at a time).
	pos, limit int
	lastWrite  time.Time
	hbAt       time.Time // when the heartbeat timer is due
	hb         *time.Timer
	unwatch    func() bool // stops watching ctx

	state atomic.Int32
}

// Reader states: wake starts a goroutine only from idle; while one runs,
// wake asks it to look again before it goes idle.
const (
	readerIdle int32 = iota
	readerRunning
	readerAgain
	readerDone
)

// Start starts sending l from pos to out; onEnd gets why it ended (on
// the reader's goroutine, which it may keep for the connection's close).
func (s *Readers) Start(ctx context.Context, l *Log, pos int, out Sink, onEnd func(End, error)) {
	l.Attach()
	s.Connections.Add(1)
	r := &reader{s: s, l: l, ctx: ctx, out: out, onEnd: onEnd, pos: pos, limit: l.TakeDrop(pos)}
	r.lastWrite = time.Now()
	r.hbAt = r.lastWrite.Add(s.Heartbeat)
	r.state.Store(readerRunning)
	// One timer per reader, re-armed only when it is due: writes just
	// note their time, so an event costs no timer operation.
	wake := func() { r.Wake(false) }
	r.hb = time.AfterFunc(s.Heartbeat, wake)
	r.unwatch = context.AfterFunc(ctx, wake)
	// No watch on the shutdown deadline: Shutdown stops every running
	// stream after it, which wakes the readers waiting on them, and a
	// reader checks the deadline first thing when it runs.
	go r.run()
}

// Wake tells the reader there is news; it never blocks. A reader already
// running is asked to look again. An idle one starts: on a goroutine of its
// own, or, with inline (the goroutine that appended the news, without the
// log's lock), right here when it is caught up and its socket takes the
// news without blocking — anything else (a full socket, the end, a
// heartbeat, a transport that cannot write without blocking) goes on on a
// goroutine. A slow client thus never holds up the generator, and the
// common case costs no goroutine.
func (r *reader) Wake(inline bool) {
	for {
		switch r.state.Load() {
		case readerIdle:
			if r.state.CompareAndSwap(readerIdle, readerRunning) {
				if inline {
					r.runInline()
				} else {
					go r.run()
				}
				return
			}
		case readerRunning:
			if r.state.CompareAndSwap(readerRunning, readerAgain) {
				return
			}
		default: // already asked to look again, or over
			return
		}
	}
}

func (r *reader) runInline() {
	for {
		if !r.stepInline() {
			go r.run() // still running: the goroutine takes over
			return
		}
		if r.state.CompareAndSwap(readerRunning, readerIdle) {
			return
		}
		r.state.Store(readerRunning) // woken meanwhile: look again
	}
}

// stepInline is step without blocking: it reports false when the reader
// must go on on a goroutine (step then does what is left, from r.pos).
func (r *reader) stepInline() bool {
	wrote, waiting := false, false
	for r.s.Kick.Err() == nil {
		b, next, done := r.l.Read(r.pos, r.limit, r)
		if len(b.Ends) == 0 {
			waiting = !done && r.ctx.Err() == nil
			break
		}
		ok, queued := r.out.TrySend(b)
		if !ok {
			break
		}
		r.pos, wrote = next, true
		if queued || r.limit > 0 && r.pos >= r.limit {
			break
		}
	}
	if !wrote && !waiting {
		return false
	}
	now := time.Now()
	if wrote {
		r.lastWrite = now
	}
	return waiting && now.Before(r.hbAt) // a heartbeat due is the goroutine's
}

func (r *reader) run() {
	for {
		if end, over, err := r.step(); over {
			r.state.Store(readerDone)
			r.hb.Stop()
			r.unwatch()
			r.l.Detach()
			r.s.Connections.Add(-1)
			r.onEnd(end, err)
			return
		}
		if r.state.CompareAndSwap(readerRunning, readerIdle) {
			return
		}
		r.state.Store(readerRunning) // woken while running: look again
	}
}

// step sends what there is; over reports that the reader has ended.
func (r *reader) step() (end End, over bool, err error) {
	s, l := r.s, r.l
	wrote := false
	// What a non-blocking send left behind goes first, whatever comes
	// next (events, a heartbeat, the end of the stream).
	if err := r.out.Flush(); err != nil {
		s.afterCut(r.ctx, l, r.out, err)
		return EndGone, true, err
	}
	if r.limit > 0 && r.pos >= r.limit {
		return EndDrop, true, nil // reached by a send in stepInline
	}
	for {
		if s.Kick.Err() != nil {
			return EndShutdown, true, nil
		}
		b, next, done := l.Read(r.pos, r.limit, r)
		if len(b.Ends) > 0 {
			if err := r.out.Send(b); err != nil {
				s.afterCut(r.ctx, l, r.out, err)
				return EndGone, true, err
			}
			r.pos = next
			wrote = true
			if r.limit > 0 && r.pos >= r.limit {
				return EndDrop, true, nil
			}
			continue
		}
		if done {
			return EndDone, true, nil
		}
		if err := r.ctx.Err(); err != nil {
			return EndGone, true, err
		}
		// Waiting (registered with the log by read): heartbeat when due.
		// One clock read serves as the time of the writes just made
		// (they took microseconds; the heartbeat counts seconds).
		now := time.Now()
		if wrote {
			r.lastWrite = now
		}
		if now.Before(r.hbAt) {
			return 0, false, nil
		}
		hb := s.Heartbeat
		if idle := now.Sub(r.lastWrite); idle < hb {
			r.hb.Reset(hb - idle)
			r.hbAt = now.Add(hb - idle)
			return 0, false, nil
		}
		if err := r.out.KeepAlive(); err != nil {
			s.afterCut(r.ctx, l, r.out, err)
			return EndGone, true, err
		}
		r.lastWrite = time.Now()
		r.hb.Reset(hb)
		r.hbAt = r.lastWrite.Add(hb)
		return 0, false, nil
	}
}

// afterCut runs when a write to the client failed. When the relay itself
// cut a slow client (ErrCut), that client is not gone: it is behind, and
// it cannot know of the cut before it has read what the relay had already
// sent — seconds of events in the socket buffers. Counting the disconnect
// grace from the cut would cancel the generation of a client that is still
// reading and about to resume, and the resume would find the answer cut
// short (what bench/load's WebSocket run at its largest stream count
// showed: clients starved for CPU resumed long after their cut, after
// their generation had been cancelled). So the relay half-closes the connection (the client
// reads every byte already sent, then the end) and stays attached until the
// client hangs up, or for at most cutWait; only then does the grace period
// start.
func (s *Readers) afterCut(ctx context.Context, l *Log, out Sink, err error) {
	if !errors.Is(err, ErrCut) {
		return
	}
	s.Cuts.Add(1)
	if s.CutWait <= 0 || !out.HalfClose() {
		return
	}
	s.Logger.Info("slow client cut", "stream", l.id, "write_timeout", s.WriteTimeout, "wait_for_hang_up", s.CutWait)
	t := time.NewTimer(s.CutWait)
	defer t.Stop()
	select {
	case <-ctx.Done(): // the client read up to the cut and hung up
	case <-t.C:
	case <-s.Kick.Done():
	}
}
