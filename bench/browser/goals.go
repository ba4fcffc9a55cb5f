package main

// The widget's host-page goals (docs/PERFORMANCE.md, "Widget in the
// browser"): what booting the widget costs a page that only includes
// it, how long a token waits between arriving and being painted, the cold
// first answer, and the widget's transfer size. Each runs against whatever
// widget is built; "trickle" is the widget as it boots by default (in a
// Web Worker where the build has one) and "trickle-off" the same widget
// with worker="off".

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trickle-dev/trickle/bench/internal/paced"
)

// markerTokens is the latency answer: n tokens, each one numbered word
// (w00000, w00001, …) with the markdown around it, so that the last word
// on screen says which tokens a frame has painted. The blocks cycle through
// a paragraph with emphasis, a list, a heading and a fenced code block, so
// that every renderer does its ordinary work on them.
func markerTokens(n int) []string {
	const block = 24
	tokens := make([]string, n)
	for i := range tokens {
		w := fmt.Sprintf("w%05d", i)
		k, last := i%block, i%block == block-1 || i == n-1
		switch (i / block) % 4 {
		case 0: // paragraph
			if k%7 == 3 {
				w = "**" + w + "**"
			}
			w += " "
			if last {
				w = strings.TrimSuffix(w, " ") + "\n\n"
			}
		case 1: // list, six words an item
			if k%6 == 0 {
				w = "- " + w
			}
			if k%6 == 5 || last {
				w += "\n"
			} else {
				w += " "
			}
			if last {
				w += "\n"
			}
		case 2: // heading, then a paragraph
			if k == 0 {
				w = "## " + w
			}
			if k == 5 {
				w += "\n\n"
			} else if last {
				w += "\n\n"
			} else {
				w += " "
			}
		case 3: // fenced code
			if k == 0 {
				w = "```\n" + w
			}
			if last {
				w += "\n```\n\n"
			} else if k%8 == 7 {
				w += "\n"
			} else {
				w += " "
			}
		}
		tokens[i] = w
	}
	return tokens
}

// sentLog keeps, per stream id, when each marker token was flushed
// (server clock, epoch ms).
type sentLog struct {
	mu sync.Mutex
	at map[string][]float64
}

func (l *sentLog) handler(rate float64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		id := r.URL.Query().Get("id")
		if n <= 0 || n > 100_000 || id == "" {
			http.Error(w, "marks needs n (1–100000) and id", http.StatusBadRequest)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		at := make([]float64, n)
		paced.Serve(w, r, markerTokens(n), rate, func(from, to int, t time.Time) {
			ms := float64(t.UnixMicro()) / 1000
			for i := from; i < to; i++ {
				at[i] = ms
			}
		})
		l.mu.Lock()
		l.at[id] = at
		l.mu.Unlock()
	}
}

func (l *sentLog) get(id string) []float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at[id]
}

// lastToken is when a /sse stream last flushed its answer's last token
// (server clock, epoch ms); measureWith zeroes it before each page.
var lastToken tokenClock

type tokenClock struct {
	mu sync.Mutex
	ms float64
}

func (c *tokenClock) note(t time.Time) {
	c.mu.Lock()
	c.ms = max(c.ms, float64(t.UnixMicro())/1000)
	c.mu.Unlock()
}

func (c *tokenClock) reset() { c.mu.Lock(); c.ms = 0; c.mu.Unlock() }

func (c *tokenClock) get() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ms
}

// clock answers the server's time (epoch ms), for the page's offset.
func clock(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "%.3f", float64(time.Now().UnixMicro())/1000)
}

// markPage is what bench.js leaves with probe=marks.
type markPage struct {
	AskedAt float64      `json:"askedAt"` // epoch ms, page clock
	Painted [][2]float64 `json:"painted"` // [epoch ms, highest word on screen]
	Thread  string       `json:"thread"`
	Clock   *clockSample `json:"clock"`
}

// clockSample is the page's best estimate of the server's clock.
type clockSample struct {
	RTT    float64 `json:"rtt"`
	Offset float64 `json:"offset"` // server minus page, ms
}

// Latency is token arrival → painted for one run: arrival is when the
// relay flushed the token (converted to the page's clock; loopback adds
// well under a millisecond), painted the end of the first frame whose
// rendering shows it.
type Latency struct {
	Renderer string  `json:"renderer"`
	Thread   string  `json:"thread,omitempty"`
	Tokens   int     `json:"tokens"`
	P50      float64 `json:"p50_ms"`
	P95      float64 `json:"p95_ms"`
	Max      float64 `json:"max_ms"`
	// First is the first token's arrival → painted; AskToFirst from ask()
	// to the first token painted (the cold runs' figures).
	First      float64 `json:"first_ms"`
	AskToFirst float64 `json:"ask_to_first_ms"`
	ClockRTT   float64 `json:"clock_rtt_ms"`
	Main       Result  `json:"main_thread"`
}

// latencies folds the server's flush times and the page's painted frames
// into per-token delays.
func latencies(sent []float64, page markPage) (Latency, error) {
	if page.Clock == nil {
		return Latency{}, fmt.Errorf("the page measured no clock offset")
	}
	if len(page.Painted) == 0 {
		return Latency{}, fmt.Errorf("no painted frame showed a numbered word")
	}
	var d []float64
	f := 0
	for i, at := range sent {
		arrived := at - page.Clock.Offset
		for f < len(page.Painted) && int(page.Painted[f][1]) < i {
			f++
		}
		if f == len(page.Painted) {
			return Latency{}, fmt.Errorf("token %d of %d was never painted (the last frame showed w%05d)", i, len(sent), int(page.Painted[len(page.Painted)-1][1]))
		}
		d = append(d, page.Painted[f][0]-arrived)
	}
	l := Latency{Tokens: len(d), First: d[0], ClockRTT: page.Clock.RTT, Thread: page.Thread}
	l.AskToFirst = page.Painted[0][0] - page.AskedAt
	sort.Float64s(d)
	l.P50, l.P95, l.Max = quantile(d, 0.5), quantile(d, 0.95), d[len(d)-1]
	return l, nil
}

func quantile(sorted []float64, q float64) float64 {
	return sorted[int(math.Ceil(q*float64(len(sorted))))-1]
}

// BootRun is one load of the boot page: a page of another origin with the
// widget's script tag and one element, or the same page without them (the
// baseline), from navigation to 3 s after the widget said it was ready.
type BootRun struct {
	Page      string  `json:"page"` // "widget", "baseline" or "against" (-boot-against)
	Cache     string  `json:"cache"`
	Thread    string  `json:"thread,omitempty"`
	LongTasks int     `json:"long_tasks"`
	LongMs    float64 `json:"long_tasks_ms"`
	Longest   float64 `json:"longest_long_task_ms"`
	ReadyAt   float64 `json:"ready_at_ms"`
	Main      Result  `json:"main_thread"`
}

type bootPage struct {
	LongTasks [][2]float64 `json:"longTasks"`
	ReadyAt   float64      `json:"readyAt"`
	Thread    string       `json:"thread"`
}

// bootHTML is the boot page; WIDGET is replaced by the widget's script
// tag (or nothing), READY by the widget's module URL (or "").
const bootHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A page</title>
<script>
performance.mark("boot-start");
window.longTasks = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) longTasks.push([e.startTime, e.duration]); })
  .observe({ type: "longtask", buffered: true });
</script>
WIDGET
</head>
<body><main><h1>A page</h1><p>Its own text, and an answer box.</p>
<trickle-answer endpoint="/sse"></trickle-answer></main>
<script type="module">
try {
  if (document.readyState !== "complete") await new Promise((r) => addEventListener("load", r));
  let readyAt = 0, thread = "";
  if ("READY") {
    const m = await import("READY");
    await m.ready();
    readyAt = performance.now();
    thread = m.stats ? (await m.stats()).thread : "main (no worker in this build)";
  }
  // Idle-time warm-up and the collections after it happen in this window.
  await new Promise((r) => setTimeout(r, 3000));
  performance.mark("boot-end");
  window.bench = { done: true, readyAt, thread, longTasks };
} catch (err) {
  window.bench = { done: true, error: String(err?.stack ?? err) };
}
</script>
</body></html>
`

// bootAgainst is another build of the widget whose boot runs interleaved
// with this one's, in the same browser: a comparison in one run, where the
// machine's load is the same for both.
var bootAgainst = flag.String("boot-against", "", "another built widget folder (e.g. main's) whose boot is measured interleaved with this one's, as the page \"against\"")

// bootPages serves the boot page on mux, the widget's files coming from
// widgetBase and, with -boot-against, the other build's from a relay of
// its own (also on another origin than the page).
func bootPages(mux *http.ServeMux, widgetBase, origin string) (stop func(), err error) {
	bases := map[string]string{"1": widgetBase}
	stop = func() {}
	if *bootAgainst != "" {
		if _, err := os.Stat(filepath.Join(*bootAgainst, "trickle.js")); err != nil {
			return nil, fmt.Errorf("-boot-against: %w", err)
		}
		if bases["2"], stop, err = serveWidget(*bootAgainst, origin); err != nil {
			return nil, err
		}
	}
	mux.HandleFunc("/boot/", bootHandler(bases))
	return stop, nil
}

// bootHandler serves the boot page; ?widget=K loads the widget from
// bases[K], no widget parameter makes the baseline page.
func bootHandler(bases map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tag, ready := "", ""
		if b, ok := bases[r.URL.Query().Get("widget")]; ok {
			ready = b + "trickle.js"
			tag = `<script type="module" src="` + ready + `"></script>`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, strings.NewReplacer("WIDGET", tag, "READY", ready).Replace(bootHTML))
	}
}

// runBoot loads the boot page runs times each way: the baseline, the
// widget with an empty cache (a first visit) and with the widget in the
// HTTP cache (a second one).
func runBoot(browser context.Context, base string, runs int, profiles string) ([]BootRun, error) {
	var out []BootRun
	for i := 0; i < runs; i++ {
		type load struct {
			page, cache, query string
			clear              bool
			prime              bool
		}
		loads := []load{
			{"baseline", "-", "", true, false},
			{"widget", "cold", "widget=1", true, false},
			{"widget", "warm", "widget=1", false, true},
		}
		if *bootAgainst != "" {
			loads = append(loads, load{"against", "cold", "widget=2", true, false}, load{"against", "warm", "widget=2", false, true})
		}
		for _, c := range loads {
			o := measureOpts{startMark: "boot-start", endMark: "boot-end", clearCache: c.clear}
			url := base + "/boot/?" + c.query
			if c.prime {
				o.prime = url
			}
			if profiles != "" {
				if err := os.MkdirAll(profiles, 0o755); err != nil {
					return nil, err
				}
				o.profile = filepath.Join(profiles, fmt.Sprintf("boot-%s-%s-%d", c.page, strings.TrimPrefix(c.cache, "-"), i+1))
			}
			res, raw, err := measureWith(browser, url, o)
			if err != nil {
				return nil, fmt.Errorf("boot (%s, %s): %w", c.page, c.cache, err)
			}
			var p bootPage
			if err := json.Unmarshal([]byte(raw), &p); err != nil {
				return nil, err
			}
			b := BootRun{Page: c.page, Cache: c.cache, Thread: p.Thread, ReadyAt: p.ReadyAt, Main: res}
			for _, lt := range p.LongTasks {
				b.LongTasks++
				b.LongMs += lt[1]
				b.Longest = max(b.Longest, lt[1])
			}
			log.Printf("boot %-8s %-4s run %d: long tasks %d (%.0f ms, longest %.0f ms), main thread %.0f ms in %d tasks (longest %.0f ms), ready at %.0f ms, %s",
				b.Page, b.Cache, i+1, b.LongTasks, b.LongMs, b.Longest, res.MainThread, res.Tasks, res.LongestTask, b.ReadyAt, b.Thread)
			if c.page != "baseline" {
				log.Printf("boot %-8s %-4s run %d: longest task at %.0f ms: %s; main thread by outermost event: %s",
					b.Page, b.Cache, i+1, res.LongestTaskAt, res.LongestTaskParts, topParts(res.Breakdown, 8))
			}
			log.Printf("boot %-8s %-4s run %d: main thread by what posted the task: %s", b.Page, b.Cache, i+1, topParts(res.ByPoster, 10))
			out = append(out, b)
		}
	}
	return out, nil
}

// topParts formats the first n entries of a breakdown.
func topParts(parts []selfTime, n int) string {
	var b strings.Builder
	for i, p := range parts {
		if i == n {
			break
		}
		fmt.Fprintf(&b, "%s %.0f ms; ", p.Function, p.Ms)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// runLatency streams n marker tokens into each renderer, runs times,
// and measures token arrival → painted (and, in the same run, the main
// thread). With cold, the page asks at DOMContentLoaded; the widget's
// files come from the HTTP cache (warm) or not (cold-cache). widgetOf
// gives each renderer's widget: the base's for trickle-base (-base).
func runLatency(browser context.Context, base string, widgetOf func(renderer string) string, log_ *sentLog, renderers []string, n, runs int, cold string) ([]Latency, error) {
	var out []Latency
	seq := 0
	for i := 0; i < runs; i++ {
		for _, r := range renderers {
			seq++
			id := fmt.Sprintf("%s-%d-%s", cold, seq, r)
			page := func(n int, id string) string {
				src := fmt.Sprintf("/marks?n=%d&id=%s", n, id)
				u := base + "/bench/?renderer=" + r + "&probe=marks&widget=" + urlQueryEscape(widgetOf(r)) + "&src=" + urlQueryEscape(src)
				if cold != "" {
					u += "&cold=1"
				}
				return u
			}
			url := page(n, id)
			o := measureOpts{}
			switch cold {
			case "warm-cache":
				// The same page once before, untraced, with a short
				// answer: the widget's files are then in the HTTP cache.
				o.prime = page(8, "prime-"+id)
			case "cold-cache":
				o.clearCache = true
			}
			res, raw, err := measureWith(browser, url, o)
			if err != nil {
				return nil, fmt.Errorf("latency of %s: %w", r, err)
			}
			var p markPage
			if err := json.Unmarshal([]byte(raw), &p); err != nil {
				return nil, err
			}
			l, err := latencies(log_.get(id), p)
			if err != nil {
				return nil, fmt.Errorf("latency of %s: %w", r, err)
			}
			l.Renderer, l.Main = r, res
			log.Printf("latency %-10s %-11s run %d: arrival → painted p50 %.1f ms, p95 %.1f ms, max %.1f ms; first token %.1f ms (ask → painted %.0f ms); main thread %.0f ms, longest task %.1f ms; clock rtt %.2f ms; %s",
				r, cold, i+1, l.P50, l.P95, l.Max, l.First, l.AskToFirst, res.MainThread, res.LongestTask, l.ClockRTT, l.Thread)
			out = append(out, l)
		}
	}
	return out, nil
}

// Size is the widget's transfer size: every file the default widget loads
// (the loader, its stylesheet unless the loader carries it, wasm_exec.js,
// the .wasm and, when the build has one, the worker's script; not the
// highlighting variant), brotli compressed as the relay serves it.
type Size struct {
	Files map[string]int64 `json:"files"`
	Total int64            `json:"total_brotli_bytes"`
}

// defaultFiles are the build manifest's entries the default widget loads.
var defaultFiles = []string{"loader", "css", "wasm_exec", "wasm", "worker"}

func widgetSize(dir string) (Size, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return Size{}, fmt.Errorf("the widget's manifest (make build writes it): %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return Size{}, fmt.Errorf("%s/manifest.json: %w", dir, err)
	}
	s := Size{Files: map[string]int64{}}
	for _, k := range defaultFiles {
		if k == "css" && m["css_inline"] == true {
			continue // the loader carries the stylesheet; its file is a fallback
		}
		name, ok := m[k].(string)
		if !ok {
			continue // a build without that part (no worker before it had one)
		}
		fi, err := os.Stat(filepath.Join(dir, name+".br"))
		if err != nil {
			return Size{}, fmt.Errorf("the widget's %s: %w", k, err)
		}
		s.Files[name] = fi.Size()
		s.Total += fi.Size()
	}
	if len(s.Files) == 0 {
		return Size{}, fmt.Errorf("%s/manifest.json names none of %s", dir, strings.Join(defaultFiles, ", "))
	}
	return s, nil
}

// medianOf returns the median of f over xs.
func medianOf[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		v = append(v, f(x))
	}
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

func minMax[T any](xs []T, f func(T) float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, f(x)), max(hi, f(x))
	}
	return lo, hi
}

func printBoot(runs []BootRun) {
	fmt.Println()
	fmt.Println("Boot: the page of another origin with only the widget, navigation → 3 s after ready (buffered longtask observer from navigation; main thread from the trace)")
	fmt.Println()
	fmt.Println("| page | cache | thread | runs | long tasks | in long tasks | longest long task | main-thread time | longest task | ready at |")
	fmt.Println("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range [][2]string{{"baseline", "-"}, {"widget", "cold"}, {"widget", "warm"}, {"against", "cold"}, {"against", "warm"}} {
		var rs []BootRun
		for _, r := range runs {
			if r.Page == k[0] && r.Cache == k[1] {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		span := func(f func(BootRun) float64, unit string) string {
			lo, hi := minMax(rs, f)
			return fmt.Sprintf("%.0f–%.0f%s (median %.0f)", lo, hi, unit, medianOf(rs, f))
		}
		fmt.Printf("| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", k[0], k[1], rs[0].Thread, len(rs),
			span(func(r BootRun) float64 { return float64(r.LongTasks) }, ""),
			span(func(r BootRun) float64 { return r.LongMs }, " ms"),
			span(func(r BootRun) float64 { return r.Longest }, " ms"),
			span(func(r BootRun) float64 { return r.Main.MainThread }, " ms"),
			span(func(r BootRun) float64 { return r.Main.LongestTask }, " ms"),
			span(func(r BootRun) float64 { return r.ReadyAt }, " ms"))
	}
	// The goal's reading: the widget's main-thread time over the page's own
	// (the baseline's median, same run), and the whole.
	base := medianOf(pick(runs, "baseline", "-"), func(r BootRun) float64 { return r.Main.MainThread })
	for _, k := range [][2]string{{"widget", "cold"}, {"widget", "warm"}, {"against", "cold"}, {"against", "warm"}} {
		rs := pick(runs, k[0], k[1])
		if len(rs) == 0 {
			continue
		}
		m := medianOf(rs, func(r BootRun) float64 { return r.Main.MainThread })
		fmt.Printf("\n%s, %s: %.0f ms of main-thread time in all (median), %+.0f ms over the baseline page's %.0f ms", k[0], k[1], m, m-base, base)
	}
	fmt.Println()
}

// pick returns the boot runs of one page and cache.
func pick(runs []BootRun, page, cache string) []BootRun {
	var out []BootRun
	for _, r := range runs {
		if r.Page == page && r.Cache == cache {
			out = append(out, r)
		}
	}
	return out
}

func printLatency(title string, ls []Latency) {
	fmt.Println()
	fmt.Println(title)
	fmt.Println()
	fmt.Println("| renderer | thread | runs | p50 | p95 | max | first token | ask → first painted | main-thread time | longest task |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var order []string
	by := map[string][]Latency{}
	for _, l := range ls {
		if _, ok := by[l.Renderer]; !ok {
			order = append(order, l.Renderer)
		}
		by[l.Renderer] = append(by[l.Renderer], l)
	}
	for _, r := range order {
		rs := by[r]
		fmt.Printf("| %s | %s | %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.0f ms | %.0f ms | %.1f ms |\n", r, rs[0].Thread, len(rs),
			medianOf(rs, func(l Latency) float64 { return l.P50 }), medianOf(rs, func(l Latency) float64 { return l.P95 }),
			medianOf(rs, func(l Latency) float64 { return l.Max }), medianOf(rs, func(l Latency) float64 { return l.First }),
			medianOf(rs, func(l Latency) float64 { return l.AskToFirst }), medianOf(rs, func(l Latency) float64 { return l.Main.MainThread }),
			medianOf(rs, func(l Latency) float64 { return l.Main.LongestTask }))
	}
}

// printGoals prints the streaming goals as ratios from the medians of one
// run: each widget mode's main-thread time against streaming-markdown's
// and the text floor's, with its longest task, long tasks and fps.
func printGoals(med []Result) {
	fmt.Println()
	fmt.Println("Streaming goals (medians of this run): main-thread time ≤ 1.0× smd and ≤ 1.15× text; longest task ≤ 16 ms, no long task, 60 fps")
	fmt.Println()
	fmt.Println("| answer | widget | thread | vs smd | vs text | longest task | long tasks | fps |")
	fmt.Println("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
	peer := map[string]float64{}
	for _, r := range med {
		peer[r.Sample+"/"+r.Renderer] = r.MainThread
	}
	ratio := func(a, b float64) string {
		if b == 0 {
			return "–"
		}
		return strconv.FormatFloat(a/b, 'f', 2, 64) + "×"
	}
	for _, r := range med {
		if !strings.HasPrefix(r.Renderer, "trickle") {
			continue
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %.1f ms | %d | %.0f |\n", r.Sample, r.Renderer, r.Thread,
			ratio(r.MainThread, peer[r.Sample+"/smd"]), ratio(r.MainThread, peer[r.Sample+"/text"]), r.LongestTask, r.LongTasks, r.FPS)
	}
}
