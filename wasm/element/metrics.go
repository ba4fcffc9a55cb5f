package element

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/trickle-dev/trickle/internal/buffering"
	"github.com/trickle-dev/trickle/internal/jsonx"
)

// Metrics is what the widget measured about one answer, as the element's
// metrics property and the trickle-end event's detail give it. Durations are
// in milliseconds from the ask() call (on the page's clock, whichever thread
// Go runs on); zero means "did not happen".
type Metrics struct {
	TTFB       float64           `json:"ttfb_ms"`        // first byte of the response body
	TTFT       float64           `json:"ttft_ms"`        // first visible delta: thinking or answer text
	TTFAT      float64           `json:"ttfat_ms"`       // first delta of the answer itself, after any thinking
	GapP50     float64           `json:"gap_p50_ms"`     // median gap between text deltas
	GapP95     float64           `json:"gap_p95_ms"`     // 95th percentile gap
	GapMax     float64           `json:"gap_max_ms"`     // longest gap (a stall, a reconnect)
	Tokens     int               `json:"tokens"`         // text deltas received
	TokensPerS float64           `json:"tokens_per_s"`   // deltas per second, first to last
	Bytes      int               `json:"bytes"`          // response bytes, all connections
	Duration   float64           `json:"duration_ms"`    // start to end
	Buffering  buffering.Verdict `json:"buffering"`      // package buffering's verdict, its word in JSON
	Reconnects int               `json:"reconnects"`     // resumed connections
	Frames     int               `json:"frames"`         // DOM frames applied
	FrameMax   float64           `json:"frame_max_ms"`   // longest frame (Go + DOM calls)
	FrameTotal float64           `json:"frame_total_ms"` // all frames
	// Thread is where the widget's Go side ran: "worker" (a Web Worker)
	// or "main" (the page's main thread, the fallback).
	Thread string `json:"thread"`
}

// Recorder collects the timings of one answer. Not safe for concurrent use.
type Recorder struct {
	start, firstByte, lastByte, firstTok, lastTok, end time.Time
	firstAny, lastAny                                  time.Time // thinking deltas too
	bytes, reconnects, frames                          int
	gaps                                               []time.Duration // in arrival order
	tokens                                             int
	frameMax, frameTotal                               time.Duration
	// told is the time to the first answer token the page's early view
	// told the page of (toldFirst), which the metrics give as theirs.
	told      time.Duration
	toldFirst bool
	// thoughtFirst: a thinking delta came before any answer text.
	thoughtFirst bool

	// sorted holds gaps[:len(sorted)] in ascending order for the
	// percentiles; spare and fresh are reused buffers for the merge.
	sorted, spare, fresh []time.Duration
}

// Start resets the recorder for an answer that starts at now.
func (r *Recorder) Start(now time.Time) {
	*r = Recorder{start: now, gaps: r.gaps[:0], sorted: r.sorted[:0], spare: r.spare[:0], fresh: r.fresh[:0]}
}

// Bytes records n response bytes arriving at now.
func (r *Recorder) Bytes(n int, now time.Time) {
	if n <= 0 {
		return
	}
	if r.firstByte.IsZero() {
		r.firstByte = now
	}
	r.lastByte = now
	r.bytes += n
}

// Token records a text delta arriving at now; it reports whether it was the
// first.
func (r *Recorder) Token(now time.Time) bool {
	r.delta(now)
	r.tokens++
	if r.firstTok.IsZero() {
		r.firstTok, r.lastTok = now, now
		return true
	}
	r.gaps = append(r.gaps, now.Sub(r.lastTok))
	r.lastTok = now
	if len(r.gaps)-len(r.sorted) >= mergeEvery {
		r.sortedGaps()
	}
	return false
}

// Thinking records a visible delta that is not answer text (reasoning)
// arriving at now: it counts for the time to first token and as a sign of
// life, not for the answer's gaps.
func (r *Recorder) Thinking(now time.Time) {
	if r.firstAny.IsZero() && r.firstTok.IsZero() {
		r.thoughtFirst = true
	}
	r.delta(now)
}

// delta records a visible delta of any kind arriving at now.
func (r *Recorder) delta(now time.Time) {
	if r.firstAny.IsZero() {
		r.firstAny = now
	}
	r.lastAny = now
}

// LastDelta is when the last visible delta (answer or thinking) arrived;
// zero before the first.
func (r *Recorder) LastDelta() time.Time { return r.lastAny }

// GapP95 is the 95th percentile of the gaps between answer deltas so far
// (zero before the second). It merges new gaps into the sorted ones, so
// calling it once per frame costs what the new gaps cost.
func (r *Recorder) GapP95() time.Duration {
	if len(r.gaps) == 0 {
		return 0
	}
	return percentile(r.sortedGaps(), 0.95)
}

// mergeEvery bounds the gaps waiting to be sorted: a page that reads the
// metrics only at the end (the trickle-end event carries them) would
// otherwise sort every gap of the answer in that one frame — 0.5–7 ms on
// Node for a 5,000-token answer. Merging each 512 new gaps into the sorted
// ones costs one linear pass (tens of µs at 25,000 gaps) every 512 tokens.
const mergeEvery = 512

// ToldFirst records that the page was told the answer's first token came
// d after the start (the early view measured it, on the page's clock,
// before Go was there): the metrics give that time, so that they agree
// with what the page was told, not Go's reading of the same bytes' time
// through its own clock. Thinking that came before it still counts for
// the time to first token.
func (r *Recorder) ToldFirst(d time.Duration) { r.told, r.toldFirst = d, true }

// Reconnect records a resumed connection.
func (r *Recorder) Reconnect() { r.reconnects++ }

// Frame records one frame's duration.
func (r *Recorder) Frame(d time.Duration) {
	r.frames++
	r.frameTotal += d
	r.frameMax = max(r.frameMax, d)
}

// End records the end of the answer.
func (r *Recorder) End(now time.Time) { r.end = now }

// Snapshot computes the metrics so far.
func (r *Recorder) Snapshot() Metrics {
	ms := func(t time.Time) float64 {
		if t.IsZero() || r.start.IsZero() {
			return 0
		}
		return millis(t.Sub(r.start))
	}
	m := Metrics{
		TTFB:       ms(r.firstByte),
		TTFT:       ms(r.firstAny),
		TTFAT:      ms(r.firstTok),
		Tokens:     r.tokens,
		Bytes:      r.bytes,
		Duration:   ms(r.end),
		Reconnects: r.reconnects,
		Frames:     r.frames,
		FrameMax:   millis(r.frameMax),
		FrameTotal: millis(r.frameTotal),
	}
	if r.toldFirst {
		m.TTFAT, m.TTFT = millis(r.told), millis(r.told)
		if r.thoughtFirst {
			m.TTFT = min(m.TTFT, ms(r.firstAny))
		}
	}
	if len(r.gaps) > 0 {
		sorted := r.sortedGaps()
		m.GapP50 = millis(percentile(sorted, 0.50))
		m.GapP95 = millis(percentile(sorted, 0.95))
		m.GapMax = millis(sorted[len(sorted)-1])
	}
	if span := r.lastTok.Sub(r.firstTok); r.tokens > 1 && span > 0 {
		m.TokensPerS = round2(float64(r.tokens-1) / span.Seconds())
	}
	m.Buffering = buffering.Judge(r.tokens, r.lastByte.Sub(r.firstByte))
	return m
}

// sortedGaps returns every gap so far in ascending order. Pages read the
// metrics once per animation frame, and sorting every gap on each read grew
// with the answer (see BenchmarkRecorderSnapshotPerFrame); so only the gaps
// that are new since the last call are sorted, then merged with the ones
// kept sorted from before, in linear time.
func (r *Recorder) sortedGaps() []time.Duration {
	n := len(r.sorted)
	if n == len(r.gaps) {
		return r.sorted
	}
	fresh := append(r.fresh[:0], r.gaps[n:]...)
	// sort.Slice, not slices.Sort: the widget links sort.Slice's code
	// already, and a generic sort of time.Durations would add its own copy
	// of pdqsort to the .wasm (docs/notes/widget-size.md).
	sort.Slice(fresh, func(i, j int) bool { return fresh[i] < fresh[j] })
	out := r.spare[:0]
	i, j := 0, 0
	for i < n && j < len(fresh) {
		if r.sorted[i] <= fresh[j] {
			out = append(out, r.sorted[i])
			i++
		} else {
			out = append(out, fresh[j])
			j++
		}
	}
	out = append(out, r.sorted[i:]...)
	out = append(out, fresh[j:]...)
	r.spare, r.sorted, r.fresh = r.sorted, out, fresh
	return out
}

// JSON is the snapshot as a JSON object, written as encoding/json.Marshal
// writes the struct (fields in order, named by their json tags), without
// linking encoding/json into the widget.
func (m Metrics) JSON() string {
	b := make([]byte, 0, 320)
	ok := true
	float := func(name string, f float64) {
		b = append(b, name...)
		var fine bool
		b, fine = jsonx.AppendFloat(b, f)
		ok = ok && fine
	}
	integer := func(name string, n int) {
		b = append(b, name...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	float(`{"ttfb_ms":`, m.TTFB)
	float(`,"ttft_ms":`, m.TTFT)
	float(`,"ttfat_ms":`, m.TTFAT)
	float(`,"gap_p50_ms":`, m.GapP50)
	float(`,"gap_p95_ms":`, m.GapP95)
	float(`,"gap_max_ms":`, m.GapMax)
	integer(`,"tokens":`, m.Tokens)
	float(`,"tokens_per_s":`, m.TokensPerS)
	integer(`,"bytes":`, m.Bytes)
	float(`,"duration_ms":`, m.Duration)
	b = append(b, `,"buffering":`...)
	b = jsonx.AppendString(b, m.Buffering.String())
	integer(`,"reconnects":`, m.Reconnects)
	integer(`,"frames":`, m.Frames)
	float(`,"frame_max_ms":`, m.FrameMax)
	float(`,"frame_total_ms":`, m.FrameTotal)
	b = append(b, `,"thread":`...)
	b = jsonx.AppendString(b, m.Thread)
	b = append(b, '}')
	if !ok { // only floats that are not finite can fail; round2 keeps them finite
		return "{}"
	}
	return string(b)
}

// percentile picks the nearest-rank percentile of sorted (not empty).
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func millis(d time.Duration) float64 { return round2(float64(d) / float64(time.Millisecond)) }

func round2(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*100) / 100
}
