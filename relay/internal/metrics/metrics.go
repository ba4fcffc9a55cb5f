// Package metrics is the relay's counters and their Prometheus exposition
// (client_golang, on a registry of the server's own).
package metrics

import (
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the relay's counters, exposed by Handler. The counters the
// hot path bumps (one per event) stay plain atomics, read by the registry
// at scrape time, so that an event costs one atomic add.
type Metrics struct {
	Started, Rejected, Stops, Failures, Cancels atomic.Int64
	Resumes, UpstreamErrors, Events, Cuts       atomic.Int64
	Connections                                 atomic.Int64 // readers connected (SSE + WebSocket)
	// Retained and Evictions are the registry's: the bytes the streams'
	// logs hold, and the finished streams forgotten early for the budget
	// (set after New, before the first scrape).
	Retained, Evictions *atomic.Int64
	// MemoryFull counts the streams refused because the running ones hold
	// the whole budget; ConnsRefused the connections refused over the
	// per-address cap.
	MemoryFull, ConnsRefused atomic.Int64
	TTFT, Gap                prometheus.Histogram
	// HoldBackWait is the latency hold-back added per sentence;
	// HoldBackVerdicts counts its checks by verdict.
	HoldBackWait     prometheus.Histogram
	HoldBackVerdicts *prometheus.CounterVec
	// LimitRefusals counts the requests refused by a per-identity limit,
	// by limit.
	LimitRefusals *prometheus.CounterVec

	// Handler serves the Prometheus text exposition.
	Handler http.Handler
}

// New makes the counters; running is the gauge of generations running.
func New(running *atomic.Int64) *Metrics {
	m := &Metrics{
		TTFT: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "trickle_time_to_first_token_seconds",
			Help:    "Time from the request to the model's first event.",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}),
		Gap: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "trickle_inter_token_gap_seconds",
			Help:    "Time between two consecutive model events.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5},
		}),
		HoldBackWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "trickle_hold_back_seconds",
			Help:    "Latency hold-back added per sentence: the time its check took.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
		}),
		HoldBackVerdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trickle_hold_back_total",
			Help: "Hold-back checks by verdict: allow, block, or error (the checker failed or timed out).",
		}, []string{"verdict"}),
	}
	for _, v := range []string{"allow", "block", "error"} {
		m.HoldBackVerdicts.WithLabelValues(v)
	}
	m.LimitRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trickle_limit_refusals_total",
		Help: "Requests refused (429) by a per-identity limit: rate (requests per period), streams (generations at once) or tokens (output tokens per day).",
	}, []string{"limit"})
	for _, l := range []string{"rate", "streams", "tokens"} {
		m.LimitRefusals.WithLabelValues(l)
	}
	gauge := func(name, help string, v func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, v)
	}
	counter := func(name, help string, c *atomic.Int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(c.Load()) })
	}
	mem := func(f func(*runtime.MemStats) uint64) func() float64 {
		return func() float64 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return float64(f(&ms))
		}
	}
	load := func(c **atomic.Int64) func() float64 {
		return func() float64 {
			if *c == nil {
				return 0
			}
			return float64((*c).Load())
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		gauge("trickle_streams_active", "Generations running now.", func() float64 { return float64(running.Load()) }),
		gauge("trickle_connections_active", "Clients reading a stream now (SSE and WebSocket).", func() float64 { return float64(m.Connections.Load()) }),
		counter("trickle_streams_total", "Generations started.", &m.Started),
		counter("trickle_streams_rejected_total", "Requests refused at the stream limit (429).", &m.Rejected),
		counter("trickle_stops_total", "Streams stopped by a client.", &m.Stops),
		counter("trickle_cancels_total", "Streams cancelled after the disconnect grace period or at shutdown.", &m.Cancels),
		counter("trickle_failures_total", "Streams that ended with an error.", &m.Failures),
		counter("trickle_resumes_total", "Resumed connections (Last-Event-ID).", &m.Resumes),
		counter("trickle_slow_client_cuts_total", "Connections cut because the client did not read within the write timeout.", &m.Cuts),
		gauge("trickle_retained_bytes", "Bytes the streams' logs hold, running and finished (bounded by --max-retained-bytes).", load(&m.Retained)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "trickle_retained_evictions_total",
			Help: "Finished streams forgotten before their retention ended, to keep the logs within --max-retained-bytes."}, load(&m.Evictions)),
		counter("trickle_memory_full_total", "Requests refused (429 memory_full) because the running streams hold all of --max-retained-bytes.", &m.MemoryFull),
		counter("trickle_connections_refused_total", "Connections refused (429 too_many_connections) over --max-conns-per-addr.", &m.ConnsRefused),
		counter("trickle_upstream_errors_total", "Upstream requests that failed.", &m.UpstreamErrors),
		counter("trickle_tokens_total", "Answer events from the model (simulated: text, thinking and tool-call deltas; upstream: every event).", &m.Events),
		gauge("trickle_go_heap_inuse_bytes", "Go heap in use (includes garbage not yet collected).", mem(func(ms *runtime.MemStats) uint64 { return ms.HeapInuse })),
		gauge("trickle_go_stack_inuse_bytes", "Go goroutine stacks in use.", mem(func(ms *runtime.MemStats) uint64 { return ms.StackInuse })),
		gauge("trickle_go_goroutines", "Goroutines.", func() float64 { return float64(runtime.NumGoroutine()) }),
		m.TTFT, m.Gap, m.HoldBackWait, m.HoldBackVerdicts, m.LimitRefusals,
	)
	m.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// HoldBack records one hold-back check: its verdict and how long the
// sentence waited for it.
func (m *Metrics) HoldBack(verdict string, wait time.Duration) {
	m.HoldBackVerdicts.WithLabelValues(verdict).Inc()
	m.HoldBackWait.Observe(wait.Seconds())
}

// LimitRefused records one refusal by the per-identity limit named.
func (m *Metrics) LimitRefused(limit string) { m.LimitRefusals.WithLabelValues(limit).Inc() }
