// The upstream proxy's side in the relay: a stream whose generator is the
// upstream (package upstream).

package relay

import (
	"context"
	"errors"
	"net/http"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/internal/upstream"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/wire"
)

// Upstream errors, wrapped with where and when they happened.
var (
	ErrUpstream          = upstream.ErrUpstream
	ErrFirstTokenTimeout = upstream.ErrFirstTokenTimeout
	ErrIdleTimeout       = upstream.ErrIdleTimeout
	ErrTotalTimeout      = upstream.ErrTotalTimeout
	ErrNoEndMarker       = upstream.ErrNoEndMarker
)

// checkUpstream refuses an Upstream that cannot work, naming the field.
func checkUpstream(u *upstream.Upstream) error {
	d := DefaultSettings().Upstream
	err := u.Check(upstream.Defaults{FirstTokenTimeout: d.FirstTokenTimeout, IdleTimeout: d.IdleTimeout, TotalTimeout: d.TotalTimeout})
	var fe *upstream.FieldError
	if errors.As(err, &fe) {
		return &OptionError{Option: "WithUpstream", Field: fe.Field, Value: fe.Value, Reason: fe.Reason}
	}
	return err
}

// startUpstream registers a stream and relays the upstream's answer into
// it; payload is the body the upstream is sent.
func (s *Server) startUpstream(payload []byte, drop int, rid, owner string, t *limit.Ticket) (*streamlog.Log, error) {
	u := s.cfg.upstream
	l, err := s.register(u.Dialect.String(), drop, rid, owner, t)
	if err != nil {
		return nil, err
	}
	l.EstimateTokens() // until the upstream reports its usage
	ctx, cancel := context.WithCancel(context.Background())
	l.SetCancel(cancel)
	s.log.Info("stream started", "stream", l.ID(), "request_id", rid, "model", "upstream", "dialect", u.Dialect, "upstream", u.Where())
	go s.runUpstream(ctx, cancel, l, payload, rid)
	return l, nil
}

// runUpstream relays the upstream's answer into l and ends l: complete
// when the dialect's end marker came, failed otherwise (with the dialect's
// error event and end marker, so every client learns why). What the
// client reads says which kind of failure and names the request rid; the
// upstream's URL, its body and the error chain go to the log line with
// rid.
func (s *Server) runUpstream(ctx context.Context, cancel context.CancelFunc, l *streamlog.Log, payload []byte, rid string) {
	defer cancel()
	u := s.cfg.upstream
	// Until the upstream reports its usage (the meter reads it), the
	// stream's tokens are estimated: an event a token, or a token per four
	// bytes of its text when that is more.
	meter := u.NewMeter()
	emit := func(event, data string) bool {
		if n := meter.See(event, data); n > 0 {
			l.ReportTokens(n)
		} else {
			l.EstimateAtLeast(meter.Estimate())
		}
		return l.Emit(event, data, true)
	}
	relayed, err := u.Run(ctx, l.ID(), payload, s.cfg.maxEventSize, emit, func(attempt int, err error) {
		s.metrics.UpstreamErrors.Add(1)
		s.log.Warn("upstream attempt failed before the first byte; retrying", "stream", l.ID(), "request_id", rid, "attempt", attempt, "err", err)
	})
	if err == nil {
		l.End(StateComplete, "")
		return
	}
	if l.Info().State != StateRunning {
		return // stopped or cancelled: the cancellation is the cause
	}
	s.metrics.UpstreamErrors.Add(1)
	msg := "relay: " + upstream.Public(err) + " (request " + rid + ")"
	s.log.Warn("upstream failed", "stream", l.ID(), "request_id", rid, "events", relayed, "err", err)
	for _, m := range sim.Failure(u.Dialect, msg) {
		l.Emit(m.Event, m.Data, false)
	}
	l.End(StateFailed, msg)
}

// forwardOnce relays a stream:false request (its upstream body payload)
// to the upstream, copies its answer back and returns the output tokens
// it reported. The request's context is the upstream request's: a client
// that aborts cancels it at once.
func (s *Server) forwardOnce(w http.ResponseWriter, r *http.Request, payload []byte) int {
	tokens, err := s.cfg.upstream.Forward(r.Context(), w, payload)
	if err != nil {
		s.metrics.UpstreamErrors.Add(1)
		rid := reqlog.ID(r.Context())
		s.log.Warn("upstream failed", "request_id", rid, "err", err)
		refusal := wire.Error{Type: wire.TypeUpstream, Message: "relay: " + upstream.Public(err)}
		var se *upstream.StatusError
		if errors.As(err, &se) {
			switch se.Code {
			case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
				refusal.Type, refusal.Status = wire.TypeInvalidRequest, se.Code
			case http.StatusTooManyRequests:
				refusal.Type = wire.TypeRateLimit
			}
		}
		apierr.Write(w, refusal)
	}
	return tokens
}
