package element

import (
	"errors"
	"fmt"
	"strings"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Cost takes the relay's answer to a Stop's DELETE (the stream's info,
// GET /v1/streams/{id}/info): what was generated up to the cancel. The
// stopped stream's own events never carry it, since the element closed the
// connection at once. A stopped answer without usage of its own takes it
// (SetStopUsage), and trickle-usage tells the page, with the message as it
// is now. An answer the page has moved on from, or a body that is not a
// stream's info, changes nothing.
func (e *Element) Cost(info []byte) {
	s := e.stopped
	e.stopped = nil
	if s == nil || s != e.sess || e.showing {
		return
	}
	u, ok := RelayUsage(info)
	if !ok || !s.Answer().SetStopUsage(u) {
		return
	}
	up := e.fresh()
	up.Events = append(up.Events, UsageEvent(s.Answer()))
	e.env.Want()
}

// ErrStopNotConfirmed is wrapped by the detail of a Stop the relay did
// not confirm: its DELETE was refused or never reached it.
var ErrStopNotConfirmed = errors.New("trickle: the relay did not confirm the Stop")

// Cancelled takes what a Stop's DELETE got. A 2xx is the relay's
// confirmation with what the answer cost (Cost). Anything else is not a
// clean stop: the request's connection is already closed, so the relay
// ends the generation when it sees the client gone (at once for a client
// that did not declare it resumes, after its grace period for one that
// did), and trickle-error (reason "stopNotConfirmed", status "stopped")
// tells the page what happened.
func (e *Element) Cancelled(r CancelResult) {
	if r.Err == "" && r.Status >= 200 && r.Status <= 299 {
		e.Cost(r.Body)
		return
	}
	s := e.stopped
	e.stopped = nil
	if s == nil || s != e.sess || e.showing {
		return
	}
	u := e.fresh()
	u.Events = append(u.Events, StopNotConfirmedEvent(StopNotConfirmed(r)))
	e.env.Want()
}

// StopNotConfirmed explains a Stop's DELETE that got no 2xx: where it
// went, what came back, and what happens to the generation.
func StopNotConfirmed(r CancelResult) error {
	var what string
	if r.Err != "" {
		what = fmt.Sprintf("DELETE %s failed (%s)", r.URL, r.Err)
	} else {
		what = fmt.Sprintf("DELETE %s was refused: %v", r.URL, strings.TrimPrefix(HTTPError(r.Status, r.Body).Error(), "trickle: "))
	}
	return errtext.Wrap(ErrStopNotConfirmed.Error()+": "+what+"; the connection was closed, so the relay ends the generation when it sees the client gone (after its resume grace period, since the widget declares it resumes)", ErrStopNotConfirmed)
}

// stopNotConfirmedMessage is trickle-error's message for a Stop the relay
// did not confirm (the reader saw the answer stop).
const stopNotConfirmedMessage = "The server was not told to stop: it may go on generating for a while."

// StopNotConfirmedEvent is trickle-error's for a Stop the relay did not
// confirm: the answer is stopped on the page, but the model may run on
// for a while.
func StopNotConfirmedEvent(err error) protocol.DOMEvent {
	b := jsonx.AppendString([]byte(`{"status":"stopped","message":`), stopNotConfirmedMessage)
	b = append(b, `,"reason":"stopNotConfirmed","detail":`...)
	b = jsonx.AppendString(b, err.Error())
	return protocol.DOMEvent{Name: "trickle-error", Detail: string(append(b, '}'))}
}

// StopStatus takes a message the relay sent on a WebSocket after the
// reader's Stop (one SSE event's text): its stopped status carries what
// the answer cost. It reports whether msg was that status (the socket can
// then close).
func (e *Element) StopStatus(msg string) bool {
	var status string
	found := false
	p, err := sse.NewParser(sse.HandlerFunc(func(ev sse.Event) {
		if ev.Type == stream.StatusEventType && !found {
			status, found = ev.Data, true
		}
	}))
	if err != nil {
		return false
	}
	_, _ = p.Write([]byte(msg))
	_ = p.Close()
	if found {
		e.Cost([]byte(status))
	}
	return found
}

// RelayUsage reads the usage of a stream's info as the relay writes it,
// {"usage":{"completion_tokens":N,"estimated":bool}, …}: the output
// tokens generated so far. ok is false when b holds no usage.
func RelayUsage(b []byte) (u stream.Usage, ok bool) {
	err := jsonx.Decode(string(b), func(r *jsonx.Reader) {
		r.Object(func(key string) {
			if key != "usage" {
				r.Skip()
				return
			}
			if ok = r.Kind() == jsonx.Object; !ok {
				r.Skip()
				return
			}
			r.Object(func(key string) {
				switch key {
				case "completion_tokens":
					r.Int(&u.OutputTokens)
				case "estimated":
					r.Bool(&u.Estimated)
				default:
					r.Skip()
				}
			})
		})
	})
	if err != nil {
		return stream.Usage{}, false
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u, ok
}

// UsageEvent is trickle-usage's: a stopped answer's cost arrived after
// its end. The detail holds the usage and the message with it.
func UsageEvent(a *stream.Answer) protocol.DOMEvent {
	b := appendUsage([]byte(`{"usage":`), a.Usage())
	b = append(b, `,"message":`...)
	b = AppendMessage(b, a)
	return protocol.DOMEvent{Name: "trickle-usage", Detail: string(append(b, '}'))}
}
