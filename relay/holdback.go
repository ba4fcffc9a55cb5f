package relay

import (
	"errors"
	"net/http"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/holdback"
)

// HoldBack is WithHoldBack's settings: one checker, at a URL or the
// simulated one.
type HoldBack struct {
	// URL is the checker's endpoint: each sentence is POSTed to it, and
	// it answers {"allow": true|false} (docs/security.md, Hold-back).
	URL string
	// Timeout bounds each check (0: 2 s).
	Timeout time.Duration
	// OnError is what a checker that fails or times out means:
	// HoldBackBlock ("" too) or HoldBackAllow.
	OnError string
	// Sim, "block=WORD", makes the relay itself the checker, without
	// HTTP: any sentence containing WORD, in any case, is blocked.
	Sim string
	// Client makes the requests to URL (nil: a client of its own).
	Client *http.Client
}

// What a checker that fails or times out means (HoldBack.OnError).
const (
	HoldBackBlock = holdback.OnErrorBlock // the default: the answer is withheld
	HoldBackAllow = holdback.OnErrorAllow // the sentence goes out
)

// WithHoldBack holds each sentence of every answer until the checker
// clears it; a blocked one ends the answer with the "withheld" status
// (docs/security.md, Hold-back).
func WithHoldBack(h HoldBack) Option {
	return func(c *config) {
		s := holdback.Settings(h) // the same fields: the relay's copy
		c.holdBack = &s
	}
}

// holdBack makes the server's hold-back gates, if any.
func (s *Server) holdBack() error {
	if s.cfg.holdBack == nil {
		return nil
	}
	g, err := holdback.New(*s.cfg.holdBack, s.metrics.HoldBack, s.log)
	var fe *holdback.FieldError
	if errors.As(err, &fe) {
		return &OptionError{Option: "WithHoldBack", Field: fe.Field, Value: fe.Value, Reason: fe.Reason}
	}
	s.gates = g
	return err
}
