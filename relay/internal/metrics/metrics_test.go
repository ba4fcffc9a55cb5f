package metrics

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scrape reads the exposition as Prometheus would: each sample line's
// name (with its labels) and value; HELP and TYPE lines are kept apart.
func scrape(t *testing.T, m *Metrics) (samples map[string]float64, types map[string]string) {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"), rec.Header().Get("Content-Type"))
	samples, types = map[string]float64{}, map[string]string{}
	for line := range strings.Lines(rec.Body.String()) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		samples[line[:i]] = v
	}
	return samples, types
}

func TestEveryCounterIsExposedUnderItsNameWithItsValue(t *testing.T) {
	var running atomic.Int64
	m := New(&running)
	running.Store(3)
	m.Connections.Store(4)
	for i, c := range []*atomic.Int64{&m.Started, &m.Rejected, &m.Stops, &m.Cancels, &m.Failures, &m.Resumes, &m.Cuts, &m.UpstreamErrors, &m.Events} {
		c.Add(int64(10 + i))
	}
	got, types := scrape(t, m)
	for name, want := range map[string]float64{
		"trickle_streams_active":         3,
		"trickle_connections_active":     4,
		"trickle_streams_total":          10,
		"trickle_streams_rejected_total": 11,
		"trickle_stops_total":            12,
		"trickle_cancels_total":          13,
		"trickle_failures_total":         14,
		"trickle_resumes_total":          15,
		"trickle_slow_client_cuts_total": 16,
		"trickle_upstream_errors_total":  17,
		"trickle_tokens_total":           18,
	} {
		require.Equal(t, want, got[name], name)
		if strings.HasSuffix(name, "_total") {
			require.Equal(t, "counter", types[name], name)
		} else {
			require.Equal(t, "gauge", types[name], name)
		}
	}
	require.Positive(t, got["trickle_go_goroutines"])
	require.Positive(t, got["trickle_go_heap_inuse_bytes"])
	require.Positive(t, got["trickle_go_stack_inuse_bytes"])
}

func TestLabelledCountersStartAtZeroForEveryLabelAndCountWhatTheyAreTold(t *testing.T) {
	m := New(new(atomic.Int64))
	got, _ := scrape(t, m)
	for _, v := range []string{"allow", "block", "error"} {
		require.Contains(t, got, `trickle_hold_back_total{verdict="`+v+`"}`, "shown before the first check")
	}
	for _, l := range []string{"rate", "streams", "tokens"} {
		require.Contains(t, got, `trickle_limit_refusals_total{limit="`+l+`"}`)
	}

	m.HoldBack("block", 30*time.Millisecond)
	m.HoldBack("allow", 2*time.Millisecond)
	m.HoldBack("allow", 3*time.Millisecond)
	m.LimitRefused("tokens")
	got, types := scrape(t, m)
	require.Equal(t, 2.0, got[`trickle_hold_back_total{verdict="allow"}`])
	require.Equal(t, 1.0, got[`trickle_hold_back_total{verdict="block"}`])
	require.Equal(t, 0.0, got[`trickle_hold_back_total{verdict="error"}`])
	require.Equal(t, 1.0, got[`trickle_limit_refusals_total{limit="tokens"}`])
	require.Equal(t, "histogram", types["trickle_hold_back_seconds"])
	require.Equal(t, 3.0, got["trickle_hold_back_seconds_count"])
	require.InDelta(t, 0.035, got["trickle_hold_back_seconds_sum"], 1e-9)
	require.Equal(t, 2.0, got[`trickle_hold_back_seconds_bucket{le="0.005"}`], "the two fast checks")
	require.Equal(t, 3.0, got[`trickle_hold_back_seconds_bucket{le="+Inf"}`])
}

func TestTheTimingHistogramsAreExposed(t *testing.T) {
	m := New(new(atomic.Int64))
	m.TTFT.Observe(0.3)
	m.Gap.Observe(0.02)
	got, types := scrape(t, m)
	require.Equal(t, "histogram", types["trickle_time_to_first_token_seconds"])
	require.Equal(t, 1.0, got[`trickle_time_to_first_token_seconds_bucket{le="0.5"}`])
	require.Equal(t, 0.0, got[`trickle_time_to_first_token_seconds_bucket{le="0.25"}`])
	require.Equal(t, 1.0, got["trickle_inter_token_gap_seconds_count"])
}

func TestEachServerHasARegistryOfItsOwn(t *testing.T) {
	a, b := New(new(atomic.Int64)), New(new(atomic.Int64))
	a.Started.Add(5)
	got, _ := scrape(t, b)
	require.Zero(t, got["trickle_streams_total"])
}
