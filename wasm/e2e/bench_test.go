//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"testing"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// BenchmarkAnswerInChromium streams a canned answer into the element in
// headless Chromium and reports what the widget measured about its own
// frames (Go work plus the DOM calls and the layout the scroll forces) and
// the page's long tasks (over 50 ms, PerformanceObserver). One iteration is
// one whole answer; run with -benchtime 1x or 2x.
func BenchmarkAnswerInChromium(b *testing.B) {
	for _, answer := range []string{"sample-20k", "sample-100k"} {
		b.Run(answer, func(b *testing.B) {
			ctx := tab(b)
			var frames, frameMax, frameTotal, longTasks, longest float64
			for b.Loop() {
				browsertest.Eval[bool](b, ctx, `(() => {
					window.__long = [];
					if (!window.__obs) {
						window.__obs = new PerformanceObserver((l) => window.__long.push(...l.getEntries().map((e) => e.duration)));
						window.__obs.observe({ type: "longtask" });
					}
					return true;
				})()`)
				raw := browsertest.Eval[string](b, ctx, `(async () => {
					const a = document.getElementById("a");
					a.setAttribute("endpoint", "/v1/chat/completions?answer=`+answer+`&token_chars=4&gap_ms=1");
					const status = await a.ask("bench");
					await new Promise((r) => setTimeout(r, 100));
					return JSON.stringify({ status, m: a.metrics, long: window.__long });
				})()`)
				var got struct {
					Status string
					M      struct {
						Frames     float64 `json:"frames"`
						FrameMax   float64 `json:"frame_max_ms"`
						FrameTotal float64 `json:"frame_total_ms"`
					}
					Long []float64
				}
				if err := json.Unmarshal([]byte(raw), &got); err != nil || got.Status != "complete" {
					b.Fatalf("answer did not complete: %s (%v)", raw, err)
				}
				frames, frameMax, frameTotal = got.M.Frames, got.M.FrameMax, got.M.FrameTotal
				longTasks, longest = float64(len(got.Long)), 0
				for _, d := range got.Long {
					longest = max(longest, d)
				}
			}
			b.ReportMetric(frames, "frames")
			b.ReportMetric(frameMax, "frame-max-ms")
			b.ReportMetric(frameTotal/max(frames, 1), "frame-mean-ms")
			b.ReportMetric(frameTotal, "frame-total-ms")
			b.ReportMetric(longTasks, "long-tasks")
			b.ReportMetric(longest, "longest-task-ms")
		})
	}
}
