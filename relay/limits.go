// Limits per identity (package limit): requests per period, generations
// at once and output tokens per UTC day, counted per Identity before
// anything reaches the model: in memory, or with a Redis store in that
// Redis, shared by the fleet.

package relay

import (
	"fmt"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/store"
)

// Rate is a request rate (WithRateLimit): N requests per Per. Up to N
// may come at once; after that one more each Per/N.
type Rate struct {
	N   int           // requests
	Per time.Duration // per this long
}

// String writes the rate as ParseRate reads it ("20/min").
func (r Rate) String() string { return limit.Rate(r).String() }

// ParseRate reads a rate written N/s, N/min or N/h ("20/min"; also
// N/sec, N/second, N/m, N/minute, N/hour).
func ParseRate(s string) (Rate, error) {
	r, err := limit.ParseRate(s)
	if err != nil {
		return Rate{}, &OptionError{Option: "ParseRate", Value: fmt.Sprintf("%q", s), Reason: err.Error()}
	}
	return Rate(r), nil
}

// WithRateLimit lets each identity start r.N generations at once, then
// one each r.Per/r.N: a request over it gets 429 (code rate_limited)
// with Retry-After. Only requests for a generation count (not resumes,
// stops or info), and a refused request does not.
func WithRateLimit(r Rate) Option {
	return func(c *config) { c.guard.limits.Rate, c.guard.rateSet = limit.Rate(r), true }
}

// WithMaxStreamsPerClient caps the generations each identity has running
// at once: beyond it 429 (code too_many_streams). A generation counts
// until it ends, however it ends; in a fleet, one whose instance died
// stops counting within the lease.
func WithMaxStreamsPerClient(n int) Option {
	return func(c *config) { c.guard.limits.Streams, c.guard.streamsSet = n, true }
}

// WithTokensPerDay caps the output tokens each identity may generate per
// UTC day: once its day's count reaches n, requests get 429 (code
// token_budget_exhausted) until midnight UTC. Each request's output cap
// (its max_tokens or max_completion_tokens, else WithMaxTokens) is
// reserved against the day at admission, and settled when the generation
// ends to what it cost: the tokens the upstream reported, else the
// relay's count (for an upstream that reports none, estimated from the
// bytes, a token per four). Parallel requests then spend at most n and
// one request's cap.
func WithTokensPerDay(n int64) Option {
	return func(c *config) { c.guard.limits.TokensPerDay, c.guard.tokensSet = n, true }
}

// checkLimits checks the rate; checkAdmit the other limits.
func (g *guardConfig) checkLimits() error {
	if r := g.limits.Rate; g.rateSet && (r.N <= 0 || r.Per <= 0) {
		return &OptionError{Option: "WithRateLimit", Value: fmt.Sprintf("%d per %s", r.N, r.Per), Reason: "want a positive count per positive period (e.g. 20/min)"}
	}
	return nil
}

// newLimiter makes the server's limiter, if any limit is set: counting
// where the store counts for the fleet (a store.LimitStore, such as the
// Redis store), else in this process.
func (s *Server) newLimiter() {
	set := s.cfg.guard.limits
	if !set.On() {
		return
	}
	var c limit.Counter = limit.NewMemory()
	if ls, ok := s.store.(store.LimitStore); ok {
		c = ls.Limits()
	}
	s.limits = limit.New(set, c, s.metrics.LimitRefused)
}
