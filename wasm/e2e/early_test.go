//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

// gated is a relay (widget included, the test page at /e2e) on an origin of
// its own — so no test before has put its .wasm in the browser's cache —
// that holds every .wasm request until release: the page is a first visit
// whose wasm is still on its way. It counts the .wasm requests held and
// the chat requests the model got.
type gated struct {
	base      string
	release   func()
	wasmHeld  atomic.Int32
	chats     atomic.Int32
	releasing chan struct{}
	// wasmStatus, when set, is what a released .wasm request gets
	// instead of the .wasm (a widget that cannot load).
	wasmStatus atomic.Int32
	// execHeld counts the requests for the toolchain's wasm_exec.js, held
	// until execGo is closed when holdExec is set (before the page loads).
	holdExec atomic.Bool
	execHeld atomic.Int32
	execGo   chan struct{}
}

func startGated(t *testing.T) *gated {
	t.Helper()
	srv, err := relay.New(
		relay.WithWidget(assets.Widget()),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 2 * time.Millisecond, TokenChars: 4}),
	)
	require.NoError(t, err)
	g := &gated{releasing: make(chan struct{})}
	var once sync.Once
	g.release = func() { once.Do(func() { close(g.releasing) }) }
	h := srv.Handler()
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, pageHTML())
	})
	g.execGo = make(chan struct{})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/wasm_exec.") && g.holdExec.Load() {
			g.execHeld.Add(1)
			select {
			case <-g.execGo:
			case <-r.Context().Done():
				return
			}
		}
		if strings.HasSuffix(r.URL.Path, ".wasm") {
			g.wasmHeld.Add(1)
			select {
			case <-g.releasing:
			case <-r.Context().Done():
				return
			}
			if code := g.wasmStatus.Load(); code != 0 {
				http.Error(w, "no wasm here", int(code))
				return
			}
		}
		if r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions" {
			g.chats.Add(1)
		}
		h.ServeHTTP(w, r)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(func() {
		g.release()
		s.Close()
		_ = srv.Shutdown(context.Background())
	})
	g.base = s.URL
	return g
}

// openGated opens the gated page once its element is defined, with
// window.__ready turning true when Go is.
func openGated(t *testing.T, g *gated) context.Context {
	t.Helper()
	ctx := browserTab(t)
	navigate(t, ctx, g.base+"/e2e")
	browsertest.Eval[bool](t, ctx, `(async () => {
		await customElements.whenDefined("trickle-answer");
		window.__ready = false;
		import("/trickle/trickle.js").then((m) => m.ready()).then(() => (window.__ready = true));
		return true;
	})()`)
	return ctx
}

// earlyAsk opens the gated page, asks (window.__p is the call's promise)
// and waits until the early view shows text, while Go cannot have started:
// its .wasm is held. It returns the early view's text.
func earlyAsk(t *testing.T, g *gated, endpoint string) (context.Context, string) {
	t.Helper()
	ctx := openGated(t, g)
	browsertest.Eval[bool](t, ctx, `(async () => {
		const a = document.getElementById("a");
		a.setAttribute("endpoint", `+browsertest.JSString(endpoint)+`);
		window.__p = a.ask("early");
		return true;
	})()`)
	browsertest.WaitFor(t, ctx, 20*time.Second, `document.querySelector('[data-trickle="early"]')?.textContent.length > 0`)
	// The text may come before the .wasm is even asked for; Go cannot
	// start before it is released.
	require.Eventually(t, func() bool { return g.wasmHeld.Load() >= 1 }, 20*time.Second, 20*time.Millisecond, "the .wasm is asked for, and held")
	var early struct {
		Text, Hidden string
		Ready        bool
		Announced    int
		Busy         bool
	}
	raw := browsertest.Eval[string](t, ctx, `JSON.stringify((() => {
		const e = document.querySelector('[data-trickle="early"]');
		return { text: e.textContent, hidden: e.getAttribute("aria-hidden"), ready: window.__ready,
			announced: document.querySelector('[data-trickle="announcer"]').childNodes.length };
	})())`)
	require.NoError(t, json.Unmarshal([]byte(raw), &early))
	require.False(t, early.Ready, "Go is not ready: its .wasm is held")
	require.Equal(t, "true", early.Hidden, "the early view is silent for screen readers")
	require.Zero(t, early.Announced, "nothing is announced before Go renders the answer")
	return ctx, early.Text
}

// navigate loads url without waiting for the widget.
func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	browsertest.Eval[bool](t, ctx, `(location.href = `+browsertest.JSString(url)+`, true)`)
	browsertest.WaitAcross(t, ctx, 20*time.Second, `location.href === `+browsertest.JSString(url)+` && document.readyState !== "loading" && !!document.getElementById("a")`)
}

// requireRenderedAs checks the answer against the one-shot oracles as the
// suite's other tests do (sameDOM, requireAnnounced), on the gated origin.
func requireRenderedAs(t *testing.T, ctx context.Context, g *gated, r result) {
	t.Helper()
	opts := element.RenderOptions(render.Policy{SameOrigin: g.base})
	want := convert(t, r.Text, opts...)
	normalized := browsertest.Eval[string](t, ctx, `(() => {
		const t = document.createElement("template");
		t.innerHTML = `+browsertest.JSString(want)+`;
		return t.innerHTML;
	})()`)
	require.Equal(t, normalized, r.HTML, "the DOM equals the one-shot render of the final text: the early view is gone")
	doc := document(t, opts...)
	f := doc.Update(r.Text)
	var units []string
	for _, u := range a11y.Units(append(f.Settled, doc.Finish().Settled...)) {
		units = append(units, u.Text)
	}
	require.NotEmpty(t, units)
	want, heard := strings.Join(units, " "), strings.Join(r.Announced, " ")
	if r.Status == "stopped" && heard != want {
		// The sentence the stop cut is not read out (a11y's StopWith).
		want = strings.Join(units[:len(units)-1], " ")
	}
	require.Equal(t, want, heard, "every unit announced once, in order, from the answer's start")
}

func TestAFirstVisitPaintsTheTextBeforeTheWasmArrivesAndGoTakesOverFromTheFirstByte(t *testing.T) {
	g := startGated(t)
	want := canned(t, "code").Text
	ctx, early := earlyAsk(t, g, "/v1/chat/completions?answer=code&gap_ms=20")
	require.True(t, strings.HasPrefix(want, early), "the early view shows the answer's own text: %q", early)

	g.release()
	status := browsertest.Eval[string](t, ctx, `window.__p`)
	require.Equal(t, "complete", status)
	r := waitAnnouncer(t, ctx)
	require.Equal(t, want, r.Text, "nothing lost, nothing twice")
	requireRenderedAs(t, ctx, g, r)
	require.Equal(t, thread, r.Metrics["thread"])
	require.Equal(t, []string{"trickle-start", "trickle-first-token", "trickle-end"}, r.EventTypes)
	require.Equal(t, int32(1), g.chats.Load(), "Go adopted the page's request: the model was asked once")
	require.False(t, browsertest.Eval[bool](t, ctx, `document.querySelector('[data-trickle="content"]').hasAttribute("data-trickle-early")`))
}

func TestStopDuringTheEarlyViewAbortsTheRequestAndTheRelayStopsGenerating(t *testing.T) {
	g := startGated(t)
	ctx, _ := earlyAsk(t, g, "/v1/chat/completions?answer=sample-20k&gap_ms=5")
	browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		a.stop();
		// The early view stops with Stop.
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		window.__shown = document.querySelector('[data-trickle="early"]')?.textContent ?? "";
		return "";
	})()`)
	shown := browsertest.Eval[string](t, ctx, `window.__shown`)
	require.NotEmpty(t, shown)

	// The relay hears Stop before Go is ready: the page's DELETE stops
	// the generation while the .wasm is still held (a disconnect alone
	// would cancel it only after the resume grace period, as a cancel).
	require.Eventually(t, func() bool {
		return metric(t, g, "trickle_stops_total") == 1 && metric(t, g, "trickle_streams_active") == 0
	}, 10*time.Second, 50*time.Millisecond, "the relay stopped the generation before Go was ready")
	require.False(t, browsertest.Eval[bool](t, ctx, `window.__ready`))

	g.release()
	require.Equal(t, "stopped", browsertest.Eval[string](t, ctx, `window.__p`))
	r := waitAnnouncer(t, ctx)
	require.True(t, strings.HasPrefix(r.Text, shown) || strings.HasPrefix(shown, r.Text), "Go's text and the early view's are one text")
	require.GreaterOrEqual(t, len(r.Text), len(shown), "Go shows every byte the early view read: nothing lost")
	require.Less(t, len(r.Text), len(canned(t, "sample-20k").Text))
	require.Equal(t, "Stopped.", r.Notice)
	requireRenderedAs(t, ctx, g, r)
	require.Equal(t, int32(1), g.chats.Load(), "the model was asked once")
	in := gatedInfo(t, g, r.StreamID)
	require.True(t, in.UpstreamCancelled && in.State == relay.StateStopped, "%+v", in)
}

// metric reads one of the gated relay's /metrics values.
func metric(t *testing.T, g *gated, name string) float64 {
	t.Helper()
	resp, err := http.Get(g.base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

func gatedInfo(t *testing.T, g *gated, id string) relay.Info {
	t.Helper()
	resp, err := http.Get(g.base + "/v1/streams/" + url.PathEscape(id) + "/info")
	require.NoError(t, err)
	defer resp.Body.Close()
	var in relay.Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
	return in
}

func TestTheReadersScrollPlaceHoldsWhenGoTakesOverFromTheEarlyView(t *testing.T) {
	for _, scrolled := range []bool{false, true} {
		t.Run(map[bool]string{false: "following", true: "scrolled up"}[scrolled], func(t *testing.T) {
			g := startGated(t)
			ctx, _ := earlyAsk(t, g, "/v1/chat/completions?answer=sample-20k&gap_ms=2")
			// The early view grows past the box (240 px high).
			browsertest.WaitFor(t, ctx, 20*time.Second, `(() => { const a = document.getElementById("a"); return a.scrollHeight > 3 * a.clientHeight; })()`)
			if scrolled {
				browsertest.Eval[bool](t, ctx, `(() => { const a = document.getElementById("a"); a.scrollTop = 0; a.dispatchEvent(new Event("scroll")); return true; })()`)
			} else {
				browsertest.WaitFor(t, ctx, 20*time.Second, `(() => { const a = document.getElementById("a"); return a.scrollHeight - a.scrollTop - a.clientHeight <= 8; })()`)
			}
			g.release()
			// Go's frames replace the early view.
			browsertest.WaitFor(t, ctx, 20*time.Second, `!document.querySelector('[data-trickle="early"]') && document.querySelector('[data-trickle="content"]').textContent.length > 0`)
			browsertest.Eval[bool](t, ctx, `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
			if scrolled {
				require.Zero(t, browsertest.Eval[float64](t, ctx, `document.getElementById("a").scrollTop`), "a reader who scrolled up stays where they are")
				require.True(t, browsertest.Eval[bool](t, ctx, `!document.querySelector('[data-trickle="jump"]').hidden`), "and is offered the jump to the latest")
			} else {
				browsertest.WaitFor(t, ctx, 20*time.Second, `(() => { const a = document.getElementById("a"); return a.scrollHeight - a.scrollTop - a.clientHeight <= 8; })()`)
			}
			browsertest.Eval[bool](t, ctx, `(document.getElementById("a").stop(), true)`)
			require.Equal(t, "stopped", browsertest.Eval[string](t, ctx, `window.__p`))
		})
	}
}

// toldAsk opens the gated page with listeners that note, for each
// trickle-start, trickle-first-token, trickle-end and trickle-error, when
// it came (epoch ms), whether Go was ready then and how much text the
// early view showed; asks (window.__askedAt: just before the call, epoch
// ms) and waits until the page was told of the first token.
func toldAsk(t *testing.T, g *gated, endpoint string) context.Context {
	t.Helper()
	ctx := openGated(t, g)
	browsertest.Eval[bool](t, ctx, `(async () => {
		window.__told = [];
		const a = document.getElementById("a");
		for (const name of ["trickle-start", "trickle-first-token", "trickle-end", "trickle-error"]) {
			a.addEventListener(name, (ev) => window.__told.push({ type: ev.type, detail: ev.detail,
				at: performance.timeOrigin + performance.now(), ready: window.__ready, status: a.status,
				shown: document.querySelector('[data-trickle="early"]')?.textContent.length ?? 0 }));
		}
		a.setAttribute("endpoint", `+browsertest.JSString(endpoint)+`);
		window.__askedAt = performance.timeOrigin + performance.now();
		window.__p = a.ask("early");
		return true;
	})()`)
	browsertest.WaitFor(t, ctx, 20*time.Second, `window.__told.some((e) => e.type === "trickle-first-token")`)
	return ctx
}

// told is what toldAsk's listeners noted.
type told struct {
	Type   string `json:"type"`
	Detail struct {
		TTFT  float64 `json:"ttft_ms"`
		TTFAT float64 `json:"ttfat_ms"`
	} `json:"detail"`
	At     float64 `json:"at"`
	Ready  bool    `json:"ready"`
	Status string  `json:"status"` // el.status then
	Shown  int     `json:"shown"`
}

func toldSoFar(t *testing.T, ctx context.Context) (events []told, types []string) {
	t.Helper()
	require.NoError(t, json.Unmarshal([]byte(browsertest.Eval[string](t, ctx, `JSON.stringify(window.__told)`)), &events))
	for _, e := range events {
		types = append(types, e.Type)
	}
	return events, types
}

// On a first visit the page is told of the answer's first token in the
// frame the early view paints it, not when Go takes the answer over (its
// .wasm is held here until then), and only once: Go, taking over, does
// not tell it again. Its ttft_ms is the metrics' own, from the ask() to
// the arrival of the bytes the early view painted.
func TestAFirstVisitTellsTheFirstTokenOnceWhenTheEarlyViewPaintsIt(t *testing.T) {
	g := startGated(t)
	ctx := toldAsk(t, g, "/v1/chat/completions?answer=code&gap_ms=20")
	require.Eventually(t, func() bool { return g.wasmHeld.Load() >= 1 }, 20*time.Second, 20*time.Millisecond, "the .wasm is asked for, and held")
	events, types := toldSoFar(t, ctx)
	require.Equal(t, []string{"trickle-start", "trickle-first-token"}, types)
	require.Equal(t, "streaming", events[0].Status, "el.status says what trickle-start does")
	first := events[1]
	require.False(t, first.Ready, "told before Go is ready: its .wasm is held")
	require.Positive(t, first.Shown, "told in the frame that painted the text")
	require.Positive(t, first.Detail.TTFT)
	require.Equal(t, first.Detail.TTFT, first.Detail.TTFAT, "no thinking in this answer")
	askedAt := browsertest.Eval[float64](t, ctx, `window.__askedAt`)
	require.LessOrEqual(t, askedAt+first.Detail.TTFT, first.At+0.01, "the first token arrived before the page was told of it")

	g.release()
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__p`))
	r := waitAnnouncer(t, ctx)
	require.Equal(t, canned(t, "code").Text, r.Text)
	_, types = toldSoFar(t, ctx)
	require.Equal(t, []string{"trickle-start", "trickle-first-token", "trickle-end"}, types, "Go, taking over, tells neither again")
	// Go gives the time the page was told, not its own reading of the
	// same arrival through its clock (Recorder.ToldFirst).
	require.InDelta(t, first.Detail.TTFT, r.Metrics["ttft_ms"], 0.001, "the event's time is the metrics' time to first token")
	require.InDelta(t, first.Detail.TTFAT, r.Metrics["ttfat_ms"], 0.001)
	require.Equal(t, int32(1), g.chats.Load())

	// The next answer, Go's own from its start, is told once too.
	browsertest.Eval[bool](t, ctx, `(window.__told = [], window.__p = document.getElementById("a").ask("again"), true)`)
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__p`))
	_, types = toldSoFar(t, ctx)
	require.Equal(t, []string{"trickle-start", "trickle-first-token", "trickle-end"}, types)
}

// A first visit whose widget never loads (its .wasm is refused) has still
// told the page of the first token the early view painted, once.
func TestAFirstVisitWhoseWidgetNeverLoadsHasToldTheFirstTokenOnce(t *testing.T) {
	g := startGated(t)
	g.wasmStatus.Store(http.StatusNotFound)
	ctx := toldAsk(t, g, "/v1/chat/completions?answer=code&gap_ms=20")
	g.release()
	require.Equal(t, "failed", browsertest.Eval[string](t, ctx, `window.__p`))
	browsertest.WaitFor(t, ctx, 20*time.Second, `window.__told.some((e) => e.type === "trickle-error")`)
	events, types := toldSoFar(t, ctx)
	require.Equal(t, []string{"trickle-start", "trickle-first-token", "trickle-error"}, types)
	require.False(t, events[1].Ready)
	require.Positive(t, events[1].Shown)
}

// A first visit's .wasm download starts with the worker's first line,
// while the toolchain's script (wasm_exec.js, which Go needs first) is
// still on its way, not one round trip after it; and once.
func TestTheWasmDownloadDoesNotWaitForTheToolchainsScript(t *testing.T) {
	if thread == "main" {
		t.Skip("worker mode: on the main thread the page imports the scripts itself")
	}
	g := startGated(t)
	g.holdExec.Store(true)
	ctx := browserTab(t)
	navigate(t, ctx, g.base+"/e2e")
	require.Eventually(t, func() bool { return g.execHeld.Load() >= 1 }, 20*time.Second, 20*time.Millisecond, "the worker asks for wasm_exec.js")
	require.Eventually(t, func() bool { return g.wasmHeld.Load() >= 1 }, 20*time.Second, 20*time.Millisecond,
		"the .wasm is asked for while wasm_exec.js is held")
	close(g.execGo)
	g.release()
	browsertest.Eval[bool](t, ctx, `import("/trickle/trickle.js").then((m) => m.ready()).then(() => true)`)
	browsertest.Eval[bool](t, ctx, `(window.__p = document.getElementById("a").ask("hello"), true)`)
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__p`))
	require.Equal(t, int32(1), g.wasmHeld.Load(), "the .wasm is downloaded once")
}
