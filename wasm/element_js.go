//go:build js && wasm

package wasm

import (
	"time"

	"syscall/js"

	"github.com/trickle-dev/trickle/internal/widget"
	"github.com/trickle-dev/trickle/stream"
)

// element is the Go side of one <trickle-answer>: its answers, their
// connections and what the page has been sent. The host's loop owns it;
// it holds no goroutine and no js.Func of its own (its connections do,
// until they end), so detach releases everything it has.
type element struct {
	id int
	h  *host

	cmd  widget.Command  // the call that started the answer (attributes, N)
	req  *widget.Request // the answer in progress or the last one (retry)
	init js.Value        // stream()'s RequestInit, as the page gave it
	// early is the request the page sent for the ask before Go was ready
	// (adoptFetch), until the answer's first connection adopts it.
	early js.Value
	n     int // the call whose promise the answer settles (0: none)
	sess  *widget.Session

	conn     *conn // the open connection, nil when none
	connGen  int
	streamID string
	resumer  widget.Resumer
	// gcHeld: this element has an answer streaming for the GC pacer.
	gcHeld bool
	gone   bool // detached: released once its last updates are sent

	buf        []byte              // the last inbox batch, reused
	chunks     []widget.InboxChunk // its chunks, reused
	announceAt time.Time
	arrived    float64 // epoch ms of the oldest bytes not yet in an update

	// out are the updates for the page since the last message; what the
	// page was last told, to send only changes.
	out                []widget.Update
	textSent           int
	stateSent, sidSent string
}

// handle runs a connection's or a timer's message.
func (e *element) handle(m msg) {
	switch m.kind {
	case mResponse, mFetchErr, mDone, mReadErr, mWSOpen:
		if e.conn == nil || m.conn != e.conn.gen {
			releaseStale(m)
			return
		}
		e.onConn(m)
	case mRetryTimer:
		if m.conn == e.connGen && e.conn == nil && e.sess != nil && !e.sess.Ended() {
			e.resume()
		}
	case mAnnounceTimer:
		e.announceAt = time.Time{}
		if e.h.inFlight && e.sess != nil {
			// A frame is on its way to the page: what is due to be said
			// goes now, not one page frame late (the announcer's pacing
			// is the screen reader's).
			e.sayNow()
			return
		}
		e.h.want = true
	}
}

// begin starts an answer, stopping the one in progress (its call settles
// as stopped).
func (e *element) begin(c widget.Command, r widget.Request, init, early js.Value) {
	if e.req != nil && !e.sess.Ended() {
		e.stop()
	}
	e.cmd, e.req, e.init, e.early, e.n = c, &r, init, early, c.N
	e.sess = widget.NewSession(c.Config())
	if c.At > 0 {
		e.sess.StartAt(now().at(c.At))
	}
	e.streamID = ""
	e.resumer.Reset()
	if !e.gcHeld {
		// Held until this element's answers end (an answer replaced
		// before its final frame keeps the hold for the next one).
		gc.Begin()
		e.gcHeld = true
	}
	u := e.fresh()
	u.Reset = true
	u.Events = append(u.Events, widget.StartEvent())
	e.textSent, e.arrived = 0, 0
	e.sync(u)
	e.open(false)
	e.h.want = true // the a11y "started" status, if any
	e.h.warm()
}

// retry asks again with the last request (the retry button, retry()).
func (e *element) retry(c widget.Command) {
	if e.req == nil {
		u := e.fresh()
		u.N, u.Resolve = c.N, e.statusWord()
		return
	}
	cmd := e.cmd
	cmd.N, cmd.At = c.N, c.At
	e.begin(cmd, *e.req, e.init, js.Undefined())
}

// stop aborts the request, asks the relay to cancel and ends the answer.
func (e *element) stop() {
	if e.req == nil || e.sess.Ended() {
		return
	}
	e.drain() // what arrived before Stop is part of the answer
	if c := e.conn; c != nil {
		c.stop(true)
		e.conn = nil
	}
	if e.streamID != "" && !e.req.WebSocket {
		if u, err := widget.StreamURLs(e.req.Endpoint, e.streamID); err == nil {
			opts := map[string]any{"method": "DELETE", "keepalive": true}
			js.Global().Call("fetch", u.Cancel, opts).Call("catch", noop)
		}
	}
	e.connGen++ // a pending retry timer must not resume a stopped answer
	e.sess.End(widget.ErrStoppedByUser)
	e.frame()
}

// noop swallows a rejected promise nobody waits for.
var noop = newFunc(func(js.Value, []js.Value) any { return nil })

// detach releases the element: the page removed it. An answer in progress
// is stopped (its call settles as stopped: a terminal update is never
// dropped), the connection closed, the collector's hold let go.
func (e *element) detach() {
	e.stop()
	e.closeConn()
	if e.gcHeld {
		e.gcHeld = false
		gc.End()
	}
	e.fresh().Gone = true
	e.gone = true
	e.sess, e.init, e.early = nil, js.Undefined(), js.Undefined()
	e.buf, e.chunks = nil, nil
	e.h.want = true
}

// reject settles call n as failed without starting an answer (ask() of
// something that is not a request), as trickle-error says.
func (e *element) reject(n int, err error) {
	u := e.fresh()
	u.Events = append(u.Events, widget.RejectEvent(err))
	u.N, u.Resolve = n, "failed"
	e.h.want = true
}

// fail ends the answer in progress with err; it reports false when there
// is none.
func (e *element) fail(err error) bool {
	if e.req == nil || e.sess == nil || e.sess.Ended() {
		return false
	}
	e.closeConn()
	e.sess.End(err)
	func() {
		defer func() { _ = recover() }() // the final frame itself may be what panics
		e.frame()
	}()
	return true
}

func (e *element) statusWord() string {
	if e.req == nil {
		return "idle"
	}
	if st := e.sess.Status(); st != stream.Waiting {
		return st.String()
	}
	return "streaming"
}

// fresh starts a new update for the page.
func (e *element) fresh() *widget.Update {
	e.out = append(e.out, widget.Update{ID: e.id})
	return &e.out[len(e.out)-1]
}

// last is the update being filled: the last one, unless it already holds
// a frame's patch (a second patch is relative to the first's result, so it
// goes in an update of its own, applied after it).
func (e *element) last() *widget.Update {
	if n := len(e.out); n > 0 && !e.out[n-1].HasPatch && e.out[n-1].End == nil {
		return &e.out[n-1]
	}
	return e.fresh()
}
