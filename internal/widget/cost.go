package widget

import (
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/stream"
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
func UsageEvent(a *stream.Answer) Event {
	b := appendUsage([]byte(`{"usage":`), a.Usage())
	b = append(b, `,"message":`...)
	b = AppendMessage(b, a)
	return Event{"trickle-usage", string(append(b, '}'))}
}
