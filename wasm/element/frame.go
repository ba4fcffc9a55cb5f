package element

import (
	"time"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Frame takes the bytes that arrived and turns what changed into an update
// for the page: the answer's patch (settled HTML + render.TailPatch), the
// side panels, announcements, and with them the text, status and metrics,
// so el.text and the DOM change together.
func (e *Element) Frame() {
	if e.sess == nil {
		return
	}
	t0 := e.clock.Now()
	e.drain()
	p := e.sess.Frame()
	if p.Empty() {
		e.sync(e.last())
		e.scheduleAnnouncer()
		return
	}
	e.sess.RecordFrame(e.clock.Now().Sub(t0))
	e.emit(p)
}

// emit puts a patch that changes something into the element's next update;
// the final one also carries how the answer ended, its events and the
// settling of ask()'s promise — from whichever path took it from the
// Session (a frame, or the announcer's timer while a frame was in flight:
// the Session hands out its final patch once, so a path that dropped the
// ending would leave ask() unsettled).
func (e *Element) emit(p protocol.Patch) {
	if e.showing {
		// A stored answer is shown, not told: nothing for the live
		// regions.
		p.Announce, p.Speak, p.Status, p.StatusChanged = nil, nil, "", false
	}
	u := e.last()
	u.Patch, u.HasPatch = p, true
	if !e.arrived.IsZero() {
		u.Arrived = e.clock.EpochMS(e.arrived)
	}
	e.arrived = time.Time{}
	if (p.ToolsChanged || p.Final) && !e.showing {
		e.toolCallEvents(u)
	}
	if p.Final {
		m := e.sess.Metrics()
		m.Thread = e.thread
		// The page has the text, less what sync adds to this update.
		whole := !e.textSplit && utf8.ValidString(e.sess.Text()[e.textSent:])
		Finish(u, e.sess.Outcome(), m, e.cmd.ShowMetrics, string(AppendEndMessage(nil, e.sess.Answer(), !whole)))
		u.N, e.n = e.n, 0
		if e.showing {
			u.Events, u.Resolve, u.End.Retry = nil, "", false
		}
		if e.gcHeld {
			e.gcHeld = false
			e.gc.End()
		}
	}
	e.sync(u)
	e.scheduleAnnouncer()
	if !p.Final && e.sess.Dirty() {
		e.env.Want()
	}
}

// sayNow sends what the announcer has due at once, in a message of its own
// that the page writes into the live regions without waiting for its
// animation frame. A patch that changes more than the live regions waits
// for the next frame, as usual.
func (e *Element) sayNow() {
	p := e.sess.Frame()
	switch {
	case p.Empty():
	case p.Append != "" || p.TailChanged || p.Thinking != "" || p.ToolsChanged || p.ShownChanged || p.StalledChanged || p.Final:
		e.emit(p)
		e.env.Want()
		return
	default:
		u := protocol.Update{ID: e.id, Patch: p, HasPatch: true}
		e.say = protocol.AppendSay(e.say[:0], &u)
		e.env.Say(e.say)
	}
	e.scheduleAnnouncer()
}

// sync adds to u what the page does not know yet: the new text, the status
// word, the stream id, the metrics.
func (e *Element) sync(u *protocol.Update) {
	if e.sess == nil {
		return
	}
	if text := e.sess.Text(); len(text) > e.textSent {
		u.Text = text[e.textSent:]
		e.textSent = len(text)
		// Valid UTF-8 pieces decode on the page to the text; a piece that
		// cuts a character (or holds an invalid byte) does not.
		e.textSplit = e.textSplit || !utf8.ValidString(u.Text)
	}
	if w := e.statusWord(); w != e.stateSent {
		u.State, e.stateSent = w, w
	}
	if e.streamID != e.sidSent {
		u.StreamID, u.SetStreamID, e.sidSent = e.streamID, true, e.streamID
	}
	if u.Metrics == "" && (u.HasPatch || u.Reset) {
		m := e.sess.Metrics()
		m.Thread = e.thread
		u.Metrics = m.JSON()
	}
}

// scheduleAnnouncer arms a timer for the announcer's next due time, unless
// one as early is armed.
func (e *Element) scheduleAnnouncer() {
	due, ok := e.sess.NextAnnouncement()
	if !ok || (!e.announceAt.IsZero() && !due.Before(e.announceAt)) {
		return
	}
	e.announceAt = due
	e.env.After(max(due.Sub(e.clock.Now()), time.Millisecond), Timer{Kind: TimerAnnounce})
}

// toolCallEvents adds a trickle-tool-call event to u for each tool call
// whose arguments completed since the last frame, once per call.
func (e *Element) toolCallEvents(u *protocol.Update) {
	for i, c := range e.sess.Answer().ToolCalls() {
		if i == len(e.callsDone) {
			e.callsDone = append(e.callsDone, false)
		}
		if c.Complete && !e.callsDone[i] {
			e.callsDone[i] = true
			u.Events = append(u.Events, ToolCallEvent(c))
		}
	}
}
