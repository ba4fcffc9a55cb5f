package main

// The first visit (issue 20): navigation → the first answer token painted,
// on a page that asks at DOMContentLoaded, with the widget's files in the
// HTTP cache (a warm visit) or not (the first visit), on emulated networks.
// It also notes when trickle-first-token came, against that paint (issue
// 34: in the frame that paints it), and when Go's own first frame did;
// with -base, the base build's widget and the work tree's alternate.
// The page, the widget and the simulated model (its default pace: the
// first token 400 ms after the request) share the relay's origin, as on
// the relay's own answer page.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/trickle-dev/trickle/relay"
)

var (
	firstRuns     = flag.Int("first-runs", 3, "loads of the first-visit page per network and cache state")
	firstNetworks = flag.String("first-networks", "none,fast4g,slow4g", "emulated networks for -measure first (none, fast4g, slow4g)")
	firstThread   = flag.String("first-thread", "worker", `where the widget's Go side runs for -measure first: "worker" (the default boot) or "main" (worker="off")`)
)

// netProfile is an emulated network: Chrome's DevTools throttling, applied
// to every request of the tab (its workers' included).
type netProfile struct {
	Name      string  `json:"name"`
	LatencyMs float64 `json:"latency_ms"` // added to each request, before its response headers
	DownKbit  float64 `json:"down_kbit_s"`
	UpKbit    float64 `json:"up_kbit_s"`
}

// The networks of the table: DevTools' Fast 4G and Slow 4G.
var netProfiles = map[string]netProfile{
	"none":   {Name: "none"},
	"fast4g": {Name: "fast4g", LatencyMs: 40, DownKbit: 9000, UpKbit: 1500},
	"slow4g": {Name: "slow4g", LatencyMs: 150, DownKbit: 1600, UpKbit: 750},
}

// FirstVisit is one load of the first-visit page.
type FirstVisit struct {
	Network string `json:"network"`
	Cache   string `json:"cache"` // "warm" or "cold"
	Thread  string `json:"thread"`
	// Build is "head" (the work tree's widget) or, with -base, "base".
	Build string `json:"build"`
	// FirstPaint is navigation → the first frame that shows answer text
	// (ms, the page's performance.now()); Asked is navigation → ask().
	FirstPaint float64 `json:"first_paint_ms"`
	Asked      float64 `json:"asked_ms"`
	// Early says the first text painted was the early view's (painted
	// before Go's first frame of the answer).
	Early bool `json:"early"`
	// GoFirst is navigation → the first frame Go rendered for the answer.
	GoFirst float64 `json:"go_first_ms"`
	// FirstToken is navigation → trickle-first-token (dispatched), and
	// FirstTokens how many the answer had (one is right).
	FirstToken  float64 `json:"first_token_ms"`
	FirstTokens int     `json:"first_tokens"`
	Status      string  `json:"status"`
}

// firstHTML asks at DOMContentLoaded; the probe notes the first frame in
// which the answer's content shows text (a message posted at the mutation
// runs after that frame's rendering: the widget writes in
// requestAnimationFrame), and whether Go had rendered it yet
// (data-trickle-early on the content says the early view shows).
const firstHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>First visit</title>
<script type="module" src="/trickle/trickle.js"></script>
</head>
<body><main><h1>An answer</h1>
<trickle-answer id="a" endpoint="/v1/chat/completions?answer=short" announce="sentences" WORKER></trickle-answer></main>
<script>
(() => {
  const el = document.getElementById("a");
  const r = { done: false, firstPaint: 0, goFirst: 0, early: false, asked: 0, firstToken: 0, firstTokens: 0 };
  window.bench = r;
  el.addEventListener("trickle-first-token", () => {
    if (!r.firstToken) r.firstToken = performance.now();
    r.firstTokens++;
  });
  const ch = new MessageChannel();
  let pending = false;
  ch.port1.onmessage = () => {
    pending = false;
    const c = el.querySelector('[data-trickle="content"]');
    if (!c || !c.textContent) return;
    const now = performance.now();
    const early = c.hasAttribute("data-trickle-early");
    if (!r.firstPaint) { r.firstPaint = now; r.early = early; }
    if (!early && !r.goFirst) r.goFirst = now;
  };
  new MutationObserver(() => {
    if (!pending) { pending = true; ch.port2.postMessage(0); }
  }).observe(el, { childList: true, characterData: true, subtree: true, attributes: true });
  document.addEventListener("DOMContentLoaded", async () => {
    r.asked = performance.now();
    try {
      r.status = await el.ask("Explain how streaming answers reach the browser.");
      r.thread = el.metrics?.thread ?? "";
    } catch (err) {
      r.error = String(err?.stack ?? err);
    }
    r.done = true;
  });
})();
</script>
</body></html>
`

// serveFirst starts the relay with the widget and the first-visit page on
// one origin; it returns the page's URL.
func serveFirst(widget, thread string) (string, func(), error) {
	srv, err := relay.New(relay.WithWidget(os.DirFS(widget)), relay.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return "", nil, err
	}
	attr := ""
	if thread == "main" {
		attr = `worker="off"`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/first/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, strings.Replace(firstHTML, "WORKER", attr, 1))
	})
	mux.Handle("/", srv.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/first/", func() { _ = srv.Shutdown(context.Background()); hs.Close() }, nil
}

// emulateParams are Network.emulateNetworkConditions' (deprecated for
// emulateNetworkConditionsByRule, which Chromium 148 refuses a catch-all
// rule of; this one throttles every request of the tab, workers' too).
type emulateParams struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

var emulateNetworkConditions = cdp.Command[emulateParams, cdp.Empty]{Method: "Network.emulateNetworkConditions"}

// emulate applies a network profile to the tab (none: no throttling).
func emulate(tab context.Context, p netProfile) error {
	if _, err := chromedp.Call(tab, network.Enable, network.EnableParams{}); err != nil {
		return err
	}
	c := emulateParams{Latency: p.LatencyMs, DownloadThroughput: -1, UploadThroughput: -1}
	if p.DownKbit > 0 {
		c.DownloadThroughput = p.DownKbit * 1000 / 8
		c.UploadThroughput = p.UpKbit * 1000 / 8
	}
	_, err := chromedp.Call(tab, emulateNetworkConditions, c)
	return err
}

// emulateWorkers makes the tab's emulation reach its dedicated workers'
// requests (the widget's .wasm, its answer's fetch): Chromium throttles a
// worker's requests by the page's conditions only once the worker has a
// DevTools session with the Network domain enabled (a worker refuses
// emulateNetworkConditions itself: "Not supported"). Each new worker waits
// for the debugger until its session is set up, so that its first
// request is throttled too.
func emulateWorkers(tab context.Context) error {
	err := chromedp.Listen(tab, func(ev any) {
		a, ok := ev.(*target.EventAttachedToTarget)
		if !ok || a.TargetInfo.Type != "worker" {
			return
		}
		go func() {
			wctx, _ := chromedp.NewContext(tab, chromedp.WithTargetID(a.TargetInfo.TargetID))
			if _, err := chromedp.Call(wctx, network.Enable, network.EnableParams{}); err != nil {
				log.Printf("first visit: a worker's Network domain: %v", err)
			}
			if _, err := chromedp.Call(wctx, runtime.RunIfWaitingForDebugger, cdp.Empty{}); err != nil {
				log.Printf("first visit: starting a worker: %v", err)
			}
		}()
	})
	if err != nil {
		return err
	}
	_, err = chromedp.Call(tab, target.SetAutoAttach, target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: ptr(true)})
	return err
}

func ptr[T any](v T) *T { return &v }

// firstLoad loads the page once in a fresh tab on the network: warm after
// a first load that fills the HTTP cache, cold after clearing it.
func firstLoad(browser context.Context, url string, p netProfile, cache string) (FirstVisit, error) {
	tab, closeTab := chromedp.NewContext(browser)
	defer closeTab()
	ctx, cancel := context.WithTimeout(tab, 5*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		return FirstVisit{}, err
	}
	if _, err := chromedp.Call(ctx, network.ClearBrowserCache, cdp.Empty{}); err != nil {
		return FirstVisit{}, fmt.Errorf("clearing the cache: %w", err)
	}
	if err := emulate(ctx, p); err != nil {
		return FirstVisit{}, fmt.Errorf("emulating %s: %w", p.Name, err)
	}
	if err := emulateWorkers(ctx); err != nil {
		return FirstVisit{}, fmt.Errorf("emulating %s in workers: %w", p.Name, err)
	}
	if cache == "warm" {
		if err := waitDone(ctx, url, 4*time.Minute); err != nil {
			return FirstVisit{}, fmt.Errorf("the visit before: %w", err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			return FirstVisit{}, err
		}
	}
	if err := waitDone(ctx, url, 4*time.Minute); err != nil {
		return FirstVisit{}, err
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.bench)`))
	if err != nil {
		return FirstVisit{}, err
	}
	var r struct {
		FirstPaint, GoFirst, Asked, FirstToken float64
		FirstTokens                            int
		Early                                  bool
		Status, Thread, Error                  string
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return FirstVisit{}, err
	}
	if r.FirstPaint == 0 {
		return FirstVisit{}, fmt.Errorf("no answer text was painted (status %q)", r.Status)
	}
	return FirstVisit{Network: p.Name, Cache: cache, Thread: r.Thread, FirstPaint: r.FirstPaint, GoFirst: r.GoFirst, Asked: r.Asked, Early: r.Early,
		FirstToken: r.FirstToken, FirstTokens: r.FirstTokens, Status: r.Status}, nil
}

// runFirst measures every network, warm and cold interleaved, runs times;
// with -base, the base build's widget (on an origin of its own) and the
// work tree's alternate within each run.
func runFirst(browser context.Context, widget string) ([]FirstVisit, error) {
	type build struct{ name, url string }
	var builds []build
	dirs := [][2]string{{"head", widget}}
	if baseWidget != "" {
		dirs = [][2]string{{"base", baseWidget}, {"head", widget}}
	}
	for _, d := range dirs {
		url, stop, err := serveFirst(d[1], *firstThread)
		if err != nil {
			return nil, err
		}
		defer stop()
		builds = append(builds, build{d[0], url})
	}
	var out []FirstVisit
	for i := 0; i < *firstRuns; i++ {
		for _, name := range strings.Split(*firstNetworks, ",") {
			p, ok := netProfiles[strings.TrimSpace(name)]
			if !ok {
				return nil, fmt.Errorf("-first-networks: unknown network %q (none, fast4g, slow4g)", name)
			}
			for _, b := range builds {
				for _, cache := range []string{"warm", "cold"} {
					v, err := firstLoad(browser, b.url, p, cache)
					if err != nil {
						return nil, fmt.Errorf("first visit (%s, %s, %s): %w", b.name, p.Name, cache, err)
					}
					v.Build = b.name
					log.Printf("first visit %-4s %-6s %-4s run %d: first token painted %.0f ms after navigation (asked at %.0f ms, %s, Go's first frame at %.0f ms), trickle-first-token at %.0f ms (%d), %s, %s",
						b.name, p.Name, cache, i+1, v.FirstPaint, v.Asked, map[bool]string{true: "early view", false: "Go's frame"}[v.Early], v.GoFirst, v.FirstToken, v.FirstTokens, v.Status, v.Thread)
					out = append(out, v)
				}
			}
		}
	}
	return out, nil
}

func printFirst(vs []FirstVisit) {
	fmt.Println()
	fmt.Println("First visit: navigation → first answer text painted, ask() at DOMContentLoaded, the simulated model's default pace (medians; goal: the first visit adds ≤ 0.15 s on Fast 4G, ≤ 0.5 s on Slow 4G), and trickle-first-token against that paint (goal: within one frame; negative: dispatched in the frame, before it was painted)")
	fmt.Println()
	fmt.Println("| network | build | thread | runs | warm | cold (first visit) | what the first visit adds | first visit painted by | trickle-first-token, cold | its gap to the paint, cold (median, max) | warm (median) | events per answer | Go's first frame, cold |")
	fmt.Println("| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
	type key struct{ network, build string }
	var order []key
	seen := map[key]bool{}
	for _, v := range vs {
		k := key{v.Network, v.Build}
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	gap := func(v FirstVisit) float64 { return v.FirstToken - v.FirstPaint }
	for _, k := range order {
		var warm, cold []FirstVisit
		most := 0
		for _, v := range vs {
			if v.Network != k.network || v.Build != k.build {
				continue
			}
			most = max(most, v.FirstTokens)
			if v.Cache == "warm" {
				warm = append(warm, v)
			} else {
				cold = append(cold, v)
			}
		}
		w := medianOf(warm, func(v FirstVisit) float64 { return v.FirstPaint })
		c := medianOf(cold, func(v FirstVisit) float64 { return v.FirstPaint })
		early := 0
		for _, v := range cold {
			if v.Early {
				early++
			}
		}
		_, gapMax := minMax(cold, gap)
		fmt.Printf("| %s | %s | %s | %d | %.2f s | %.2f s | %+.2f s | the early view %d of %d | %.2f s | %+.0f ms, %+.0f ms | %+.0f ms | %d | %.2f s |\n", k.network, k.build, cold[0].Thread, len(cold), w/1000, c/1000, (c-w)/1000, early, len(cold),
			medianOf(cold, func(v FirstVisit) float64 { return v.FirstToken })/1000, medianOf(cold, gap), gapMax, medianOf(warm, gap), most,
			medianOf(cold, func(v FirstVisit) float64 { return v.GoFirst })/1000)
	}
}
