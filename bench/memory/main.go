// Command memory is Trickle's memory benchmark: how many bytes the page
// and the widget's Web Worker hold after answers, beside
// streaming-markdown, in headless Chromium.
//
// The page is served cross-origin isolated (Cross-Origin-Opener-Policy
// same-origin, Cross-Origin-Embedder-Policy require-corp, and
// Cross-Origin-Resource-Policy on every file: the page, the widget's
// script, worker and .wasm, the peer), so that it can call
// performance.measureUserAgentSpecificMemory(); Chromium runs with
// --enable-blink-features=ForceEagerMeasureMemory, which answers that call
// at once instead of at the browser's next convenient garbage collection
// (up to 20 s later). Its breakdown is summed by attribution: Window (the
// page) and DedicatedWorkerGlobalScope (the widget's worker).
//
// Scenarios, each on a fresh tab:
//   - one: a 100 KB answer (sample-100k.md) streamed;
//   - ten: ten 20 KB answers (sample-20k.md), one after another on one page;
//   - thread: a <trickle-chat> restored from -turns user and assistant
//     turns (about 2.5 KB of markdown each, cut from sample-100k.md), no
//     request — the widget only: streaming-markdown has no thread.
//
// After the scenario the page is left idle (-settle) before it is
// measured; the widget's stats() (Go's heap in use, the bytes Go took from
// its WebAssembly memory, its collections) are read before the first
// answer, when the last ended and after the idle wait. The renderers
// alternate, -runs times, in one Chromium; the table shows medians.
//
//	bench/memory/run.sh              3 runs, 4-character tokens at 2,000 tok/s
//	bench/memory/run.sh -runs 5
//
// Results: a table on stdout, bench/results/memory.json.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"

	"github.com/trickle-dev/trickle/bench/internal/paced"
)

func main() {
	var (
		renderers = flag.String("renderers", "trickle,smd", "renderers, alternating in this order")
		scenarios = flag.String("scenarios", "one,ten,thread", "scenarios: one (a 100 KB answer), ten (ten 20 KB answers one after another), thread (a restored <trickle-chat>, the widget only)")
		runs      = flag.Int("runs", 3, "runs of each renderer on each scenario")
		rate      = flag.Float64("rate", 2000, "tokens per second of the streamed answers")
		chars     = flag.Int("chars", 4, "characters per token")
		turns     = flag.Int("turns", 200, "assistant turns of the restored thread (each after a short user turn)")
		settle    = flag.Int("settle", 3000, "ms the page is left idle after the scenario, before it is measured")
		gap       = flag.Int("gap", 0, "ms between the ten answers of the ten scenario (0: back to back, so no idle time between them)")
		widget    = flag.String("widget", "assets/widget", "the built widget (make build)")
		out       = flag.String("out", "bench/results/memory.json", "where to write the results as JSON")
		table     = flag.String("table", "", "instead: print the table of this results file")
	)
	flag.Parse()
	if *table != "" {
		var results []Result
		b, err := os.ReadFile(*table)
		if err == nil {
			err = json.Unmarshal(b, &results)
		}
		if err != nil {
			log.Fatalf("bench/memory: %v", err)
		}
		printTable(results, strings.Split(*renderers, ","), strings.Split(*scenarios, ","))
		return
	}
	if err := run(strings.Split(*renderers, ","), strings.Split(*scenarios, ","), *runs, *rate, *chars, *turns, *settle, *gap, *widget, *out); err != nil {
		log.Fatalf("bench/memory: %v", err)
	}
}

// Result is one renderer on one scenario, one run.
type Result struct {
	Renderer string `json:"renderer"`
	Scenario string `json:"scenario"`
	Chars    int    `json:"chars"`
	// Total is measureUserAgentSpecificMemory's bytes; Page and Worker
	// its breakdown attributed to the Window and to the dedicated worker;
	// Other the rest (shared, or not attributed).
	Total  int64 `json:"total"`
	Page   int64 `json:"page"`
	Worker int64 `json:"worker"`
	Other  int64 `json:"other"`
	// ByType is the same bytes by type (JavaScript, DOM, Canvas, Shared).
	ByType map[string]int64 `json:"by_type"`
	// JSHeapUsed is the page's performance.memory.usedJSHeapSize (the
	// page's V8 heap only, not the worker's).
	JSHeapUsed int64 `json:"js_heap_used"`
	Nodes      int   `json:"nodes"`
	// The widget's Go, from stats(): before the first answer, when the
	// last one ended, and after the idle wait.
	Go *goStats `json:"go,omitempty"`
}

type statsAt struct {
	HeapInuse int64 `json:"heapInuse"`
	GoSys     int64 `json:"goSys"`
	Wasm      int64 `json:"wasmMemory"`
	NumGC     int   `json:"numGC"`
}

type goStats struct {
	Base  statsAt `json:"base"`
	Ended statsAt `json:"ended"`
	Idle  statsAt `json:"idle"`
}

type pageResult struct {
	Done   bool   `json:"done"`
	Error  string `json:"error"`
	Chars  int    `json:"chars"`
	Memory struct {
		Total   int64            `json:"total"`
		ByScope map[string]int64 `json:"byScope"`
		ByType  map[string]int64 `json:"byType"`
	} `json:"memory"`
	JSHeapUsed int64    `json:"jsHeapUsed"`
	Nodes      int      `json:"nodes"`
	Stats      *goStats `json:"stats"`
}

func run(renderers, scenarios []string, runs int, rate float64, chars, turns, settle, gap int, widget, out string) error {
	if _, err := os.Stat(filepath.Join(widget, "trickle.js")); err != nil {
		return fmt.Errorf("widget not built in %s (run make build): %w", widget, err)
	}
	answers := map[string]string{}
	for _, n := range []string{"sample-20k", "sample-100k"} {
		b, err := os.ReadFile("relay/sim/answers/" + n + ".md")
		if err != nil {
			return err
		}
		answers[n] = string(b)
	}
	thread, err := json.Marshal(threadOf(answers["sample-100k"], turns))
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle("/page/", http.StripPrefix("/page/", http.FileServer(http.Dir("bench/memory/page"))))
	paced.Shared(mux)
	mux.Handle("/trickle/", http.StripPrefix("/trickle/", http.FileServer(http.Dir(widget))))
	mux.HandleFunc("/peers/smd.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, "bench/browser/node_modules/streaming-markdown/smd.js")
	})
	mux.HandleFunc("/thread.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(thread)
	})
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		answer, ok := answers[r.URL.Query().Get("sample")]
		if !ok {
			http.Error(w, "unknown sample", http.StatusNotFound)
			return
		}
		paced.Serve(w, r, paced.Tokens(answer, chars), rate, nil)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: isolated(mux)}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	exe, err := browsertest.Find()
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "trickle-memory-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	browser, cancel := browsertest.Launch(context.Background(), exe, profile,
		browsertest.WithFlag("enable-blink-features", "ForceEagerMeasureMemory"),
		browsertest.WithFlag("enable-precise-memory-info", true))
	defer cancel()
	if err := chromedp.Do(browser); err != nil {
		return fmt.Errorf("starting chromium: %w", err)
	}

	sampleOf := map[string]string{"one": "sample-100k", "ten": "sample-20k", "thread": ""}
	var results []Result
	for rep := 0; rep < runs; rep++ {
		for _, sc := range scenarios {
			// Each renderer goes first in turn.
			order := append(renderers[rep%len(renderers):len(renderers):len(renderers)], renderers[:rep%len(renderers)]...)
			for _, r := range order {
				if sc == "thread" && r != "trickle" {
					continue
				}
				u := fmt.Sprintf("%s/page/?renderer=%s&scenario=%s&sample=%s&settle=%d&gap=%d", base, r, sc, sampleOf[sc], settle, gap)
				p, err := measure(browser, u)
				if err != nil {
					return fmt.Errorf("%s on %s: %w", r, sc, err)
				}
				res := Result{Renderer: r, Scenario: sc, Chars: p.Chars, Total: p.Memory.Total, ByType: p.Memory.ByType, JSHeapUsed: p.JSHeapUsed, Nodes: p.Nodes, Go: p.Stats}
				for scope, b := range p.Memory.ByScope {
					switch scope {
					case "Window":
						res.Page += b
					case "DedicatedWorkerGlobalScope":
						res.Worker += b
					default:
						res.Other += b
					}
				}
				line := fmt.Sprintf("run %d %-7s %-6s total %s (page %s, worker %s, other %s), page JS heap %s, %d nodes, types %v",
					rep+1, sc, r, mb(res.Total), mb(res.Page), mb(res.Worker), mb(res.Other), mb(res.JSHeapUsed), res.Nodes, res.ByType)
				if g := res.Go; g != nil {
					line += fmt.Sprintf("; Go heap in use %s → %s ended → %s idle (Go took %s → %s → %s; its WebAssembly memory %s → %s → %s; collections %d → %d → %d)",
						mb(g.Base.HeapInuse), mb(g.Ended.HeapInuse), mb(g.Idle.HeapInuse), mb(g.Base.GoSys), mb(g.Ended.GoSys), mb(g.Idle.GoSys), mb(g.Base.Wasm), mb(g.Ended.Wasm), mb(g.Idle.Wasm), g.Base.NumGC, g.Ended.NumGC, g.Idle.NumGC)
				}
				log.Print(line)
				results = append(results, res)
			}
		}
	}
	printTable(results, renderers, scenarios)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(results, "", "  ")
	return os.WriteFile(out, b, 0o644)
}

// isolated makes every response cross-origin isolated: the page can then
// measure its memory, and every file it loads says it may be loaded so.
func isolated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
		w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// threadOf cuts answer into assistant turns of about 2.5 KB (at blank
// lines outside code fences, going round the answer as often as needed),
// each after a short user turn.
func threadOf(answer string, turns int) []map[string]string {
	paras := strings.Split(answer, "\n\n")
	var msgs []map[string]string
	var cur strings.Builder
	fence := false
	for i := 0; len(msgs) < 2*turns; i++ {
		p := paras[i%len(paras)]
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
		}
		cur.WriteString(p)
		if strings.Count(p, "```")%2 == 1 {
			fence = !fence
		}
		if !fence && cur.Len() >= 2500 {
			msgs = append(msgs,
				map[string]string{"role": "user", "content": fmt.Sprintf("Question %d: tell me more.", len(msgs)/2+1)},
				map[string]string{"role": "assistant", "content": cur.String()})
			cur.Reset()
		}
	}
	return msgs
}

func measure(browser context.Context, url string) (pageResult, error) {
	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	ctx, cancel := context.WithTimeout(tab, 10*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return pageResult{}, err
	}
	for {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.bench ?? {})`))
		if err != nil {
			return pageResult{}, err
		}
		var p pageResult
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			return pageResult{}, err
		}
		if p.Error != "" {
			return p, errors.New(p.Error)
		}
		if p.Done {
			return p, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable prints the medians per scenario and renderer, and the
// widget's over streaming-markdown's.
func printTable(results []Result, renderers, scenarios []string) {
	fmt.Println("| scenario | renderer | runs | measured total | page | worker | other | page JS heap | Go's WebAssembly memory (never shrinks) | total with it | Go heap in use: ended → idle |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	med, medAll := map[[2]string]int64{}, map[[2]string]int64{}
	for _, sc := range scenarios {
		for _, r := range renderers {
			var total, page, worker, other, heap, ended, idle, sys, all []int64
			for _, x := range results {
				if x.Scenario != sc || x.Renderer != r {
					continue
				}
				total, page, worker, other, heap = append(total, x.Total), append(page, x.Page), append(worker, x.Worker), append(other, x.Other), append(heap, x.JSHeapUsed)
				wasm := int64(0)
				if x.Go != nil {
					wasm = x.Go.Idle.Wasm
					ended, idle, sys = append(ended, x.Go.Ended.HeapInuse), append(idle, x.Go.Idle.HeapInuse), append(sys, wasm)
				}
				all = append(all, x.Total+wasm)
			}
			if len(total) == 0 {
				continue
			}
			med[[2]string{sc, r}] = median(total)
			medAll[[2]string{sc, r}] = median(all)
			wasmCol, heapCol := "–", "–"
			if len(sys) > 0 {
				wasmCol, heapCol = mb(median(sys)), fmt.Sprintf("%s → %s", mb(median(ended)), mb(median(idle)))
			}
			fmt.Printf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", sc, r, len(total), mb(median(total)), mb(median(page)), mb(median(worker)), mb(median(other)), mb(median(heap)), wasmCol, mb(median(all)), heapCol)
		}
	}
	fmt.Println()
	for _, sc := range scenarios {
		t, s := med[[2]string{sc, "trickle"}], med[[2]string{sc, "smd"}]
		if t > 0 && s > 0 {
			fmt.Printf("%s: the widget over streaming-markdown, medians: %.2f× measured, %.2f× with Go's WebAssembly memory\n", sc, float64(t)/float64(s), float64(medAll[[2]string{sc, "trickle"}])/float64(s))
		}
	}
}
