package limit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/internal/limit/limittest"
	"github.com/trickle-dev/trickle/relay/internal/redistest"
	"github.com/trickle-dev/trickle/relay/store"
)

func TestTheMemoryCounterKeepsTheContract(t *testing.T) {
	m := limit.NewMemory()
	limittest.Run(t, func() limit.Counter { return m })
}

func TestRatesAreReadAsOperatorsWriteThem(t *testing.T) {
	for in, want := range map[string]limit.Rate{
		"20/min": {20, time.Minute}, "5/s": {5, time.Second}, "1000/h": {1000, time.Hour},
		" 3 / minute ": {3, time.Minute}, "1/SEC": {1, time.Second}, "2/hour": {2, time.Hour},
	} {
		got, err := limit.ParseRate(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	require.Equal(t, "20/min", limit.Rate{N: 20, Per: time.Minute}.String())
	for _, bad := range []string{"", "20", "0/min", "-1/s", "x/min", "20/day", "20/"} {
		_, err := limit.ParseRate(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "20/min", "%q: the error shows the form", bad)
	}
}

func TestEachLimitRefusesSayingWhichAndWhen(t *testing.T) {
	ctx := context.Background()
	var refused []string
	l := limit.New(limit.Settings{Rate: limit.Rate{N: 3, Per: time.Minute}, Streams: 1, TokensPerDay: 100},
		limit.NewMemory(), func(name string) { refused = append(refused, name) })

	first, err := l.Admit(ctx, "sub:alice", 0)
	require.NoError(t, err)
	_, err = l.Admit(ctx, "sub:alice", 0)
	r := refusal(t, err, "too_many_streams")
	require.Equal(t, limit.StreamLimit, r.Limit)
	require.Contains(t, r.Message, "1 generating at a time")
	require.Contains(t, r.Message, "DELETE /v1/streams/{id}")

	other, err := l.Admit(ctx, "sub:bob", 0)
	require.NoError(t, err, "bob has limits of his own")
	other.End(5)

	first.End(100)
	first.End(100) // a second End counts nothing
	_, err = l.Admit(ctx, "sub:alice", 0)
	r = refusal(t, err, "token_budget_exhausted")
	require.Equal(t, limit.TokenLimit, r.Limit)
	require.Contains(t, r.Message, "100 output tokens a day and has generated 100 today")
	require.LessOrEqual(t, r.RetryAfter, 24*time.Hour, "until midnight UTC")
	require.Positive(t, r.RetryAfter)

	// Alice was refused twice and counted once: her rate has two
	// requests left; carol's third is her last.
	for _, who := range []string{"sub:carol", "sub:carol", "sub:carol"} {
		tk, err := l.Admit(ctx, who, 0)
		require.NoError(t, err)
		tk.End(0)
	}
	_, err = l.Admit(ctx, "sub:carol", 0)
	r = refusal(t, err, "rate_limited")
	require.Equal(t, limit.RateLimit, r.Limit)
	require.Contains(t, r.Message, "3 requests a minute")
	require.InDelta(t, 20*time.Second, r.RetryAfter, float64(time.Second), "one interval: a minute over 3")
	require.Contains(t, r.Message, "try again in 20 seconds")

	require.Equal(t, []string{"streams", "tokens", "rate"}, refused)

	var nothing *limit.Limiter
	tk, err := nothing.Admit(ctx, "x", 0)
	require.NoError(t, err, "no limiter admits everything")
	tk.End(5)
	tk.Refund(ctx)
}

// A request refused by a limit, or refunded because it was refused after
// the limits admitted it, takes nothing: not its rate, not a slot.
func TestARefusedRequestCountsAgainstNoLimit(t *testing.T) {
	ctx := context.Background()
	l := limit.New(limit.Settings{Rate: limit.Rate{N: 2, Per: time.Hour}, Streams: 1}, limit.NewMemory(), nil)
	held, err := l.Admit(ctx, "k", 0)
	require.NoError(t, err)
	for range 5 {
		_, err := l.Admit(ctx, "k", 0)
		refusal(t, err, "too_many_streams")
	}
	held.End(0)
	for range 5 {
		tk, err := l.Admit(ctx, "k", 0)
		require.NoError(t, err, "a refunded request gave its place in the rate and its slot back")
		tk.Refund(ctx)
		tk.Refund(ctx) // a second refund gives nothing more
		tk.End(0)      // nor an End after it
	}
	tk, err := l.Admit(ctx, "k", 0)
	require.NoError(t, err, "the second request of the rate")
	tk.End(0)
	_, err = l.Admit(ctx, "k", 0)
	refusal(t, err, "rate_limited")
}

func refusal(t *testing.T, err error, code string) *limit.Refusal {
	t.Helper()
	var r *limit.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, code, string(r.Code))
	require.True(t, strings.HasPrefix(r.Message, "relay: "), r.Message)
	return r
}

func TestACounterThatFailsIsTheStoreBeingUnavailable(t *testing.T) {
	r := redistest.Start(t)
	rdb := newClient(t, r)
	l := limit.New(limit.Settings{Rate: limit.Rate{N: 1, Per: time.Second}}, limit.NewRedis(rdb, time.Second, quiet()), nil)
	_, err := l.Admit(context.Background(), "k", 0)
	require.NoError(t, err)
	r.Stop()
	_, err = l.Admit(context.Background(), "k", 0)
	require.True(t, errors.Is(err, store.ErrUnavailable), "%v", err)
}
