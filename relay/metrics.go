package relay

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// metrics are the relay's counters, exposed at /metrics in the Prometheus
// text format (version 0.0.4). Written by hand: a few atomics do not need a
// client library.
type metrics struct {
	started, rejected, stops, failures, cancels atomic.Int64
	resumes, upstreamErrors, events, cuts       atomic.Int64
	connections                                 atomic.Int64 // readers connected (SSE + WebSocket)
	ttft, gap                                   *histogram
}

func newMetrics() *metrics {
	return &metrics{
		ttft: newHistogram(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
		gap:  newHistogram(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5),
	}
}

// histogram is a Prometheus histogram in seconds with fixed buckets.
type histogram struct {
	bounds []float64
	counts []atomic.Int64 // one per bound, plus +Inf
	sumNs  atomic.Int64
}

func newHistogram(bounds ...float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Int64, len(bounds)+1)}
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
}

func (h *histogram) write(w io.Writer, name, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var cum int64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		fmt.Fprintf(w, "%s_bucket{le=%q} %d\n", name, strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	cum += h.counts[len(h.bounds)].Load()
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n%s_sum %s\n%s_count %d\n", name, cum, name,
		strconv.FormatFloat(float64(h.sumNs.Load())/float64(time.Second), 'g', -1, 64), name, cum)
}

func counter(w io.Writer, name, help string, v int64) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
}

func gauge(w io.Writer, name, help string, v float64) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %s\n", name, help, name, name, strconv.FormatFloat(v, 'g', -1, 64))
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	m := s.metrics
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	gauge(w, "trickle_streams_active", "Generations running now.", float64(s.running.Load()))
	gauge(w, "trickle_connections_active", "Clients reading a stream now (SSE and WebSocket).", float64(m.connections.Load()))
	counter(w, "trickle_streams_total", "Generations started.", m.started.Load())
	counter(w, "trickle_streams_rejected_total", "Requests refused at the stream limit (429).", m.rejected.Load())
	counter(w, "trickle_stops_total", "Streams stopped by a client.", m.stops.Load())
	counter(w, "trickle_cancels_total", "Streams cancelled after the disconnect grace period or at shutdown.", m.cancels.Load())
	counter(w, "trickle_failures_total", "Streams that ended with an error.", m.failures.Load())
	counter(w, "trickle_resumes_total", "Resumed connections (Last-Event-ID).", m.resumes.Load())
	counter(w, "trickle_slow_client_cuts_total", "Connections cut because the client did not read within the write timeout.", m.cuts.Load())
	counter(w, "trickle_upstream_errors_total", "Upstream requests that failed.", m.upstreamErrors.Load())
	counter(w, "trickle_tokens_total", "Answer events from the model (simulated: text, thinking and tool-call deltas; upstream: every event).", m.events.Load())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gauge(w, "trickle_go_heap_inuse_bytes", "Go heap in use (includes garbage not yet collected).", float64(ms.HeapInuse))
	gauge(w, "trickle_go_stack_inuse_bytes", "Go goroutine stacks in use.", float64(ms.StackInuse))
	gauge(w, "trickle_go_goroutines", "Goroutines.", float64(runtime.NumGoroutine()))
	m.ttft.write(w, "trickle_time_to_first_token_seconds", "Time from the request to the model's first event.")
	m.gap.write(w, "trickle_inter_token_gap_seconds", "Time between two consecutive model events.")
}
