package element

import (
	"fmt"
	"strconv"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// StartEvent is trickle-start's.
func StartEvent() protocol.DOMEvent {
	return protocol.DOMEvent{Name: "trickle-start", Detail: `{"status":"streaming"}`}
}

// FirstTokenEvent is trickle-first-token's, sent with the answer's first
// token: the time to the first token of any kind (thinking included) and
// to the answer's own first token.
func FirstTokenEvent(m Metrics) protocol.DOMEvent {
	b, _ := jsonx.AppendFloat([]byte(`{"ttft_ms":`), m.TTFT)
	b = append(b, `,"ttfat_ms":`...)
	b, _ = jsonx.AppendFloat(b, m.TTFAT)
	return protocol.DOMEvent{Name: "trickle-first-token", Detail: string(append(b, '}'))}
}

// ErrorEvent is trickle-error's: the answer failed. message is what the
// reader was told, reason its key (Reason's String), detail the technical
// chain for the developer, httpStatus the response's status (0: none).
func ErrorEvent(message, reason, detail string, httpStatus int) protocol.DOMEvent {
	b := jsonx.AppendString([]byte(`{"status":"failed","message":`), message)
	b = append(b, `,"reason":`...)
	b = jsonx.AppendString(b, reason)
	b = append(b, `,"detail":`...)
	b = jsonx.AppendString(b, detail)
	if httpStatus != 0 {
		b = append(b, `,"httpStatus":`...)
		b = strconv.AppendInt(b, int64(httpStatus), 10)
	}
	return protocol.DOMEvent{Name: "trickle-error", Detail: string(append(b, '}'))}
}

// RejectEvent is trickle-error's for a call that could not start an
// answer (ask() of something that is not a request): the page's own
// mistake, which no reader is shown; reason "call".
func RejectEvent(err error) protocol.DOMEvent { return ErrorEvent(err.Error(), "call", err.Error(), 0) }

// EndEvent is trickle-end's: the final status, the metrics and the
// answer as a message (AppendMessage).
func EndEvent(status, metrics, message string) protocol.DOMEvent {
	b := jsonx.AppendString([]byte(`{"status":`), status)
	b = append(b, `,"metrics":`...)
	b = append(b, metrics...)
	b = append(b, `,"message":`...)
	b = append(b, message...)
	return protocol.DOMEvent{Name: "trickle-end", Detail: string(append(b, '}'))}
}

// Finish fills u with an answer's end: the notice and retry
// button, the technical detail for the console, the metrics rows when
// shown, the events (trickle-error for a failure, then trickle-end with
// message, the answer as AppendMessage writes it), and the promise's
// status.
func Finish(u *protocol.Update, o Outcome, m Metrics, showMetrics bool, message string) {
	status := o.Status.String()
	e := &protocol.Ending{Status: status, Notice: o.Notice(), Detail: o.Detail(), Message: message}
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

// fresh starts a new update for the page.
func (e *Element) fresh() *protocol.Update {
	e.out = append(e.out, protocol.Update{ID: e.id})
	return &e.out[len(e.out)-1]
}

// last is the update being filled: the last one, unless it already holds
// a frame's patch (a second patch is relative to the first's result, so it
// goes in an update of its own, applied after it).
func (e *Element) last() *protocol.Update {
	if n := len(e.out); n > 0 && !e.out[n-1].HasPatch && e.out[n-1].End == nil {
		return &e.out[n-1]
	}
	return e.fresh()
}

// TakeUpdates appends the element's updates that change something to into
// and forgets them.
func (e *Element) TakeUpdates(into []protocol.Update) []protocol.Update {
	for i := range e.out {
		if !e.out[i].Empty() {
			into = append(into, e.out[i])
		}
	}
	clear(e.out)
	e.out = e.out[:0]
	return into
}
