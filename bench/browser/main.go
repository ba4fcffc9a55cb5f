// Command browser is Trickle's in-browser benchmark: it streams a markdown
// answer as OpenAI-style SSE at a fixed token rate into headless Chromium and
// measures, in the same browser run, the main-thread cost of three renderers
// on the same page and the same stream, and of a floor that renders nothing:
//
//   - trickle: the <trickle-answer> widget (Go in WebAssembly);
//   - marked: a full re-render per animation frame (innerHTML = marked.parse);
//   - smd: streaming-markdown, the new text per frame to its incremental parser;
//   - streamdown and tanstack: Streamdown and TanStack Markdown, each a
//     React 19 root rendering the whole text so far once per frame
//     (page/react-peers.js, bundled by peers.go);
//   - text: no markdown, the new text per frame appended as a text node — the
//     browser's own cost of one visual update per frame, which bounds from
//     below what any renderer that updates the screen every frame can spend.
//
// Besides the answers (-samples), the open-code-fence answers TanStack
// Markdown publishes in its streaming benchmark (-fences: 4, 16 and 64 KiB,
// a heading and a TypeScript fence that never closes) stream in tokens of
// 32 characters, and each renderer's last <pre><code> is checked against
// the fence's code at the end (peers.go).
//
// Each widget runs twice: "trickle", the widget as it boots by default (Go
// in a Web Worker where the build has one), and "trickle-off", the same
// widget with worker="off". The widget's files come from a relay on another
// origin, as on a real page. After the streaming runs come the host page's
// goals (goals.go): the boot on a page with only the widget, token arrival
// → painted, the cold first answer, the transfer size (-measure picks).
//
// Main-thread time and the longest task come from a Chrome trace (every
// top-level task of the page's renderer main thread between the page's
// bench-start and bench-end marks); frames per second and long tasks from the
// page itself (requestAnimationFrame, PerformanceObserver "longtask").
//
// Run it from the repository root after `make build` and `npm ci` in
// bench/browser (bench/browser/run.sh does both):
//
//	go run ./bench/browser -speed 1
//
// -speed N plays the stream N times faster (quicker runs while developing);
// the standard scenario, the one docs/PERFORMANCE.md reports, is -speed 1.
// It never runs in `go test`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"

	"github.com/trickle-dev/trickle/bench/internal/paced"
)

func main() {
	var (
		samples   = flag.String("samples", "relay/sim/answers/sample-20k.md,relay/sim/answers/sample-100k.md", "comma-separated markdown answers to stream")
		renderers = flag.String("renderers", "trickle,trickle-off,marked,smd,streamdown,tanstack,text", "renderers to run, in order (trickle: the widget as it boots by default; trickle-off: with worker=\"off\"; streamdown, tanstack: Streamdown and TanStack Markdown in React)")
		fences    = flag.String("fences", "4,16,64", "also stream the open-code-fence answers TanStack Markdown publishes, of these sizes in KiB (a heading, then a TypeScript fence that never closes), in tokens of -fence-chars characters; \"\" for none; left out by default when -samples, -base or -answers is given")
		fenceCh   = flag.Int("fence-chars", 32, "characters per token of the -fences answers (TanStack's update size)")
		measures  = flag.String("measure", "stream,boot,latency,cold,size", "what to measure: stream (main-thread time per renderer on the samples), boot (the widget's boot on a page of another origin), latency (token arrival → painted), cold (the first answer asked at DOMContentLoaded), size (transfer size), first (the first visit against a warm one on emulated networks; not in the default set), thread (a long thread restored in a <trickle-chat>: -turns; not in the default set)")
		bootRuns  = flag.Int("boot-runs", 5, "loads of the boot page, each way")
		latTokens = flag.Int("latency-tokens", 1500, "tokens of the latency answer (numbered words)")
		latRuns   = flag.Int("latency-runs", 3, "runs of each renderer for latency and cold")
		rate      = flag.Float64("rate", 250, "tokens per second")
		chars     = flag.Int("chars", 4, "characters per token")
		speed     = flag.Float64("speed", 1, "play the stream this many times faster (1 = the standard scenario)")
		runs      = flag.Int("runs", 1, "runs of each renderer on each answer, interleaved; the table shows medians")
		widget    = flag.String("widget", "assets/widget", "the built widget (make build)")
		out       = flag.String("out", "bench/results/browser.json", "where to write the results as JSON")
		wireOnly  = flag.String("wire", "", "instead: count the bytes on the wire of the relay's copy of this answer (e.g. sample-20k) over SSE and WebSocket")
		baseRev   = flag.String("base", "", "the comparison mode: build this commit's widget in a temporary git worktree (kept in bench/results/.base/), serve it beside the work tree's (assets/widget) and run trickle-base, trickle and smd interleaved, -runs times (default 5), on the answers; prints the medians and spreads of main-thread time, layouts and style recalculations, and the ratios")
		prepare   = flag.Bool("prepare", false, "only build what -base needs, then exit (run.sh does it before taking the benchmark locks)")
		many      = flag.Int("answers", 1, "answers streaming at once on the page, each its own stream of the same answer (the widget: that many elements; the peers: that many boxes)")
		turns     = flag.String("turns", "200,1000", "-measure thread: the threads' lengths, in questions (each with an answer of about 2.5 KB)")
		threadMs  = flag.Int("thread-scroll-ms", 3000, "-measure thread: how long the scroll up from the thread's end lasts")
		threadPx  = flag.Int("thread-scroll-speed", 4000, "-measure thread: the scroll's speed, in pixels a second")
		cpuprof   = flag.String("profiles", "", "also save every run's Chrome trace and a V8 CPU profile into this folder (both open in Chrome's DevTools, Performance panel) and print the functions with the most self time while the answer streamed; build the widget with symbols for Go names (see docs/PERFORMANCE.md)")
	)
	flag.Parse()
	if *wireOnly != "" {
		res, err := wire(*wireOnly, *rate**speed, *chars)
		if err != nil {
			log.Fatalf("bench/browser: wire: %v", err)
		}
		fmt.Println("| transport | events | event text | on the wire | overhead per event |")
		fmt.Println("| --- | ---: | ---: | ---: | ---: |")
		for _, r := range res {
			fmt.Printf("| %s | %d | %d B | %d B | %.1f B |\n", r.Transport, r.Events, r.Payload, r.Wire, float64(r.Wire-int64(r.Payload))/float64(r.Events))
		}
		return
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["fences"] && (set["samples"] || set["base"] || set["answers"]) {
		*fences = ""
	}
	if *baseRev != "" {
		if !set["renderers"] {
			*renderers = "trickle-base,trickle,smd"
		}
		if !set["measure"] {
			*measures = "stream"
		}
		if !set["runs"] {
			*runs = 5
		}
		dir, err := buildBase(*baseRev)
		if err != nil {
			log.Fatalf("bench/browser: building %s: %v", *baseRev, err)
		}
		baseWidget = dir
	}
	if *prepare {
		return
	}
	answersAtOnce = *many
	fenceSizes, fenceChars = *fences, *fenceCh
	threadTurns, threadScrollMs, threadScrollSpeed = *turns, *threadMs, *threadPx
	if err := run(*samples, *renderers, *measures, *rate**speed, *chars, *runs, *bootRuns, *latTokens, *latRuns, *widget, *out, *cpuprof); err != nil {
		log.Fatalf("bench/browser: %v", err)
	}
}

// answersAtOnce is -answers: how many answers stream at once on the page.
var answersAtOnce = 1

// fenceSizes and fenceChars are -fences and -fence-chars.
var (
	fenceSizes = ""
	fenceChars = 32
)

// threadTurns and threadScrollMs are -turns and -thread-scroll-ms.
var (
	threadTurns       = "200,1000"
	threadScrollMs    = 3000
	threadScrollSpeed = 4000
)

// Result is one renderer on one answer.
type Result struct {
	Sample   string `json:"sample"`
	Renderer string `json:"renderer"`
	Status   string `json:"status"`
	Thread   string `json:"thread,omitempty"` // the widget's metrics.thread
	Chars    int    `json:"chars"`
	// Answers is how many answers streamed at once (-answers), and
	// FirstEnd and LastEnd when the first and the last of them ended (ms
	// after the start mark).
	Answers  int     `json:"answers"`
	FirstEnd float64 `json:"first_end_ms"`
	LastEnd  float64 `json:"last_end_ms"`
	// EndAfterLastToken is the final DOM after the last token: when the
	// answer's text on the page last changed, less when the server
	// flushed the answer's last token (of the last stream to end), on
	// one clock (the page's estimate of the server's, from the round trip
	// with the least delay of 15). Nil when either is unknown.
	EndAfterLastToken *float64 `json:"end_after_last_token_ms,omitempty"`
	Duration          float64  `json:"duration_ms"`
	// MainThread is the summed duration of the page's main-thread tasks
	// while the answer streamed.
	MainThread float64 `json:"main_thread_ms"`
	// LongestTask is the longest of those tasks: the most work done before
	// the browser could paint again.
	LongestTask float64 `json:"longest_task_ms"`
	Tasks       int     `json:"tasks"`
	// TasksOver4ms counts tasks longer than the 4 ms frame-work goal.
	TasksOver4ms int `json:"tasks_over_4ms"`
	// TasksOver16ms counts tasks longer than a frame at 60 fps (the
	// longest-task goal): one, or many.
	TasksOver16ms int `json:"tasks_over_16ms"`
	LongTasks     int `json:"long_tasks"`
	// LongTasksOver50 counts the trace's tasks over 50 ms (the longtask
	// API's threshold).
	LongTasksOver50 int `json:"tasks_over_50ms"`
	// LongestTaskCPU and TasksOver50CPU are the same by the thread's own
	// CPU time in each task (the trace's thread time): what the page did,
	// whatever else the machine ran meanwhile. Long lists every task over
	// 50 ms by either clock, with where its time went.
	LongestTaskCPU float64    `json:"longest_task_cpu_ms"`
	TasksOver50CPU int        `json:"tasks_over_50ms_cpu"`
	Long           []longTask `json:"long_tasks_list,omitempty"`
	// taskTimes is every task's start (ms after the start mark), wall and
	// CPU time, for a measure that splits the window (thread.go).
	taskTimes []longTask
	// StyleLayout and Paint split the main-thread time: style recalculation
	// and layout, then paint and compositing preparation; the rest is
	// script (for the widget: Go in WebAssembly, with its GC) and glue.
	StyleLayout float64 `json:"style_layout_ms"`
	Paint       float64 `json:"paint_ms"`
	FPS         float64 `json:"fps"`
	MaxFrameGap float64 `json:"max_frame_gap_ms"`
	// LongestTaskAt is when the longest task started (ms after the start
	// mark) and LongestTaskParts the heaviest timeline events inside it:
	// where to look first.
	LongestTaskAt    float64 `json:"longest_task_at_ms"`
	LongestTaskParts string  `json:"longest_task_parts"`
	// Breakdown splits the main-thread time by what each task ran first
	// (its outermost timeline events: FunctionCall, FireAnimationFrame,
	// UpdateLayoutTree…), "(rest of task)" being what no event covers.
	Breakdown []selfTime `json:"breakdown"`
	// ByPoster splits it by what posted each task (see traceEvent.poster):
	// the loading, IPC and frame tasks a trace's timeline events leave as
	// "(rest of task)".
	ByPoster []selfTime `json:"by_poster"`
	// Work counted, not timed (these do not drift with the machine): the
	// page thread's style recalculations (UpdateLayoutTree) and layouts,
	// those of them forced by script (run inside a script event: geometry
	// read after a write, or a write-read in an animation frame callback),
	// the script time (outermost script events, less the forced style and
	// layout inside them), the answer box's DOM mutation records and the
	// nodes they added or removed (a MutationObserver on the page), and the
	// animation frames while it streamed, those in which the box changed.
	// Growth is how the page's rendering per unit of time changes as the
	// answer grows (the stream's rate is constant, so time is text): the
	// style and layout time in the last fifth of the stream over that in
	// its first fifth, and the same for paint (PrePaint, Paint, Layerize).
	// Work bounded by the tail stays near 1; work that grows with the
	// answer shows here, in one run, whatever the machine's speed.
	LayoutGrowth      float64 `json:"style_layout_growth"`
	PaintGrowth       float64 `json:"paint_growth"`
	StyleRecalcs      int     `json:"style_recalcs"`
	Layouts           int     `json:"layouts"`
	ForcedStyle       int     `json:"forced_style_recalcs"`
	ForcedLayouts     int     `json:"forced_layouts"`
	Script            float64 `json:"script_ms"`
	Mutations         int     `json:"mutations"`
	NodesTouched      int     `json:"nodes_touched"`
	Frames            int     `json:"frames"`
	ChangedFrames     int     `json:"changed_frames"`
	LayoutsPerChange  float64 `json:"layouts_per_changed_frame"`
	RecalcsPerChange  float64 `json:"style_recalcs_per_changed_frame"`
	ScriptPerChangeMs float64 `json:"script_per_changed_frame_ms"`
	// Own is what the widget measured of itself (its frames: Go plus its
	// DOM calls, without the browser's style, layout and paint); only for
	// the widget.
	Own *ownFrames `json:"own,omitempty"`
	// Profile is the self time per function of the CPU profile (with
	// -profiles), ProfileMs its sampled total, both between the marks.
	Profile   []selfTime `json:"profile,omitempty"`
	ProfileMs float64    `json:"profile_ms,omitempty"`
	// CodeCheck is, on an open-code-fence answer, whether the renderer
	// showed the fence's code at the end (codeCheck): "ok" or what is
	// wrong.
	CodeCheck string `json:"code_check,omitempty"`

	startTs, endTs float64 // the marks, in trace microseconds
	code           *string // the page's last <pre><code> text (check=code)
}

// longTask is one task over 50 ms: when it started (ms after the start
// mark), its wall and CPU time, and its heaviest outermost timeline
// events (wall/CPU ms each).
type longTask struct {
	AtMs  float64 `json:"at_ms"`
	Ms    float64 `json:"ms"`
	CPUMs float64 `json:"cpu_ms"`
	Parts string  `json:"parts"`
}

type ownFrames struct {
	Frames     int     `json:"frames"`
	FrameMaxMs float64 `json:"frame_max_ms"`
	TotalMs    float64 `json:"frame_total_ms"`
}

// Report is everything one run measured (bench/results/browser.json).
type Report struct {
	Stream      []Result     `json:"stream,omitempty"`
	Boot        []BootRun    `json:"boot,omitempty"`
	Latency     []Latency    `json:"latency,omitempty"`
	Cold        []Latency    `json:"cold,omitempty"`
	Size        *Size        `json:"size,omitempty"`
	First       []FirstVisit `json:"first,omitempty"`
	Thread      []ThreadRun  `json:"thread,omitempty"`
	LoadAverage string       `json:"load_average"`
}

func run(samples, renderers, measures string, rate float64, chars, runs, bootRuns, latTokens, latRuns int, widget, out, cpuprof string) error {
	if _, err := os.Stat(filepath.Join(widget, "trickle.js")); err != nil && (strings.Contains(renderers, "trickle") || measures != "stream") {
		return fmt.Errorf("widget not built in %s (run make build): %w", widget, err)
	}
	do := map[string]bool{}
	for _, m := range strings.Split(measures, ",") {
		do[strings.TrimSpace(m)] = true
	}
	var report Report
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(b))[:min(3, len(strings.Fields(string(b))))], " ")
	}
	log.Printf("load average at the start: %s", load())
	answers := map[string]string{}
	var names []string
	for _, p := range strings.Split(samples, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue // -samples '' -fences 4,16,64: the fence answers alone
		}
		// PATH*N: the answer N times over, its headings renamed per pass
		// (the megabyte answer: sample-100k.md*10).
		times := 1
		if i := strings.LastIndexByte(p, '*'); i > 0 {
			n, err := strconv.Atoi(p[i+1:])
			if err != nil || n < 1 {
				return fmt.Errorf("sample %q: want PATH*N with N ≥ 1", p)
			}
			p, times = p[:i], n
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		if times > 1 {
			name = fmt.Sprintf("%s-x%d", name, times)
		}
		answers[name] = repeatAnswer(string(b), times)
		names = append(names, name)
	}
	// The open-code-fence answers (-fences), in tokens of -fence-chars.
	tokenChars := map[string]int{}
	fenceCode := map[string]string{}
	for _, f := range strings.Split(fenceSizes, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		kib, err := strconv.Atoi(f)
		if err != nil || kib < 1 {
			return fmt.Errorf("-fences: %q is not a size in KiB", f)
		}
		name := fmt.Sprintf("fence-%dkib", kib)
		answers[name], fenceCode[name] = fenceAnswer(kib)
		tokenChars[name] = fenceChars
		names = append(names, name)
	}

	mux := http.NewServeMux()
	mux.Handle("/bench/", http.StripPrefix("/bench/", http.FileServer(http.Dir("bench/browser/page"))))
	paced.Shared(mux)
	mux.HandleFunc("/peers/marked.js", file("bench/browser/node_modules/marked/lib/marked.esm.js"))
	mux.HandleFunc("/peers/smd.js", file("bench/browser/node_modules/streaming-markdown/smd.js"))
	for _, r := range strings.Split(renderers, ",") {
		if contains(reactPeers, strings.TrimSpace(r)) {
			bundle, err := bundleReactPeers("bench/browser")
			if err != nil {
				return err
			}
			mux.HandleFunc("/peers/react.js", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/javascript")
				_, _ = w.Write(bundle)
			})
			break
		}
	}
	sent := &sentLog{at: map[string][]float64{}}
	mux.HandleFunc("/marks", sent.handler(rate))
	mux.HandleFunc("/clock", clock)
	mux.HandleFunc("/thread-messages", threadHandler(readSample("relay/sim/answers/sample-20k.md")))
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		// The streams of -answers come from other ports (below): CORS.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Headers", "*")
		if r.Method == http.MethodOptions {
			return
		}
		answer, ok := answers[r.URL.Query().Get("sample")]
		if !ok {
			http.Error(w, "unknown sample", http.StatusNotFound)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		n := chars
		if c, ok := tokenChars[r.URL.Query().Get("sample")]; ok {
			n = c
		}
		tokens := paced.Tokens(answer, n)
		paced.Serve(w, r, tokens, rate, func(_, to int, at time.Time) {
			if to == len(tokens) {
				lastToken.note(at)
			}
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	// A browser opens at most 6 HTTP/1.1 connections to one host and port:
	// with more answers at once the 7th would wait for the 1st to end, a
	// limit of the benchmark's server, not of the page (a relay over
	// HTTP/2 has none). Each answer gets a port of its own.
	var streamBases []string
	for i := 0; answersAtOnce > 1 && i < answersAtOnce; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		s := &http.Server{Handler: mux}
		go s.Serve(l)
		defer s.Close()
		streamBases = append(streamBases, "http://"+l.Addr().String())
	}
	// The widget's files come from a relay on another origin, as on a real
	// page (the README's snippet): CORS, brotli, immutable hashed names.
	widgetBase, stopRelay, err := serveWidget(widget, base)
	if err != nil {
		return err
	}
	defer stopRelay()
	widgetOf := func(r string) string { return widgetBase }
	if baseWidget != "" {
		baseURL, stopBase, err := serveWidget(baseWidget, base)
		if err != nil {
			return err
		}
		defer stopBase()
		widgetOf = func(r string) string {
			if r == "trickle-base" {
				return baseURL
			}
			return widgetBase
		}
	}
	stopBoot, err := bootPages(mux, widgetBase, base)
	if err != nil {
		return err
	}
	defer stopBoot()

	exe, err := browsertest.Find()
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "trickle-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	// Precise performance.memory: the thread measure reads the JS heap.
	browser, cancel := browsertest.Launch(context.Background(), exe, profile, browsertest.WithFlag("enable-precise-memory-info", true))
	defer cancel()
	if err := chromedp.Do(browser); err != nil {
		return fmt.Errorf("starting chromium: %w", err)
	}

	var results []Result
	if !do["stream"] {
		names = nil
	}
	for _, name := range names {
		want := len(utf16.Encode([]rune(answers[name])))
		for rep := 0; rep < runs; rep++ {
			order := strings.Split(renderers, ",")
			if baseWidget != "" {
				// Each renderer takes each place in the order in turn, so
				// that what runs first (or after which) evens out.
				k := rep % len(order)
				order = append(order[k:len(order):len(order)], order[:k]...)
			}
			for _, r := range order {
				src := "/sse?sample=" + name
				u := base + "/bench/?renderer=" + r + "&widget=" + urlQueryEscape(widgetOf(r)) + "&src=" + urlQueryEscape(src)
				if answersAtOnce > 1 {
					srcs := make([]string, len(streamBases))
					for i, b := range streamBases {
						srcs[i] = b + src
					}
					u += "&answers=" + strconv.Itoa(answersAtOnce) + "&srcs=" + urlQueryEscape(strings.Join(srcs, " "))
				}
				code, fence := fenceCode[name]
				if fence {
					u += "&check=code"
				}
				prof := ""
				if cpuprof != "" {
					if err := os.MkdirAll(cpuprof, 0o755); err != nil {
						return err
					}
					prof = filepath.Join(cpuprof, fmt.Sprintf("%s-%s-%d", name, r, rep+1))
				}
				res, err := measure(browser, u, prof)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", r, name, err)
				}
				res.Sample, res.Renderer = name, r
				if fence {
					res.CodeCheck = codeCheck(code, res.code)
					if res.CodeCheck != "ok" {
						log.Printf("%-12s %-8s open fence: %s", name, r, res.CodeCheck)
					}
				}
				if res.Chars != want {
					return fmt.Errorf("%s on %s: got %d characters of text, the answer has %d", r, name, res.Chars, want)
				}
				log.Printf("%-12s %-8s main thread %8.1f ms (style+layout %.0f, paint %.0f), longest task %6.1f ms, tasks >4ms %4d, >16ms %d, long tasks %d, %5.1f fps, max frame gap %6.1f ms (%s, %.1f s)",
					name, r, res.MainThread, res.StyleLayout, res.Paint, res.LongestTask, res.TasksOver4ms, res.TasksOver16ms, res.LongTasks, res.FPS, res.MaxFrameGap, res.Status, res.Duration/1000)
				log.Printf("%-12s %-8s work: %d style recalcs (%d forced), %d layouts (%d forced), script %.0f ms, %d mutations touching %d nodes, %d frames (%d changed): per changed frame %.2f recalcs, %.2f layouts, %.2f ms script",
					name, r, res.StyleRecalcs, res.ForcedStyle, res.Layouts, res.ForcedLayouts, res.Script, res.Mutations, res.NodesTouched, res.Frames, res.ChangedFrames, res.RecalcsPerChange, res.LayoutsPerChange, res.ScriptPerChangeMs)
				if res.Answers > 1 {
					log.Printf("%-12s %-8s %d answers at once: the first ended after %.1f s, the last after %.1f s", name, r, res.Answers, res.FirstEnd/1000, res.LastEnd/1000)
				}
				if res.EndAfterLastToken != nil {
					log.Printf("%-12s %-8s the answer's text last changed %.1f ms after the server flushed the last token", name, r, *res.EndAfterLastToken)
				}
				log.Printf("%-12s %-8s growth, last fifth of the stream over the first: style+layout %.2f×, paint %.2f×", name, r, res.LayoutGrowth, res.PaintGrowth)
				log.Printf("%-12s %-8s longest task at %.0f ms: %s", name, r, res.LongestTaskAt, res.LongestTaskParts)
				log.Printf("%-12s %-8s main thread by outermost event: %s", name, r, topParts(res.Breakdown, 10))
				if len(res.Profile) > 0 {
					var b strings.Builder
					for i, f := range res.Profile {
						if i == 25 {
							break
						}
						fmt.Fprintf(&b, "\n  %8.1f ms  %s", f.Ms, f.Function)
					}
					log.Printf("%-12s %-8s CPU profile: %.0f ms sampled while streaming; most self time:%s", name, r, res.ProfileMs, b.String())
				}
				if res.Own != nil {
					log.Printf("%-12s %-8s its own frames: %d, longest %.1f ms, total %.1f ms", name, r, res.Own.Frames, res.Own.FrameMaxMs, res.Own.TotalMs)
				}
				results = append(results, res)
			}
		}
	}
	report.Stream = results
	if len(results) > 0 {
		printTable(medians(results))
		printWork(medians(results))
		printPeers(results)
		if baseWidget != "" {
			printCompare(results)
		} else {
			printGoals(medians(results))
		}
	}
	widgets := []string{}
	for _, r := range strings.Split(renderers, ",") {
		if strings.HasPrefix(r, "trickle") {
			widgets = append(widgets, r)
		}
	}
	if do["boot"] {
		if report.Boot, err = runBoot(browser, base, bootRuns, cpuprof); err != nil {
			return err
		}
		printBoot(report.Boot)
	}
	if do["latency"] {
		var rs []string
		for _, r := range strings.Split(renderers, ",") {
			if r != "marked" {
				rs = append(rs, r)
			}
		}
		if report.Latency, err = runLatency(browser, base, widgetOf, sent, rs, latTokens, latRuns, ""); err != nil {
			return err
		}
		printLatency(fmt.Sprintf("Token arrival → painted: %d numbered-word tokens at %.0f tokens/s, medians of %d runs (goal, worker mode: p95 ≤ one frame + 4 ms)", latTokens, rate, latRuns), report.Latency)
	}
	if do["cold"] {
		for _, c := range []string{"warm-cache", "cold-cache"} {
			ls, err := runLatency(browser, base, widgetOf, sent, widgets, 40, latRuns, c)
			if err != nil {
				return err
			}
			report.Cold = append(report.Cold, ls...)
			printLatency(fmt.Sprintf("Cold first answer, ask() at DOMContentLoaded, widget files %s (goal with the .wasm in the HTTP cache: first token arrival → painted ≤ 50 ms)", strings.Replace(c, "-", " in the HTTP ", 1)), ls)
		}
	}
	if do["thread"] {
		var ns []int
		for _, f := range strings.Split(threadTurns, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("-turns: %q is not a positive number", f)
			}
			ns = append(ns, n)
		}
		if report.Thread, err = runThread(browser, base, widgetOf, widgets, ns, runs, threadScrollMs, cpuprof); err != nil {
			return err
		}
		printThread(report.Thread)
	}
	if do["first"] {
		if report.First, err = runFirst(browser, widget); err != nil {
			return err
		}
		printFirst(report.First)
	}
	if do["size"] {
		sz, err := widgetSize(widget)
		if err != nil {
			return err
		}
		report.Size = &sz
		fmt.Println()
		fmt.Printf("Widget transfer size (brotli, every file it loads): %d bytes\n\n", sz.Total)
		fmt.Println("| file | brotli |")
		fmt.Println("| --- | ---: |")
		var names []string
		for n := range sz.Files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Printf("| %s | %d B |\n", n, sz.Files[n])
		}
	}
	report.LoadAverage = load()
	fmt.Printf("\nload average at the end: %s\n", report.LoadAverage)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(report, "", "  ")
	return os.WriteFile(out, b, 0o644)
}

// serveWidget serves the built widget from a relay on loopback that allows
// origin, and returns its /trickle/ URL.
func serveWidget(dir, origin string) (string, func(), error) {
	srv, err := relay.New(relay.WithWidget(os.DirFS(dir)), relay.WithAllowedOrigins(origin),
		relay.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/trickle/", func() { _ = srv.Shutdown(context.Background()); hs.Close() }, nil
}

func urlQueryEscape(s string) string {
	r := strings.NewReplacer("?", "%3F", "&", "%26", "=", "%3D")
	return r.Replace(s)
}

func file(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, path)
	}
}

// pageResult is what bench.js leaves in window.bench.
type pageResult struct {
	Done        bool      `json:"done"`
	Error       string    `json:"error"`
	Status      string    `json:"status"`
	TextLength  int       `json:"textLength"`
	DurationMs  float64   `json:"durationMs"`
	Frames      int       `json:"frames"`
	FPS         float64   `json:"fps"`
	MaxFrameGap float64   `json:"maxFrameGapMs"`
	LongTasks   int       `json:"longTasksAfterLoad"`
	Mutations   int       `json:"mutations"`
	Nodes       int       `json:"nodesTouched"`
	Changed     int       `json:"changedFrames"`
	Thread      string    `json:"thread"`
	Answers     int       `json:"answers"`
	EndsMs      []float64 `json:"endsMs"`
	// LastChangeAt is when the answer's text last changed (page clock,
	// epoch ms); Clock is the server's clock against the page's.
	LastChangeAt float64      `json:"lastChangeAt"`
	Clock        *clockSample `json:"clock"`
	Code         *string      `json:"code"`
	Own          *struct {
		Frames       int     `json:"frames"`
		FrameMaxMs   float64 `json:"frameMaxMs"`
		FrameTotalMs float64 `json:"frameTotalMs"`
	} `json:"own"`
}

// measure opens url in a new tab of browser while tracing, waits for the
// page to finish, and reads the page's own figures and the trace's. With a
// profile path it also saves the trace (profile + ".trace.json") and a V8
// CPU profile of the tab (profile + ".cpuprofile").
func measure(browser context.Context, url, profile string) (Result, error) {
	res, _, err := measureWith(browser, url, measureOpts{profile: profile})
	return res, err
}

// measureOpts are measureWith's options.
type measureOpts struct {
	profile    string
	startMark  string // the trace is summed between these marks
	endMark    string // (default bench-start, bench-end)
	clearCache bool   // empty the HTTP cache (and with it V8's code cache) first
	prime      string // open this URL first, untraced (to fill the cache)
}

// measureWith is measure with options; it also returns window.bench as
// the page left it (JSON), for figures only that page knows.
func measureWith(browser context.Context, url string, o measureOpts) (Result, string, error) {
	profile := o.profile
	if o.startMark == "" {
		o.startMark, o.endMark = "bench-start", "bench-end"
	}
	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
		return Result{}, "", err
	}
	if o.prime != "" {
		if err := waitDone(tab, o.prime, 5*time.Minute); err != nil {
			return Result{}, "", fmt.Errorf("priming with %s: %w", o.prime, err)
		}
	}
	if o.clearCache {
		if _, err := chromedp.Call(tab, network.ClearBrowserCache, cdp.Empty{}); err != nil {
			return Result{}, "", fmt.Errorf("clearing the cache: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(tab, 15*time.Minute)
	defer cancel()

	// Tracing is a browser-wide domain; the marks the page makes tell its
	// renderer's main thread apart from everything else in the trace.
	var mu sync.Mutex
	var events []traceEvent
	var raw []json.RawMessage // the whole events, kept only to be saved
	complete := make(chan struct{})
	err := chromedp.ListenBrowser(ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			for _, v := range e.Value {
				var te traceEvent
				if json.Unmarshal([]byte(v), &te) == nil {
					events = append(events, te)
					if profile != "" {
						raw = append(raw, json.RawMessage(v))
					}
				}
			}
			mu.Unlock()
		case *tracing.EventTracingComplete:
			close(complete)
		}
	})
	if err != nil {
		return Result{}, "", err
	}
	categories := []string{"toplevel", "blink.user_timing", "devtools.timeline"}
	if profile != "" {
		// The script stack of each forced style recalculation and layout.
		categories = append(categories, "disabled-by-default-devtools.timeline.stack")
		// What a task's timeline events leave uncovered: V8's and
		// Blink's collections, and what V8 ran.
		categories = append(categories, "v8", "v8.execute", "disabled-by-default-v8.gc", "blink_gc")
	}
	_, err = chromedp.CallBrowser(ctx, tracing.Start, tracing.StartParams{
		TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig:  &tracing.TraceConfig{IncludedCategories: categories},
	})
	if err != nil {
		return Result{}, "", fmt.Errorf("starting the trace: %w", err)
	}
	if profile != "" {
		if _, err := chromedp.Call(ctx, profiler.Enable, cdp.Empty{}); err != nil {
			return Result{}, "", fmt.Errorf("enabling the profiler: %w", err)
		}
		if _, err := chromedp.Call(ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200}); err != nil {
			return Result{}, "", err
		}
		if _, err := chromedp.Call(ctx, profiler.Start, cdp.Empty{}); err != nil {
			return Result{}, "", fmt.Errorf("starting the profiler: %w", err)
		}
	}
	lastToken.reset()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return Result{}, "", err
	}
	var page pageResult
	var pageRaw string
	for {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.bench ?? {})`))
		if err != nil {
			return Result{}, "", err
		}
		if err := json.Unmarshal([]byte(raw), &page); err != nil {
			return Result{}, "", err
		}
		if page.Done {
			pageRaw = raw
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	var prof *profiler.Profile
	if profile != "" {
		stopped, err := chromedp.Call(ctx, profiler.Stop, cdp.Empty{})
		if err != nil {
			return Result{}, "", fmt.Errorf("stopping the profiler: %w", err)
		}
		prof = stopped.Profile
		if err := writeProfile(prof, profile+".cpuprofile"); err != nil {
			return Result{}, "", err
		}
	}
	if _, err := chromedp.CallBrowser(ctx, tracing.End, cdp.Empty{}); err != nil {
		return Result{}, "", fmt.Errorf("ending the trace: %w", err)
	}
	select {
	case <-complete:
	case <-ctx.Done():
		return Result{}, "", ctx.Err()
	}
	if page.Error != "" {
		return Result{}, "", errors.New(page.Error)
	}
	res := Result{
		Status: page.Status, Chars: page.TextLength, Duration: page.DurationMs,
		FPS: page.FPS, MaxFrameGap: page.MaxFrameGap, LongTasks: page.LongTasks, Thread: page.Thread,
		Mutations: page.Mutations, NodesTouched: page.Nodes, Frames: page.Frames, ChangedFrames: page.Changed,
	}
	res.Answers = page.Answers
	res.code = page.Code
	if len(page.EndsMs) > 0 {
		ends := append([]float64(nil), page.EndsMs...)
		sort.Float64s(ends)
		res.FirstEnd, res.LastEnd = ends[0], ends[len(ends)-1]
	}
	if sent := lastToken.get(); sent > 0 && page.LastChangeAt > 0 && page.Clock != nil {
		lag := page.LastChangeAt + page.Clock.Offset - sent
		res.EndAfterLastToken = &lag
	}
	if page.Own != nil {
		res.Own = &ownFrames{Frames: page.Own.Frames, FrameMaxMs: page.Own.FrameMaxMs, TotalMs: page.Own.FrameTotalMs}
	}
	mu.Lock()
	defer mu.Unlock()
	if err := fromTraceBetween(events, o.startMark, o.endMark, &res); err != nil {
		return Result{}, "", err
	}
	if res.ChangedFrames > 0 {
		res.LayoutsPerChange = float64(res.Layouts) / float64(res.ChangedFrames)
		res.RecalcsPerChange = float64(res.StyleRecalcs) / float64(res.ChangedFrames)
		res.ScriptPerChangeMs = res.Script / float64(res.ChangedFrames)
	}
	res.Profile, res.ProfileMs = profileSummary(prof, res.startTs, res.endTs)
	if profile != "" {
		b, err := json.Marshal(map[string]any{"traceEvents": raw})
		if err != nil {
			return Result{}, "", err
		}
		if err := os.WriteFile(profile+".trace.json", b, 0o644); err != nil {
			return Result{}, "", fmt.Errorf("writing the trace: %w", err)
		}
	}
	return res, pageRaw, nil
}

// waitDone opens url on tab and waits until the page sets window.bench.done.
func waitDone(tab context.Context, url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(tab, limit)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return err
	}
	for {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.bench ?? {})`))
		if err != nil {
			return err
		}
		var page pageResult
		if err := json.Unmarshal([]byte(raw), &page); err != nil {
			return err
		}
		if page.Error != "" {
			return errors.New(page.Error)
		}
		if page.Done {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type traceEvent struct {
	Name string  `json:"name"`
	Cat  string  `json:"cat"`
	Ph   string  `json:"ph"`
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
	Ts   float64 `json:"ts"`
	Dur  float64 `json:"dur"`
	// Tdur is the thread's own CPU time in the event (Dur is wall time: on
	// a loaded machine a task's Dur also holds the time its thread waited
	// for a core).
	Tdur float64 `json:"tdur"`
	// Args of a task (RunTask) say where in Chromium it was posted from.
	Args struct {
		SrcFile string `json:"src_file"`
		SrcFunc string `json:"src_func"`
	} `json:"args"`
}

// poster names what posted a task: Chromium's source file and function
// (e.g. "html_link_element.cc:ScheduleEvent"), or the task's own name.
func (e traceEvent) poster() string {
	if e.Args.SrcFunc == "" {
		return e.Name
	}
	return e.Args.SrcFile[strings.LastIndexByte(e.Args.SrcFile, '/')+1:] + ":" + e.Args.SrcFunc
}

// fromTrace sums the top-level tasks of the thread that made the page's
// bench-start and bench-end marks, between the two.
func fromTrace(events []traceEvent, res *Result) error {
	return fromTraceBetween(events, "bench-start", "bench-end", res)
}

// fromTraceBetween is fromTrace between the marks named startMark and
// endMark.
func fromTraceBetween(events []traceEvent, startMark, endMark string, res *Result) error {
	var start, end *traceEvent
	var longest traceEvent
	for i := range events {
		e := &events[i]
		if !strings.Contains(e.Cat, "blink.user_timing") {
			continue
		}
		switch e.Name {
		case startMark:
			start = e
		case endMark:
			end = e
		}
	}
	if start == nil || end == nil {
		return fmt.Errorf("trace has no %s/%s marks (%d events)", startMark, endMark, len(events))
	}
	res.startTs, res.endTs = start.Ts, end.Ts
	tasks := mainTasks(events, start, end)
	res.Breakdown = breakdown(events, tasks, start)
	res.ByPoster = byPoster(tasks)
	var layoutFifths, paintFifths [5]float64
	fifth := func(ts float64) int { return min(4, max(0, int(5*(ts-start.Ts)/(end.Ts-start.Ts)))) }
	for _, e := range events {
		if e.Pid == start.Pid && e.Tid == start.Tid && e.Ph == "X" && e.Ts+e.Dur >= start.Ts && e.Ts <= end.Ts && strings.Contains(e.Cat, "devtools.timeline") {
			switch e.Name {
			case "UpdateLayoutTree", "Layout":
				res.StyleLayout += e.Dur / 1000
				layoutFifths[fifth(e.Ts)] += e.Dur
			case "Paint", "PrePaint", "Layerize", "UpdateLayer", "CompositeLayers":
				res.Paint += e.Dur / 1000
				paintFifths[fifth(e.Ts)] += e.Dur
			}
		}
	}
	if layoutFifths[0] > 0 {
		res.LayoutGrowth = layoutFifths[4] / layoutFifths[0]
	}
	if paintFifths[0] > 0 {
		res.PaintGrowth = paintFifths[4] / paintFifths[0]
	}
	countWork(events, start, end, res)
	for _, t := range tasks {
		ms := t.Dur / 1000
		res.MainThread += ms
		res.Tasks++
		if ms > res.LongestTask {
			res.LongestTask = ms
			res.LongestTaskAt = (t.Ts - start.Ts) / 1000
			longest = t
		}
		if ms > 4 {
			res.TasksOver4ms++
		}
		if ms > 16 {
			res.TasksOver16ms++
		}
		if ms > 50 {
			res.LongTasksOver50++
		}
		cpu := t.Tdur / 1000
		res.taskTimes = append(res.taskTimes, longTask{AtMs: (t.Ts - start.Ts) / 1000, Ms: ms, CPUMs: cpu})
		res.LongestTaskCPU = max(res.LongestTaskCPU, cpu)
		if cpu > 50 {
			res.TasksOver50CPU++
		}
		if ms > 50 || cpu > 50 {
			res.Long = append(res.Long, longTask{AtMs: (t.Ts - start.Ts) / 1000, Ms: ms, CPUMs: cpu, Parts: outermost(events, t)})
		}
	}
	if res.Tasks == 0 {
		return errors.New("trace has no main-thread tasks between the marks")
	}
	// The heaviest direct work inside the longest task, by event name.
	parts := map[string]float64{}
	for _, e := range events {
		if e.Pid == start.Pid && e.Tid == start.Tid && e.Ph == "X" && e.Ts >= longest.Ts && e.Ts+e.Dur <= longest.Ts+longest.Dur {
			switch {
			case e.Name == microtasks:
				parts["microtask checkpoint"] += e.Dur / 1000
			case strings.Contains(e.Cat, "devtools.timeline") && !strings.HasSuffix(e.Name, "RunTask"):
				parts[e.Name] += e.Dur / 1000
			}
		}
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return parts[names[i]] > parts[names[j]] })
	var b strings.Builder
	for i, n := range names {
		if i == 4 {
			break
		}
		fmt.Fprintf(&b, "%s %.1f ms; ", n, parts[n])
	}
	res.LongestTaskParts = strings.TrimSuffix(b.String(), "; ")
	return nil
}

// outermost names the heaviest outermost timeline events of task t (on
// its thread), with their wall and CPU time: "Layout 30/8 ms; Paint 12/2
// ms" says the thread waited for a core in most of that Layout.
func outermost(events []traceEvent, t traceEvent) string {
	var in []traceEvent
	for _, e := range events {
		if e.Pid == t.Pid && e.Tid == t.Tid && e.Ph == "X" && e.Ts >= t.Ts && e.Ts+e.Dur <= t.Ts+t.Dur &&
			(strings.Contains(e.Cat, "devtools.timeline") && !strings.HasSuffix(e.Name, "RunTask") || e.Name == microtasks) {
			in = append(in, e)
		}
	}
	sort.Slice(in, func(i, j int) bool {
		if in[i].Ts != in[j].Ts {
			return in[i].Ts < in[j].Ts
		}
		return in[i].Dur > in[j].Dur
	})
	var top []traceEvent
	end := 0.0
	for _, e := range in {
		if e.Ts < end {
			continue
		}
		top = append(top, e)
		end = e.Ts + e.Dur
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].Dur > top[j].Dur })
	var b strings.Builder
	for i, e := range top {
		if i == 4 {
			break
		}
		name := e.Name
		if name == microtasks {
			name = "microtask checkpoint"
		}
		fmt.Fprintf(&b, "%s %.0f/%.0f ms; ", name, e.Dur/1000, e.Tdur/1000)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// medians folds repeated runs of one renderer on one answer into one row:
// the median of each figure (runs on a shared machine are noisy; the
// median keeps one unlucky run from deciding).
func medians(results []Result) []Result {
	var order []string
	groups := map[string][]Result{}
	for _, r := range results {
		k := r.Sample + "/" + r.Renderer
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	med := func(rs []Result, f func(Result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	var out []Result
	for _, k := range order {
		rs := groups[k]
		m := rs[0]
		m.MainThread = med(rs, func(r Result) float64 { return r.MainThread })
		m.LongestTask = med(rs, func(r Result) float64 { return r.LongestTask })
		m.TasksOver4ms = int(med(rs, func(r Result) float64 { return float64(r.TasksOver4ms) }))
		m.LongTasks = int(med(rs, func(r Result) float64 { return float64(r.LongTasks) }))
		m.FPS = med(rs, func(r Result) float64 { return r.FPS })
		m.StyleLayout = med(rs, func(r Result) float64 { return r.StyleLayout })
		m.Paint = med(rs, func(r Result) float64 { return r.Paint })
		m.MaxFrameGap = med(rs, func(r Result) float64 { return r.MaxFrameGap })
		m.Script = med(rs, func(r Result) float64 { return r.Script })
		m.LayoutGrowth = med(rs, func(r Result) float64 { return r.LayoutGrowth })
		m.PaintGrowth = med(rs, func(r Result) float64 { return r.PaintGrowth })
		m.StyleRecalcs = int(med(rs, func(r Result) float64 { return float64(r.StyleRecalcs) }))
		m.Layouts = int(med(rs, func(r Result) float64 { return float64(r.Layouts) }))
		m.ForcedStyle = int(med(rs, func(r Result) float64 { return float64(r.ForcedStyle) }))
		m.ForcedLayouts = int(med(rs, func(r Result) float64 { return float64(r.ForcedLayouts) }))
		m.Mutations = int(med(rs, func(r Result) float64 { return float64(r.Mutations) }))
		m.NodesTouched = int(med(rs, func(r Result) float64 { return float64(r.NodesTouched) }))
		m.Frames = int(med(rs, func(r Result) float64 { return float64(r.Frames) }))
		m.ChangedFrames = int(med(rs, func(r Result) float64 { return float64(r.ChangedFrames) }))
		m.LayoutsPerChange = med(rs, func(r Result) float64 { return r.LayoutsPerChange })
		m.RecalcsPerChange = med(rs, func(r Result) float64 { return r.RecalcsPerChange })
		m.ScriptPerChangeMs = med(rs, func(r Result) float64 { return r.ScriptPerChangeMs })
		var lags []Result
		for _, r := range rs {
			if r.EndAfterLastToken != nil {
				lags = append(lags, r)
			}
		}
		if len(lags) > 0 {
			lag := med(lags, func(r Result) float64 { return *r.EndAfterLastToken })
			m.EndAfterLastToken = &lag
		}
		for _, r := range rs {
			if r.CodeCheck != "ok" {
				m.CodeCheck = r.CodeCheck // a failed run shows
				break
			}
		}
		out = append(out, m)
	}
	return out
}

func printTable(results []Result) {
	fmt.Println()
	fmt.Println("| answer | renderer | main-thread time | vs trickle | of which style+layout | paint | longest task | tasks > 4 ms | long tasks | fps | longest frame gap | final text after the last token |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	base := map[string]float64{}
	for _, r := range results {
		if r.Renderer == "trickle" {
			base[r.Sample] = r.MainThread
		}
	}
	for _, r := range results {
		ratio := "–"
		if b := base[r.Sample]; b > 0 {
			ratio = strconv.FormatFloat(r.MainThread/b, 'f', 1, 64) + "×"
		}
		lag := "–"
		if r.EndAfterLastToken != nil {
			lag = strconv.FormatFloat(*r.EndAfterLastToken, 'f', 0, 64) + " ms"
		}
		fmt.Printf("| %s | %s | %.0f ms | %s | %.0f ms | %.0f ms | %.1f ms | %d | %d | %.0f | %.0f ms | %s |\n",
			r.Sample, r.Renderer, r.MainThread, ratio, r.StyleLayout, r.Paint, r.LongestTask, r.TasksOver4ms, r.LongTasks, r.FPS, r.MaxFrameGap, lag)
	}
}

// microtasks is the trace event of a microtask checkpoint. Chrome records
// the one after a task (promise reactions: a fetch body's read().then, an
// await) next to the task's RunTask event, not inside it.
const microtasks = "BlinkScheduler_PerformMicrotaskCheckpoint"

// mainTasks lists the page thread's tasks between the marks, outermost
// only, each with the microtask checkpoint that follows it folded in: to
// the page, and to the longtask API, that is one task (HTML's "run a task,
// then perform a microtask checkpoint").
func mainTasks(events []traceEvent, start, end *traceEvent) []traceEvent {
	var evs []traceEvent
	for _, e := range events {
		isTask := (e.Name == "RunTask" || e.Name == "ThreadControllerImpl::RunTask" || e.Name == microtasks) && strings.Contains(e.Cat, "toplevel")
		if isTask && e.Pid == start.Pid && e.Tid == start.Tid && e.Ph == "X" && e.Ts+e.Dur >= start.Ts && e.Ts <= end.Ts {
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Ts != evs[j].Ts {
			return evs[i].Ts < evs[j].Ts
		}
		return evs[i].Dur > evs[j].Dur
	})
	var tasks []traceEvent
	for _, e := range evs {
		n := len(tasks)
		if n > 0 && e.Ts < tasks[n-1].Ts+tasks[n-1].Dur {
			continue // inside the previous task (a nested run loop, or its own checkpoint)
		}
		// A checkpoint starting within 0.1 ms of a task's end is that
		// task's.
		if e.Name == microtasks && n > 0 && tasks[n-1].Name != microtasks && e.Ts-(tasks[n-1].Ts+tasks[n-1].Dur) <= 100 {
			tasks[n-1].Dur = e.Ts + e.Dur - tasks[n-1].Ts
			tasks[n-1].Tdur += e.Tdur
			continue
		}
		tasks = append(tasks, e)
	}
	return tasks
}

// byPoster sums the tasks' time by what posted them, largest first.
func byPoster(tasks []traceEvent) []selfTime {
	sums := map[string]float64{}
	for _, t := range tasks {
		sums[t.poster()] += t.Dur / 1000
	}
	var out []selfTime
	for n, ms := range sums {
		out = append(out, selfTime{n, ms})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ms > out[j].Ms })
	return out
}

// breakdown sums, over tasks (from mainTasks), the time of each task's
// outermost timeline events by name, its microtask checkpoint as
// "microtask checkpoint", and what none of them covers as
// "(rest of task)". Events of one thread nest, so sorting by start (longer
// first on ties) and skipping what starts inside the last counted event
// finds the outermost ones.
func breakdown(events, tasks []traceEvent, start *traceEvent) []selfTime {
	var evs []traceEvent
	for _, e := range events {
		if e.Pid == start.Pid && e.Tid == start.Tid && e.Ph == "X" && (strings.Contains(e.Cat, "devtools.timeline") || e.Name == microtasks) {
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Ts != evs[j].Ts {
			return evs[i].Ts < evs[j].Ts
		}
		return evs[i].Dur > evs[j].Dur
	})
	sums := map[string]float64{}
	i := 0
	for _, t := range tasks {
		covered, stackEnd := 0.0, 0.0
		for ; i < len(evs) && evs[i].Ts < t.Ts; i++ {
		}
		for ; i < len(evs) && evs[i].Ts < t.Ts+t.Dur; i++ {
			e := evs[i]
			if e.Ts < stackEnd {
				continue
			}
			name := e.Name
			if name == microtasks {
				name = "microtask checkpoint"
			}
			sums[name] += e.Dur / 1000
			covered += e.Dur
			stackEnd = e.Ts + e.Dur
		}
		sums["(rest of task)"] += (t.Dur - covered) / 1000
	}
	var out []selfTime
	for n, ms := range sums {
		out = append(out, selfTime{n, ms})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ms > out[j].Ms })
	return out
}

// countWork counts, on the marks' thread between them, the style
// recalculations and layouts, those forced by script, and the script time
// (browsertest.CountWork: the Chromium test that no frame forces a layout
// counts the same way).
func countWork(events []traceEvent, start, end *traceEvent, res *Result) {
	evs := make([]browsertest.TraceEvent, len(events))
	for i, e := range events {
		evs[i] = browsertest.TraceEvent{Name: e.Name, Cat: e.Cat, Ph: e.Ph, Pid: e.Pid, Tid: e.Tid, Ts: e.Ts, Dur: e.Dur}
	}
	w, err := browsertest.CountWork(evs, start.Name, end.Name)
	if err != nil {
		return // fromTraceBetween found the marks: not reached
	}
	res.StyleRecalcs, res.Layouts, res.ForcedStyle, res.ForcedLayouts, res.Script = w.StyleRecalcs, w.Layouts, w.ForcedStyle, w.ForcedLayouts, w.ScriptMs
}

// repeatAnswer is answer n times over, each pass's headings renamed (" ·
// part k" after each ATX heading outside code fences), so that the passes
// do not repeat one another's headings and their ids.
func repeatAnswer(answer string, n int) string {
	if n == 1 {
		return answer
	}
	var b strings.Builder
	for k := 1; k <= n; k++ {
		fence := ""
		for _, line := range strings.SplitAfter(answer, "\n") {
			body := strings.TrimRight(line, "\n")
			trimmed := strings.TrimLeft(body, " ")
			switch {
			case fence != "":
				if strings.HasPrefix(trimmed, fence) {
					fence = ""
				}
			case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
				fence = trimmed[:3]
			case len(body)-len(trimmed) < 4 && strings.HasPrefix(trimmed, "#"):
				if h := strings.TrimLeft(trimmed, "#"); len(trimmed)-len(h) <= 6 && (h == "" || h[0] == ' ') {
					line = body + fmt.Sprintf(" · part %d", k) + line[len(body):]
				}
			}
			b.WriteString(line)
		}
		if !strings.HasSuffix(answer, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
