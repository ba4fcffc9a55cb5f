package element

import (
	"fmt"
	"strconv"

	"github.com/trickle-dev/trickle/internal/htmlx"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Update is what one element changes on the page: the page (trickle.js)
// writes its announcements and status into the live regions the moment it
// arrives, and applies the rest in its next animation frame, in this
// order: Reset, the answer's patch, thinking, tools, Text, State,
// StreamID, Metrics, End, Events, then settles the promise of call N.
// Every Go→page message is a batch of updates (Message), written as JSON
// with jsonx (one string per message, parsed once on the page).
type Update struct {
	// ID is the element.
	ID int
	// Reset: a new answer starts: empty the parts, hide the notice.
	Reset bool
	// Patch is the frame's change to the screen; HasPatch reports whether
	// there is one.
	Patch    Patch
	HasPatch bool
	// Text is the answer's new markdown since the last update (el.text
	// grows by it, in step with the DOM).
	Text string
	// State is the element's new status word (idle, streaming, complete,
	// stopped, incomplete, failed), "" when unchanged.
	State string
	// StreamID is the relay's stream id when SetStreamID.
	StreamID    string
	SetStreamID bool
	// Metrics is the metrics JSON object when it changed, else "".
	Metrics string
	// End shows how the answer ended (with the final patch).
	End *Ending
	// Events are dispatched on the element in order.
	Events []Event
	// N and Resolve settle the promise of call N with the status word
	// Resolve (when Resolve is not "").
	N       int
	Resolve string
	// Gone: the element's Go side is released; the page forgets it.
	Gone bool
	// Arrived is when the oldest bytes this update renders arrived, in
	// milliseconds since the epoch (0 when none): the page measures the
	// time from arrival to paint with it.
	Arrived float64
}

// Ending is how an answer ended, as the element shows it.
type Ending struct {
	Status string
	// Notice is the visible text ("" for none); Retry shows the retry
	// button beside it.
	Notice string
	Retry  bool
	// Detail is the technical chain of an answer that failed or ended
	// early ("" for none): the page writes it to the console, once.
	Detail string
	// Rows are the metrics shown under show-metrics (label, value), nil
	// without it.
	Rows [][2]string
	// Message is the answer as AppendMessage writes it: the element's
	// message property.
	Message string
}

// Event is a DOM event to dispatch on the element: its name and its
// detail as a JSON object.
type Event struct {
	Name   string
	Detail string
}

// Empty reports whether the update changes nothing.
func (u *Update) Empty() bool {
	return !u.Reset && !u.HasPatch && u.Text == "" && u.State == "" && !u.SetStreamID &&
		u.Metrics == "" && u.End == nil && len(u.Events) == 0 && u.Resolve == "" && !u.Gone
}

// StartEvent is trickle-start's.
func StartEvent() Event { return Event{"trickle-start", `{"status":"streaming"}`} }

// FirstTokenEvent is trickle-first-token's, sent with the answer's first
// token: the time to the first token of any kind (thinking included) and
// to the answer's own first token.
func FirstTokenEvent(m Metrics) Event {
	b, _ := jsonx.AppendFloat([]byte(`{"ttft_ms":`), m.TTFT)
	b = append(b, `,"ttfat_ms":`...)
	b, _ = jsonx.AppendFloat(b, m.TTFAT)
	return Event{"trickle-first-token", string(append(b, '}'))}
}

// ErrorEvent is trickle-error's: the answer failed. message is what the
// reader was told, reason its key (Reason's String), detail the technical
// chain for the developer, httpStatus the response's status (0: none).
func ErrorEvent(message, reason, detail string, httpStatus int) Event {
	b := jsonx.AppendString([]byte(`{"status":"failed","message":`), message)
	b = append(b, `,"reason":`...)
	b = jsonx.AppendString(b, reason)
	b = append(b, `,"detail":`...)
	b = jsonx.AppendString(b, detail)
	if httpStatus != 0 {
		b = append(b, `,"httpStatus":`...)
		b = strconv.AppendInt(b, int64(httpStatus), 10)
	}
	return Event{"trickle-error", string(append(b, '}'))}
}

// RejectEvent is trickle-error's for a call that could not start an
// answer (ask() of something that is not a request): the page's own
// mistake, which no reader is shown; reason "call".
func RejectEvent(err error) Event { return ErrorEvent(err.Error(), "call", err.Error(), 0) }

// EndEvent is trickle-end's: the final status, the metrics and the
// answer as a message (AppendMessage).
func EndEvent(status, metrics, message string) Event {
	b := jsonx.AppendString([]byte(`{"status":`), status)
	b = append(b, `,"metrics":`...)
	b = append(b, metrics...)
	b = append(b, `,"message":`...)
	b = append(b, message...)
	return Event{"trickle-end", string(append(b, '}'))}
}

// Finish fills the update with an answer's end: the notice and retry
// button, the technical detail for the console, the metrics rows when
// shown, the events (trickle-error for a failure, then trickle-end with
// message, the answer as AppendMessage writes it), and the promise's
// status.
func (u *Update) Finish(o Outcome, m Metrics, showMetrics bool, message string) {
	status := o.Status.String()
	e := &Ending{Status: status, Notice: o.Notice(), Detail: o.Detail(), Message: message}
	e.Retry = e.Notice != "" && o.Retry()
	if showMetrics {
		e.Rows = MetricRows(m, o.words())
	}
	u.End = e
	metrics := m.JSON()
	u.Metrics = metrics
	if o.Status == stream.Failed {
		detail := e.Detail
		if detail == "" {
			detail = "failed"
		}
		u.Events = append(u.Events, ErrorEvent(o.Sentence(), o.Reason.String(), detail, o.HTTPStatus))
	}
	u.Events = append(u.Events, EndEvent(status, metrics, message))
	u.Resolve = status
}

// MetricRows are the metrics show-metrics lists, formatted, named in w's
// words (English when nil).
func MetricRows(m Metrics, w *Strings) [][2]string {
	if w == nil {
		w = &English
	}
	n := &w.Metrics
	return [][2]string{
		{n[0], fmt.Sprintf("%.0f ms", m.TTFB)},
		{n[1], fmt.Sprintf("%.0f ms", m.TTFT)},
		{n[2], fmt.Sprintf("%.0f ms", m.TTFAT)},
		{n[3], fmt.Sprintf("%.0f / %.0f ms", m.GapP50, m.GapP95)},
		{n[4], fmt.Sprintf("%.1f", m.TokensPerS)},
		{n[5], fmt.Sprintf("%d", m.Bytes)},
		{n[6], m.Buffering.String()},
		{n[7], fmt.Sprintf("%.1f ms", m.FrameMax)},
	}
}

// AnnouncementHTML is the announcer log's new entries: one paragraph per
// announcement, escaped.
func AnnouncementHTML(texts []string) string {
	n := 0
	for _, t := range texts {
		n += len(t) + 7
	}
	b := make([]byte, 0, n)
	for _, t := range texts {
		b = append(b, "<p>"...)
		b = append(b, htmlx.Escape(t)...)
		b = append(b, "</p>"...)
	}
	return string(b)
}

// AppendJSON appends the update as the JSON object trickle.js reads.
func (u *Update) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(u.ID), 10)
	if u.Reset {
		b = append(b, `,"reset":true`...)
	}
	if u.HasPatch {
		p := &u.Patch
		if p.Append != "" || p.TailChanged || p.Final {
			keep := -1
			if p.TailChanged {
				keep = p.TailPatch.Keep
			}
			b = append(b, `,"p":{"a":`...)
			b = jsonx.AppendString(b, p.Append)
			b = append(b, `,"path":[`...)
			if p.TailChanged {
				for i, n := range p.TailPatch.Path {
					if i > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendInt(b, int64(n), 10)
				}
			}
			b = append(b, `],"keep":`...)
			b = strconv.AppendInt(b, int64(keep), 10)
			if p.TailChanged {
				b = append(b, `,"text":`...)
				b = jsonx.AppendString(b, p.TailPatch.Text)
				b = append(b, `,"html":`...)
				b = jsonx.AppendString(b, p.TailPatch.HTML)
			}
			if p.Final {
				b = append(b, `,"final":true`...)
			}
			if p.Unwrap {
				b = append(b, `,"unwrap":true`...)
			}
			if p.HasMarked {
				b = append(b, `,"marked":`...)
				b = jsonx.AppendString(b, p.Marked)
			}
			b = append(b, '}')
		}
		if p.Thinking != "" {
			b = append(b, `,"thinking":`...)
			b = jsonx.AppendString(b, p.Thinking)
		}
		if p.ToolsChanged {
			b = append(b, `,"tools":`...)
			b = jsonx.AppendString(b, p.Tools)
		}
		if p.SourcesChanged {
			b = append(b, `,"sources":`...)
			b = jsonx.AppendString(b, p.Sources)
		}
		if len(p.Announce) > 0 {
			b = append(b, `,"say":`...)
			b = jsonx.AppendString(b, AnnouncementHTML(p.Announce))
		}
		if len(p.Speak) > 0 {
			b = append(b, `,"speak":[`...)
			for i, t := range p.Speak {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonx.AppendString(b, t)
			}
			b = append(b, ']')
		}
		if p.StatusChanged {
			b = append(b, `,"status":`...)
			b = jsonx.AppendString(b, p.Status)
		}
		if p.ShownChanged {
			b = append(b, `,"shown":`...)
			b = jsonx.AppendString(b, p.Shown)
		}
		if p.StalledChanged {
			b = append(b, `,"stalled":`...)
			b = strconv.AppendBool(b, p.Stalled)
		}
	}
	if u.Text != "" {
		b = append(b, `,"text":`...)
		b = jsonx.AppendString(b, u.Text)
	}
	if u.State != "" {
		b = append(b, `,"state":`...)
		b = jsonx.AppendString(b, u.State)
	}
	if u.SetStreamID {
		b = append(b, `,"sid":`...)
		b = jsonx.AppendString(b, u.StreamID)
	}
	if u.Metrics != "" {
		b = append(b, `,"m":`...)
		b = append(b, u.Metrics...)
	}
	if e := u.End; e != nil {
		b = append(b, `,"end":{"status":`...)
		b = jsonx.AppendString(b, e.Status)
		b = append(b, `,"notice":`...)
		b = jsonx.AppendString(b, e.Notice)
		b = append(b, `,"retry":`...)
		b = strconv.AppendBool(b, e.Retry)
		if e.Detail != "" {
			b = append(b, `,"detail":`...)
			b = jsonx.AppendString(b, e.Detail)
		}
		if e.Message != "" {
			b = append(b, `,"msg":`...)
			b = append(b, e.Message...)
		}
		if e.Rows != nil {
			b = append(b, `,"rows":[`...)
			for i, r := range e.Rows {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, '[')
				b = jsonx.AppendString(b, r[0])
				b = append(b, ',')
				b = jsonx.AppendString(b, r[1])
				b = append(b, ']')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if len(u.Events) > 0 {
		b = append(b, `,"ev":[`...)
		for i, ev := range u.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = jsonx.AppendString(b, ev.Name)
			b = append(b, ',')
			b = append(b, ev.Detail...)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if u.Resolve != "" {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(u.N), 10)
		b = append(b, `,"resolve":`...)
		b = jsonx.AppendString(b, u.Resolve)
	}
	if u.Gone {
		b = append(b, `,"gone":true`...)
	}
	if u.Arrived > 0 {
		b = append(b, `,"arr":`...)
		b, _ = jsonx.AppendFloat(b, u.Arrived)
	}
	return append(b, '}')
}

// AppendFrame appends one frame message: {"t":"frame","u":[updates]}.
func AppendFrame(b []byte, updates []Update) []byte {
	b = append(b, `{"t":"`+protocol.TypeFrame+`","u":[`...)
	for i := range updates {
		if i > 0 {
			b = append(b, ',')
		}
		b = updates[i].AppendJSON(b)
	}
	return append(b, "]}"...)
}

// AppendSay appends a message of announcements alone: {"t":"say","u":[u]},
// which the page writes into the live regions at once, outside its frames
// (u holds only Announce and Status).
func AppendSay(b []byte, u *Update) []byte {
	b = append(b, `{"t":"`+protocol.TypeSay+`","u":[`...)
	b = u.AppendJSON(b)
	return append(b, "]}"...)
}

// fresh starts a new update for the page.
func (e *Element) fresh() *Update {
	e.out = append(e.out, Update{ID: e.id})
	return &e.out[len(e.out)-1]
}

// last is the update being filled: the last one, unless it already holds
// a frame's patch (a second patch is relative to the first's result, so it
// goes in an update of its own, applied after it).
func (e *Element) last() *Update {
	if n := len(e.out); n > 0 && !e.out[n-1].HasPatch && e.out[n-1].End == nil {
		return &e.out[n-1]
	}
	return e.fresh()
}

// TakeUpdates appends the element's updates that change something to into
// and forgets them.
func (e *Element) TakeUpdates(into []Update) []Update {
	for i := range e.out {
		if !e.out[i].Empty() {
			into = append(into, e.out[i])
		}
	}
	clear(e.out)
	e.out = e.out[:0]
	return into
}
