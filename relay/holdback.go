package relay

import (
	"errors"

	"github.com/trickle-dev/trickle/relay/internal/holdback"
)

// HoldBack is WithHoldBack's settings: the checker's URL (or Sim,
// "block=WORD", the relay as the checker), its Timeout per sentence
// (default 2s) and OnError, "allow" or "block" (the default).
type HoldBack = holdback.Settings

// WithHoldBack holds each sentence of every answer until the checker
// clears it; a blocked one ends the answer with the "withheld" status
// (docs/security.md, Hold-back).
func WithHoldBack(h HoldBack) Option { return func(c *config) { c.holdBack = &h } }

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
