//go:build js && wasm

package wasm

import (
	"time"

	"github.com/trickle-dev/trickle/internal/widget"
)

// frame takes the bytes that arrived and turns what changed into an update
// for the page: the answer's patch (settled HTML + render.TailPatch), the
// side panels, announcements, and with them the text, status and metrics,
// so el.text and the DOM change together.
func (e *element) frame() {
	t0 := time.Now()
	e.drain()
	p := e.sess.Frame()
	if p.Empty() {
		e.sync(e.last())
		e.scheduleAnnouncer()
		return
	}
	e.sess.RecordFrame(time.Since(t0))
	e.emit(p)
}

// emit puts a patch that changes something into the element's next update;
// the final one also carries how the answer ended, its events and the
// settling of ask()'s promise — from whichever path took it from the
// Session (a frame, or the announcer's timer while a frame was in flight:
// the Session hands out its final patch once, so a path that dropped the
// ending would leave ask() unsettled).
func (e *element) emit(p widget.Patch) {
	u := e.last()
	u.Patch, u.HasPatch = p, true
	u.Arrived, e.arrived = e.arrived, 0
	if p.Final {
		m := e.sess.Metrics()
		m.Thread = e.h.thread
		u.Finish(e.sess.Outcome(), m, e.cmd.ShowMetrics)
		u.N, e.n = e.n, 0
		if e.gcHeld {
			e.gcHeld = false
			gc.End()
		}
	}
	e.sync(u)
	e.scheduleAnnouncer()
	if !p.Final && e.sess.Dirty() {
		e.h.want = true
	}
}

// sayNow sends what the announcer has due at once, in a message of its own
// that the page writes into the live regions without waiting for its
// animation frame. A patch that changes more than the live regions waits
// for the next frame, as usual.
func (e *element) sayNow() {
	p := e.sess.Frame()
	switch {
	case p.Empty():
	case p.Append != "" || p.TailChanged || p.Thinking != "" || p.ToolsChanged || p.ShownChanged || p.StalledChanged || p.Final:
		e.emit(p)
		e.h.want = true
		return
	default:
		u := widget.Update{ID: e.id, Patch: p, HasPatch: true}
		e.h.say = widget.AppendSay(e.h.say[:0], &u)
		e.h.post(string(e.h.say))
	}
	e.scheduleAnnouncer()
}

// sync adds to u what the page does not know yet: the new text, the status
// word, the stream id, the metrics.
func (e *element) sync(u *widget.Update) {
	if e.sess == nil {
		return
	}
	if text := e.sess.Text(); len(text) > e.textSent {
		u.Text = text[e.textSent:]
		e.textSent = len(text)
	}
	if w := e.statusWord(); w != e.stateSent {
		u.State, e.stateSent = w, w
	}
	if e.streamID != e.sidSent {
		u.StreamID, u.SetStreamID, e.sidSent = e.streamID, true, e.streamID
	}
	if u.Metrics == "" && (u.HasPatch || u.Reset) {
		m := e.sess.Metrics()
		m.Thread = e.h.thread
		u.Metrics = m.JSON()
	}
}

func (e *element) scheduleAnnouncer() {
	due, ok := e.sess.NextAnnouncement()
	if !ok || (!e.announceAt.IsZero() && !due.Before(e.announceAt)) {
		return
	}
	e.announceAt = due
	time.AfterFunc(max(time.Until(due), time.Millisecond), func() { e.h.push(msg{kind: mAnnounceTimer, el: e}) })
}
