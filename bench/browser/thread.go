package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The long thread (-measure thread): a <trickle-chat> given a stored
// conversation at once (chat.messages), as a page that saved it restores
// it after a reload. Each turn is a short question and a markdown answer
// of about 2.5 KB, cut from a sample answer. The page (page/thread.js)
// notes when the last answer's text was first painted and when every
// answer was shown, then scrolls the thread up from its end for
// -thread-scroll-ms at -thread-scroll-speed pixels a second, counting
// frames; the trace gives the longest task,
// the tasks over 50 ms, the layouts and style recalculations, the
// restore (until every answer was shown) apart from the scroll, each task
// both on the clock and by the page thread's own CPU time.

// ThreadRun is one restore of one thread by one build.
type ThreadRun struct {
	Renderer string `json:"renderer"`
	Turns    int    `json:"turns"` // questions; as many answers
	// SetMs is how long the chat.messages setter took; LastPaintMs when
	// the last answer's text was first painted, ShownMs when every answer
	// showed its message (ms after the setter was called).
	SetMs       float64 `json:"set_ms"`
	LastPaintMs float64 `json:"last_paint_ms"`
	ShownMs     float64 `json:"shown_ms"`
	// AtEnd says the thread showed its end (the newest turns) once
	// restored.
	AtEnd bool `json:"at_end"`
	// ScrollFPS and ScrollMaxGapMs: the scroll from the end to the start.
	ScrollFPS      float64 `json:"scroll_fps"`
	ScrollMaxGapMs float64 `json:"scroll_max_gap_ms"`
	ScrolledPx     float64 `json:"scrolled_px"`
	// From the trace, between the setter and the end of the scroll.
	LongestTask float64 `json:"longest_task_ms"`
	TasksOver50 int     `json:"tasks_over_50ms"`
	// The restore alone (from the setter until every answer was shown and
	// painted, before the scroll): its longest task and its tasks over
	// 50 ms, on the clock and by the page thread's own CPU time (the
	// trace's thread time: what is left once the machine's other work is
	// taken out).
	RestoreLongest    float64 `json:"restore_longest_task_ms"`
	RestoreLongestCPU float64 `json:"restore_longest_task_cpu_ms"`
	RestoreOver50     int     `json:"restore_tasks_over_50ms"`
	RestoreOver50CPU  int     `json:"restore_tasks_over_50ms_cpu"`
	// The scroll's longest task, on the clock and by CPU time.
	ScrollLongest    float64 `json:"scroll_longest_task_ms"`
	ScrollLongestCPU float64 `json:"scroll_longest_task_cpu_ms"`
	TasksOver16      int     `json:"tasks_over_16ms"`
	Layouts          int     `json:"layouts"`
	ForcedLayout     int     `json:"forced_layouts"`
	StyleRecalcs     int     `json:"style_recalcs"`
	StyleLayout      float64 `json:"style_layout_ms"`
	MainThread       float64 `json:"main_thread_ms"`
	// The page's JS heap (performance.memory, precise) and its elements
	// once restored and scrolled.
	HeapMB float64 `json:"js_heap_mb"`
	Nodes  int     `json:"elements"`
}

// threadMessages is a stored thread of turns questions and answers: each
// answer the sample's blocks (paragraphs, lists, code fences kept whole)
// from a place that moves on per turn, until it holds about 2.5 KB.
func threadMessages(sample string, turns int) []map[string]any {
	var blocks []string
	var cur strings.Builder
	fence := false
	for _, line := range strings.SplitAfter(sample, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
		}
		cur.WriteString(line)
		if !fence && t == "" && strings.TrimSpace(cur.String()) != "" {
			blocks = append(blocks, cur.String())
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		blocks = append(blocks, cur.String()+"\n")
	}
	var msgs []map[string]any
	at := 0
	for i := range turns {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("Question %d: tell me more about part %d.", i+1, at)})
		var b strings.Builder
		fmt.Fprintf(&b, "Answer %d.\n\n", i+1)
		for b.Len() < 2500 {
			b.WriteString(blocks[at%len(blocks)])
			at++
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": b.String(), "status": "complete"})
	}
	return msgs
}

// threadHandler serves /thread-messages?turns=N.
func threadHandler(sample string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("turns"))
		if err != nil || n < 1 {
			http.Error(w, "turns must be a positive number", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(threadMessages(sample, n))
	}
}

// runThread restores each thread length with each build, runs times,
// the builds' order turning each run.
func runThread(browser context.Context, base string, widgetOf func(string) string, renderers []string, turnsList []int, runs int, scrollMs int, profiles string) ([]ThreadRun, error) {
	var out []ThreadRun
	for _, turns := range turnsList {
		for rep := range runs {
			k := rep % len(renderers)
			order := append(append([]string(nil), renderers[k:]...), renderers[:k]...)
			for _, r := range order {
				u := fmt.Sprintf("%s/bench/thread.html?turns=%d&scroll_ms=%d&scroll_px_s=%d&widget=%s", base, turns, scrollMs, threadScrollSpeed, urlQueryEscape(widgetOf(r)))
				var prof string
				if profiles != "" {
					if err := os.MkdirAll(profiles, 0o755); err != nil {
						return nil, err
					}
					prof = filepath.Join(profiles, fmt.Sprintf("thread-%d-%s-%d", turns, r, rep+1))
				}
				res, raw, err := measureWith(browser, u, measureOpts{profile: prof})
				if err != nil {
					return nil, fmt.Errorf("%s, %d turns: %w", r, turns, err)
				}
				var page struct {
					Status         string  `json:"status"`
					SetMs          float64 `json:"setMs"`
					LastPaintMs    float64 `json:"lastPaintMs"`
					ShownMs        float64 `json:"shownMs"`
					AtEnd          bool    `json:"atEnd"`
					ScrollFps      float64 `json:"scrollFps"`
					ScrollMaxGapMs float64 `json:"scrollMaxGapMs"`
					ScrolledPx     float64 `json:"scrolledPx"`
					ScrollAtMs     float64 `json:"scrollAtMs"`
					Nodes          int     `json:"nodes"`
					HeapMB         float64 `json:"heapMB"`
				}
				if err := json.Unmarshal([]byte(raw), &page); err != nil {
					return nil, err
				}
				if page.Status != "complete" {
					return nil, fmt.Errorf("%s, %d turns: chat.messages read back: %s", r, turns, page.Status)
				}
				tr := ThreadRun{
					Renderer: r, Turns: turns, SetMs: page.SetMs, LastPaintMs: page.LastPaintMs, ShownMs: page.ShownMs, AtEnd: page.AtEnd,
					ScrollFPS: page.ScrollFps, ScrollMaxGapMs: page.ScrollMaxGapMs, ScrolledPx: page.ScrolledPx,
					LongestTask: res.LongestTask, TasksOver16: res.TasksOver16ms, Layouts: res.Layouts, ForcedLayout: res.ForcedLayouts,
					StyleRecalcs: res.StyleRecalcs, StyleLayout: res.StyleLayout, MainThread: res.MainThread, HeapMB: page.HeapMB, Nodes: page.Nodes,
				}
				tr.TasksOver50 = res.LongTasksOver50
				for _, t := range res.taskTimes {
					if t.AtMs < page.ScrollAtMs {
						tr.RestoreLongest = max(tr.RestoreLongest, t.Ms)
						tr.RestoreLongestCPU = max(tr.RestoreLongestCPU, t.CPUMs)
						if t.Ms > 50 {
							tr.RestoreOver50++
						}
						if t.CPUMs > 50 {
							tr.RestoreOver50CPU++
						}
					} else {
						tr.ScrollLongest = max(tr.ScrollLongest, t.Ms)
						tr.ScrollLongestCPU = max(tr.ScrollLongestCPU, t.CPUMs)
					}
				}
				log.Printf("thread %4d turns %-12s last answer painted %6.0f ms, all shown %6.0f ms, longest task %6.1f ms, tasks >50ms %d (>16ms %d), %d layouts (%d forced), %d style recalcs, style+layout %.0f ms, main thread %.0f ms, at end %v, scroll %.1f fps (longest gap %.0f ms over %.0f px), heap %.1f MB, %d elements",
					turns, r, tr.LastPaintMs, tr.ShownMs, tr.LongestTask, tr.TasksOver50, tr.TasksOver16, tr.Layouts, tr.ForcedLayout, tr.StyleRecalcs, tr.StyleLayout, tr.MainThread, tr.AtEnd, tr.ScrollFPS, tr.ScrollMaxGapMs, tr.ScrolledPx, tr.HeapMB, tr.Nodes)
				log.Printf("thread %4d turns %-12s longest task at %.0f ms: %s; forced style recalcs %d", turns, r, res.LongestTaskAt, res.LongestTaskParts, res.ForcedStyle)
				log.Printf("thread %4d turns %-12s main thread by outermost event: %s", turns, r, topParts(res.Breakdown, 8))
				log.Printf("thread %4d turns %-12s restore (to %.0f ms): longest task %.1f ms (CPU %.1f ms), over 50 ms %d (by CPU %d); scroll: longest task %.1f ms (CPU %.1f ms)",
					turns, r, page.ScrollAtMs, tr.RestoreLongest, tr.RestoreLongestCPU, tr.RestoreOver50, tr.RestoreOver50CPU, tr.ScrollLongest, tr.ScrollLongestCPU)
				// The ten with the most CPU time.
				long := append([]longTask(nil), res.Long...)
				sort.SliceStable(long, func(i, j int) bool { return long[i].CPUMs > long[j].CPUMs })
				for i, l := range long {
					if i == 10 {
						log.Printf("thread %4d turns %-12s   and %d more tasks over 50 ms", turns, r, len(long)-10)
						break
					}
					log.Printf("thread %4d turns %-12s   a task over 50 ms at %.0f ms: %.1f ms, CPU %.1f ms: %s", turns, r, l.AtMs, l.Ms, l.CPUMs, l.Parts)
				}
				out = append(out, tr)
			}
		}
	}
	return out, nil
}

// printThread prints the medians per build and thread length.
func printThread(runs []ThreadRun) {
	fmt.Println()
	fmt.Println("A long thread restored (chat.messages; N questions, each with an answer of about 2.5 KB), medians [range] of the runs:")
	fmt.Println()
	fmt.Println("| turns | build | runs | last answer painted | all shown | restore: longest task (its CPU) | restore: tasks > 50 ms (by CPU) | layouts | style+layout | scroll fps (longest gap) | scroll: longest task (CPU) | shows its end | JS heap | elements |")
	fmt.Println("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
	type key struct {
		turns int
		r     string
	}
	var order []key
	groups := map[key][]ThreadRun{}
	for _, r := range runs {
		k := key{r.Turns, r.Renderer}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, k := range order {
		g := groups[k]
		span := func(f func(ThreadRun) float64, unit string, prec int) string {
			lo, hi := minMax(g, f)
			m := medianOf(g, f)
			if len(g) == 1 {
				return strconv.FormatFloat(m, 'f', prec, 64) + unit
			}
			return fmt.Sprintf("%s%s [%s – %s]", strconv.FormatFloat(m, 'f', prec, 64), unit, strconv.FormatFloat(lo, 'f', prec, 64), strconv.FormatFloat(hi, 'f', prec, 64))
		}
		ends := 0
		for _, r := range g {
			if r.AtEnd {
				ends++
			}
		}
		fmt.Printf("| %d | %s | %d | %s | %s | %s (%s) | %s (%s) | %s | %s | %s (%s) | %s (%s) | %d of %d | %s | %s |\n", k.turns, k.r, len(g),
			span(func(r ThreadRun) float64 { return r.LastPaintMs }, " ms", 0),
			span(func(r ThreadRun) float64 { return r.ShownMs }, " ms", 0),
			span(func(r ThreadRun) float64 { return r.RestoreLongest }, " ms", 1),
			span(func(r ThreadRun) float64 { return r.RestoreLongestCPU }, " ms", 1),
			span(func(r ThreadRun) float64 { return float64(r.RestoreOver50) }, "", 0),
			span(func(r ThreadRun) float64 { return float64(r.RestoreOver50CPU) }, "", 0),
			span(func(r ThreadRun) float64 { return float64(r.Layouts) }, "", 0),
			span(func(r ThreadRun) float64 { return r.StyleLayout }, " ms", 0),
			span(func(r ThreadRun) float64 { return r.ScrollFPS }, "", 1),
			span(func(r ThreadRun) float64 { return r.ScrollMaxGapMs }, " ms", 0),
			span(func(r ThreadRun) float64 { return r.ScrollLongest }, " ms", 1),
			span(func(r ThreadRun) float64 { return r.ScrollLongestCPU }, " ms", 1),
			ends, len(g),
			span(func(r ThreadRun) float64 { return r.HeapMB }, " MB", 1),
			span(func(r ThreadRun) float64 { return float64(r.Nodes) }, "", 0))
	}
}

// readSample reads the thread's answers' source.
func readSample(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatalf("bench/browser: %v", err)
	}
	return string(b)
}
