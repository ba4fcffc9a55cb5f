package element

import (
	"errors"
	"time"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Element is the Go side of one <trickle-answer>: its answers, their
// connections and what the page has been told. It makes every decision —
// end or resume, which connection a callback belongs to, what the next
// update says — and acts only through its Env, so it runs the same in the
// browser (package wasm's adapters over fetch, WebSocket and timers) and
// under a fake in a native test.
//
// It is driven by events: the page's calls (Begin, Retry, Stop, Detach),
// a connection's news (Opened, Response, Ended), timers (Timer) and
// frames (Frame). The updates it produces wait in it until the host
// collects them (TakeUpdates). Not safe for concurrent use: one loop owns
// every element.
type Element struct {
	id     int
	env    Env
	clock  Clock
	gc     *GCPacer
	thread string

	cmd   Command  // the call that started the answer (attributes, N)
	req   *Request // the answer in progress or the last one (retry)
	early *Early   // the page's early request, until the first connection adopts it
	// firstTold: the page's early view dispatched this answer's
	// trickle-first-token already (Early.FirstTokenTold).
	firstTold bool
	n         int // the call whose promise the answer settles (0: none)
	sess      *Session
	// stopped is the session Stop ended after asking the relay to cancel:
	// the relay's answer tells what it cost (Cost).
	stopped *Session

	conn     *connState // the open connection, nil when none
	connGen  int
	streamID string
	// streamRef is the relay's X-Trickle-Stream-URL for streamID, resolved
	// against the request that carried it ("" when it sent none:
	// StreamURLs derives it).
	streamRef string
	resumer   Resumer
	// showing: the answer is a stored one (Show): no request, no
	// announcements, no events.
	showing bool
	// gcHeld: this element has an answer streaming for the GC pacer.
	gcHeld bool
	gone   bool // detached: released once its last updates are sent

	callsDone  []bool                // the tool calls trickle-tool-call told of, by position
	chunks     []protocol.InboxChunk // the last inbox batch's chunks, reused
	announceAt time.Time
	arrived    time.Time // the oldest bytes not yet in an update
	// idle is the answer's idle timeout (0: none); lastByte is when the
	// open connection last brought bytes (or opened).
	idle     time.Duration
	lastByte time.Time

	// out are the updates for the page since the last TakeUpdates; what
	// the page was last told, to send only changes.
	out                []protocol.Update
	textSent           int
	textSplit          bool // a text update was not valid UTF-8 by itself (AppendEndMessage)
	stateSent, sidSent string
	say                []byte
}

// connState is what the element knows of its open connection.
type connState struct {
	gen        int
	webSocket  bool
	first      string
	opened     bool   // the WebSocket opened
	url        string // where it went
	httpStatus int    // non-2xx response: its body is collected as the error
	errBody    []byte // that body, up to MaxErrorBody
	events     bool   // it brought at least one new event id
	resumed    bool
}

// NewElement returns element id, acting through env on clock. gc, when
// not nil, is held while an answer streams. thread names where Go runs
// ("worker" or "main"), for the metrics.
func NewElement(id int, env Env, clock Clock, gc *GCPacer, thread string) *Element {
	return &Element{id: id, env: env, clock: clock, gc: gc, thread: thread}
}

// ID is the element's id.
func (e *Element) ID() int { return e.id }

// Gone reports whether the element was detached.
func (e *Element) Gone() bool { return e.gone }

// Active reports whether the element has an answer to frame.
func (e *Element) Active() bool { return !e.gone && (e.req != nil || e.showing) && e.sess != nil }

// Do runs a command of the page on the element: ask and stream begin an
// answer (a request that cannot be built fails the call), retry, stop and
// detach do as Retry, Stop and Detach. at is when the page made the call
// (zero when unknown); early is the page's early request for an ask, or
// nil.
func (e *Element) Do(c Command, at time.Time, early *Early) {
	switch c.Kind {
	case protocol.Ask, protocol.Stream:
		r, err := c.Request()
		if err != nil {
			e.Reject(c.N, err)
			return
		}
		e.Begin(c, r, at, early)
	case protocol.Retry:
		e.Retry(c, at)
	case protocol.Stop:
		e.Stop()
	case protocol.Detach:
		e.Detach()
	case protocol.Show:
		m, err := ParseStored(c.Body)
		if err != nil {
			e.Reject(c.N, err)
			return
		}
		e.Show(c, m)
	}
}

// Show shows a stored answer (el.message, el.markdown) at once: the same
// HTML as if it had streamed, with its stored status and notice, and no
// network, no announcements and no events. The answer in progress, if
// any, is stopped first. An attribute whose value cannot work fails the
// call (an AttributeError) and leaves the answer in progress alone.
func (e *Element) Show(c Command, m Stored) {
	cfg := c.Config()
	cfg.Now, cfg.Announce = e.clock.Now, a11y.ModeOff
	sess, err := NewSession(cfg)
	if err != nil {
		e.Reject(c.N, attributeError(err))
		return
	}
	if e.req != nil && !e.sess.Ended() {
		e.Stop()
	}
	e.cmd, e.req, e.early, e.n = c, nil, nil, 0
	e.showing = true
	e.sess = sess
	e.streamID, e.streamRef = "", ""
	e.callsDone = e.callsDone[:0]
	u := e.fresh()
	u.Reset = true
	e.textSent, e.textSplit, e.arrived = 0, false, time.Time{}
	e.sess.Show(m)
	e.sync(u)
	e.Frame()
	e.env.Want()
	if e.gc != nil {
		e.gc.Shown()
	}
}

// Begin starts an answer (ask, stream), stopping the one in progress (its
// call settles as stopped). at is when the page made the call (zero when
// unknown); early is the page's early request for it, or nil. An
// attribute whose value cannot work fails the call (an AttributeError,
// in trickle-error) and leaves the answer in progress alone.
func (e *Element) Begin(c Command, r Request, at time.Time, early *Early) {
	cfg := c.Config()
	cfg.Now = e.clock.Now
	sess, err := NewSession(cfg)
	if err != nil {
		e.Reject(c.N, attributeError(err))
		return
	}
	idle, err := c.IdleTimeout()
	if err != nil {
		e.Reject(c.N, err)
		return
	}
	if e.req != nil && !e.sess.Ended() {
		e.Stop()
	}
	e.cmd, e.req, e.early, e.n = c, &r, early, c.N
	e.idle = idle
	e.showing = false
	e.sess = sess
	if !at.IsZero() {
		e.sess.StartAt(at)
	}
	e.streamID, e.streamRef = "", ""
	e.callsDone = e.callsDone[:0]
	e.resumer.Reset()
	if !e.gcHeld && e.gc != nil {
		// Held until this element's answers end (an answer replaced
		// before its final frame keeps the hold for the next one).
		e.gc.Begin()
		e.gcHeld = true
	}
	u := e.fresh()
	u.Reset = true
	if early == nil || !early.StartTold {
		u.Events = append(u.Events, StartEvent())
	}
	e.firstTold = early != nil && early.FirstTokenTold
	if e.firstTold {
		e.sess.ToldFirst(time.Duration(early.FirstTokenMS * float64(time.Millisecond)))
	}
	e.textSent, e.textSplit, e.arrived = 0, false, time.Time{}
	e.sync(u)
	e.open(false)
	e.env.Want() // the a11y "started" status, if any
}

// Retry asks again with the last request (the retry button, retry()); with
// none, call c.N settles with the element's status.
func (e *Element) Retry(c Command, at time.Time) {
	if e.req == nil {
		u := e.fresh()
		u.N, u.Resolve = c.N, e.statusWord()
		e.env.Want()
		return
	}
	cmd := e.cmd
	cmd.N, cmd.At = c.N, c.At
	e.Begin(cmd, *e.req, at, nil)
}

// Stop aborts the request, asks the relay to cancel and ends the answer
// as stopped. What arrived before Stop is part of the answer.
func (e *Element) Stop() {
	if e.req == nil || e.sess.Ended() {
		return
	}
	e.drain()
	if c := e.conn; c != nil {
		e.env.Close(c.gen, true)
		e.conn = nil
	}
	if e.streamID != "" {
		// Over a WebSocket the socket carries the stop, and the relay's
		// stopped status on it what the answer cost (StopStatus): no
		// DELETE. Over HTTP the DELETE carries the request's headers (its
		// authorization), and its answer is the cost (Cancelled).
		if e.req.WebSocket {
			e.stopped = e.sess
		} else if u, err := StreamURLs(e.req.Endpoint, e.streamID, e.streamRef); err == nil {
			e.env.Cancel(u.Cancel, cancelHeaders(e.req.Headers))
			e.stopped = e.sess
		}
	}
	e.connGen++ // a pending retry timer must not resume a stopped answer
	e.sess.End(ErrStoppedByUser)
	e.Frame()
	e.env.Want() // the final update goes now, whether or not anything is left to say
}

// Detach releases the element: the page removed it. An answer in progress
// is stopped (its call settles as stopped: a terminal update is never
// dropped), the connection closed, the collector's hold let go.
func (e *Element) Detach() {
	e.Stop()
	e.closeConn()
	if e.gcHeld {
		e.gcHeld = false
		e.gc.End()
	}
	e.fresh().Gone = true
	e.gone = true
	e.sess, e.early, e.chunks = nil, nil, nil
	e.env.Want()
}

// Reject settles call n as failed without starting an answer (ask() of
// something that is not a request), as trickle-error says.
func (e *Element) Reject(n int, err error) {
	u := e.fresh()
	u.Events = append(u.Events, RejectEvent(err))
	u.N, u.Resolve = n, "failed"
	e.env.Want()
}

// Fail ends the answer in progress with err (an internal error); it
// reports false when there is none.
func (e *Element) Fail(err error) bool {
	if e.req == nil || e.sess == nil || e.sess.Ended() {
		return false
	}
	e.closeConn()
	e.sess.End(err)
	func() {
		defer func() { _ = recover() }() // the final frame itself may be what panics
		e.Frame()
	}()
	return true
}

// current reports whether gen is the open connection.
func (e *Element) current(gen int) bool {
	return !e.gone && e.conn != nil && e.conn.gen == gen
}

// Opened handles WebSocket gen's open; it reports false for a stale one.
func (e *Element) Opened(gen int) bool {
	if !e.current(gen) {
		return false
	}
	e.conn.opened = true
	e.env.Send(gen, e.conn.first)
	return true
}

// Response handles fetch gen's response; it reports false for a stale one,
// whose body must not be read. The caller reads a current one's body into
// the connection's inbox, error or not (an error body is the message).
func (e *Element) Response(gen int, r Response) bool {
	if !e.current(gen) {
		return false
	}
	e.response(r)
	return true
}

func (e *Element) response(r Response) {
	if r.StreamID != "" {
		e.streamID, e.streamRef = r.StreamID, ResolveStreamRef(e.conn.url, r.StreamURL)
	}
	if r.StreamURL != "" && e.req != nil {
		SawRelay(e.req.Endpoint) // a relay: its preflight allows the resume header
	}
	if !r.OK {
		e.conn.httpStatus = r.Status
		return
	}
	e.sess.Respond(r.Head)
}

// Ended handles connection gen's end; it reports false for a stale one.
// The stream broke off without its end: it resumes if the relay can, else
// the answer ends.
func (e *Element) Ended(gen int, end End) bool {
	if !e.current(gen) {
		return false
	}
	c := e.conn
	e.drain() // the bytes that came before the end are still in the inbox
	e.closeConn()
	e.env.Want()
	if c.httpStatus != 0 {
		err := HTTPError(c.httpStatus, c.errBody)
		if se, ok := err.(*StatusError); ok {
			se.URL = c.url
		}
		e.sess.End(err)
		return true
	}
	if e.sess.Terminal() {
		e.sess.End(nil)
		return true
	}
	ce := ConnEnd{Opened: c.opened || !c.webSocket, Clean: end.Kind == EndDone, Resumed: c.resumed, Events: c.events}
	var connErr error
	switch {
	case end.Kind != EndDone:
		connErr = ConnError(c.url, end.Err)
		if end.Kind == EndFetchError && !c.resumed {
			connErr = corsHint(connErr, c.url, e.cmd.Origin, e.req.Headers)
		}
	case c.webSocket && end.Close != nil:
		ce.Clean, connErr = WSClose(end.Close.URL, c.opened, end.Close.Code, end.Close.Reason)
	}
	if d, ok := e.resumer.Next(e.streamID, ce, e.sess.Retry()); ok {
		e.env.After(d, Timer{Kind: TimerRetry, Gen: e.connGen})
		return true
	}
	e.sess.End(connErr)
	return true
}

// Timer handles a timer the element asked for. inFlight says a frame is
// on its way to the page: what the announcer has due goes at once then,
// not one page frame late (the announcer's pacing is the screen reader's).
func (e *Element) Timer(t Timer, inFlight bool) {
	if e.gone {
		return
	}
	switch t.Kind {
	case TimerRetry:
		if t.Gen == e.connGen && e.conn == nil && e.sess != nil && !e.sess.Ended() {
			e.sess.Reconnect()
			e.open(true)
			e.conn.resumed = true
		}
	case TimerIdle:
		e.checkIdle(t.Gen)
	case TimerAnnounce:
		e.announceAt = time.Time{}
		if inFlight && e.sess != nil {
			e.sayNow()
			return
		}
		e.env.Want()
	}
}

// open starts a connection: the first one, or a resume after a drop.
func (e *Element) open(resume bool) {
	e.connGen++
	r := e.req
	c := &connState{gen: e.connGen, webSocket: r.WebSocket}
	e.conn = c
	if e.idle > 0 {
		e.lastByte = e.clock.Now()
		e.env.After(e.idle, Timer{Kind: TimerIdle, Gen: c.gen})
	}
	if r.WebSocket {
		c.first = r.Body
		url := r.WSURL
		if resume {
			url, c.first = r.WSResume, ResumeMessage(e.streamID, e.sess.LastEventID())
		}
		c.url = url
		e.env.Open(Conn{Gen: c.gen, WebSocket: true, URL: url})
		return
	}
	if early := e.early; early != nil && !resume {
		e.early = nil // once: a retry sends the request again
		c.url = r.URL
		e.response(Response{OK: early.OK, Status: early.Status, StreamID: early.StreamID, StreamURL: early.StreamURL, Head: early.Head})
		e.env.Open(Conn{Gen: c.gen, Adopt: true, URL: r.URL})
		return
	}
	o := Conn{Gen: c.gen, URL: r.URL}
	switch {
	case resume:
		u, _ := StreamURLs(r.Endpoint, e.streamID, e.streamRef)
		o.URL, o.Method, o.Headers = u.Resume, "GET", r.ResumeHeaders(e.sess.LastEventID())
	case r.Stream:
		o.PageInit = true
	default:
		o.Method, o.Headers, o.Body = "POST", r.Headers, r.Body
	}
	c.url = o.URL
	e.env.Open(o)
}

func (e *Element) closeConn() {
	if e.conn != nil {
		e.env.Close(e.conn.gen, false)
		e.conn = nil
	}
}

// drain takes the bytes the open connection's inbox gathered since the
// last frame and feeds them, chunk by chunk with their arrival times, to
// the session.
func (e *Element) drain() {
	c := e.conn
	if c == nil {
		return
	}
	// The batch's times are read against the clock at the take, before
	// copying it out (a large one, an early answer's, takes ms to copy):
	// the arrival times, and the metrics from them, are the network's.
	now := e.clock.Now()
	b := e.env.Take(c.gen)
	if b == nil {
		return
	}
	chunks, err := protocol.ParseInbox(b, now, e.chunks[:0])
	e.chunks = chunks
	if err != nil {
		e.closeConn()
		e.sess.End(err)
		return
	}
	if len(chunks) > 0 && e.arrived.IsZero() {
		e.arrived = chunks[0].At
	}
	if len(chunks) > 0 {
		e.lastByte = e.clock.Now()
	}
	for _, ch := range chunks {
		if !e.onBytes(c, ch) {
			return
		}
	}
}

// onBytes handles one chunk of the open connection; it reports false once
// the connection is closed (the answer can no longer change).
func (e *Element) onBytes(c *connState, ch protocol.InboxChunk) bool {
	if c.httpStatus != 0 {
		if len(c.errBody) < MaxErrorBody {
			c.errBody = append(c.errBody, ch.Data...)
		}
		return true
	}
	before := e.sess.LastEventID()
	err := e.sess.WriteAt(ch.Data, ch.At)
	if id := e.sess.LastEventID(); id != before {
		c.events = true
		if e.streamID == "" {
			e.streamID = StreamID(id)
		}
	}
	if e.sess.TookFirstToken() && !e.firstTold {
		u := e.last()
		u.Events = append(u.Events, FirstTokenEvent(e.sess.Metrics()))
	}
	if err != nil || e.sess.Terminal() {
		// An event too large, an error event, the relay's status, or the
		// end marker: nothing more will change the answer.
		e.closeConn()
		e.sess.End(nil)
		e.env.Want()
		return false
	}
	return true
}

func (e *Element) statusWord() string {
	if e.req == nil && !e.showing {
		return "idle"
	}
	if st := e.sess.Status(); st != stream.Waiting {
		return st.String()
	}
	return "streaming"
}

// ErrIdle is wrapped by the error of an answer that ended because its
// connection brought no byte for the idle timeout.
var ErrIdle = errors.New("trickle: the connection went silent")

// checkIdle handles connection gen's idle timer: an answer whose
// connection brought no byte for the idle timeout ends as incomplete,
// keeping its text (a proxy that holds the client's side open after the
// backend died would otherwise leave it streaming for ever); otherwise
// the timer is armed again for the rest of the bound.
func (e *Element) checkIdle(gen int) {
	if !e.current(gen) || e.sess == nil || e.sess.Ended() || e.idle <= 0 {
		return
	}
	e.drain() // bytes that came since the last frame count
	if !e.current(gen) || e.sess.Ended() {
		return
	}
	silent := e.clock.Now().Sub(e.lastByte)
	if silent < e.idle {
		e.env.After(e.idle-silent, Timer{Kind: TimerIdle, Gen: gen})
		return
	}
	url := e.conn.url
	e.closeConn()
	e.connGen++ // a pending retry timer must not resume it
	e.sess.End(errtext.Wrap(ErrIdle.Error()+": nothing came from "+url+" for "+e.idle.String()+" (the element's idle-timeout)", ErrIdle))
	e.env.Want()
}
