package examples_test

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/trickle-dev/trickle/internal/testkit/testlog"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/examples"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
)

// -screenshots DIR saves a picture of each example once its answer has
// finished, with the relay at trickle serve's default timing
// (docs/screenshots is made this way, by make screenshots:
// go test ./examples -run 'Page|Lab|Reading' -screenshots ../docs/screenshots).
var screenshots = flag.String("screenshots", "", "directory to save a PNG of each example page into")

// The package's relay and browser, started by the first test that needs
// them and shared by all (each test gets a fresh tab): starting Chromium
// once instead of per test keeps `go test ./examples` short.
var (
	sharedMu      sync.Mutex
	sharedBase    string
	sharedBrowser context.Context
	sharedStop    context.CancelFunc
	sharedDir     string
	sharedErr     error
)

// TestMain stops the shared browser when the tests are done.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if sharedStop != nil {
		sharedStop()
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// startExamples returns a new browser tab (1280 × 900) and the URL of the
// relay serving the built widget and the pages on loopback. The widget must
// be built (make build); without it, or without Chromium, the test is
// skipped, except in CI.
func startExamples(t *testing.T) (context.Context, string) {
	t.Helper()
	path := browsertest.Available(t)
	if _, err := fs.Stat(assets.Widget(), "trickle.js"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the widget is not built into assets/widget (make build runs before the tests)")
		}
		t.Skip("the widget is not built: run make build first")
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedBase == "" && sharedErr == nil {
		var srv *relay.Server
		// A brisker simulated model than trickle serve's default (400 ms,
		// then 30 ms a token) where a page has no timing controls: the
		// pages behave the same, the tests wait less. Screenshots are taken
		// at trickle serve's defaults, so the figures they show are the
		// ones people will see.
		opts := []relay.Option{relay.WithWidget(assets.Widget()), relay.WithPages(examples.Pages()),
			relay.WithLogger(slog.New(slog.DiscardHandler))}
		if *screenshots == "" {
			opts = append(opts, relay.WithSimDefaults(relay.SimDefaults{TTFT: 50 * time.Millisecond, Gap: 6 * time.Millisecond, Jitter: 2 * time.Millisecond, TokenChars: 4}))
		}
		srv, sharedErr = relay.New(opts...)
		if sharedErr == nil {
			// Lives until the test binary exits, like the browser. The
			// screenshot page and its answer are the tests' own.
			mux := http.NewServeMux()
			mux.HandleFunc("/screens/", serveScreens)
			mux.Handle("/", srv.Handler())
			sharedBase = httptest.NewServer(mux).URL
		}
	}
	if sharedBrowser == nil && sharedErr == nil {
		sharedDir, sharedErr = os.MkdirTemp("", "trickle-examples-chromium-")
		if sharedErr == nil {
			sharedBrowser, sharedStop = browsertest.Launch(context.Background(), path, sharedDir, browsertest.WithWindowSize(1280, 900))
			sharedErr = chromedp.Do(sharedBrowser)
		}
	}
	require.NoError(t, sharedErr, "starting the relay and %s", path)
	// Each test has three minutes on its tab; an action that hangs ends there.
	tab := browsertest.Timeout(t, browsertest.Tab(t, sharedBrowser), 3*time.Minute)
	run(t, tab, 10*time.Second, chromedp.EmulateViewport(1280, 900))
	if thread == "main" {
		// Every element of every page gets worker="off" before the
		// widget's module runs (readyState turns interactive after the
		// parse, before module scripts run).
		_, err := chromedp.Call(browsertest.Timeout(t, tab, 10*time.Second), page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `document.addEventListener("readystatechange", () => {
				if (document.readyState === "interactive") for (const el of document.querySelectorAll("trickle-answer")) el.setAttribute("worker", "off");
			});`,
		})
		require.NoError(t, err)
	}
	return tab, sharedBase
}

// thread is where the tests expect the widget's Go side to run: "worker"
// (the default), or "main" with TRICKLE_WIDGET_THREAD=main, which gives
// every element worker="off" (make test runs the browser tests both ways).
var thread = cmp.Or(os.Getenv("TRICKLE_WIDGET_THREAD"), "worker")

// run runs actions on the tab with an overall limit.
func run(t *testing.T, tab context.Context, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(browsertest.Timeout(t, tab, d), actions...))
}

func shoot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	// Let the last frame and any status announcement settle.
	time.Sleep(300 * time.Millisecond)
	png, err := chromedp.Run(browsertest.Timeout(t, tab, 20*time.Second), chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(*screenshots, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(*screenshots, name+".png"), png, 0o644))
}

// shortAnswer is the relay's canned "short" answer, the one these tests
// ask for.
func shortAnswer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "relay", "sim", "answers", "short.md"))
	require.NoError(t, err)
	return string(b)
}

func metric(t *testing.T, tab context.Context, scope, key string) string {
	t.Helper()
	return browsertest.Eval[string](t, tab, `document.querySelector(`+strconv.Quote(scope+` dd[data-key="`+key+`"]`)+`).textContent`)
}

func TestIndexPageLinksToEveryExample(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 20*time.Second, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".cards")))
	links := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll(".cards a")].map(a => a.href)`)
	require.Len(t, links, 4)
	for _, l := range links {
		run(t, tab, 20*time.Second, chromedp.Navigate(l), chromedp.WaitReady(chromedp.CSS("trickle-answer [data-trickle=content], trickle-chat [data-trickle-chat=composer]")))
	}
	run(t, tab, 20*time.Second, chromedp.Navigate(base+"/examples/compare/"), chromedp.WaitVisible(chromedp.CSS("#chart")))
	require.Equal(t, "/examples/transports/", browsertest.Eval[string](t, tab, `location.pathname`), "the comparison page's first address leads to it")
	run(t, tab, 20*time.Second, chromedp.Navigate(base+"/examples/"), chromedp.WaitVisible(chromedp.CSS(".cards")))
	shoot(t, tab, "index")
}

func TestAnswerPageStreamsAnAnswerToCompletionAndShowsItsMetrics(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/answer/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
		// What the element's two status parts say when trickle-end fires.
		chromedp.Evaluate[chromedp.Void](`document.getElementById("answer").addEventListener("trickle-end", (e) => {
			const part = (p) => e.target.querySelector('[data-trickle="' + p + '"]').textContent;
			document.body.dataset.shownAtEnd = part("status");
			document.body.dataset.spokenAtEnd = part("sr-status");
		}, { once: true }); void 0`),
		chromedp.Click(chromedp.CSS("#go")),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.lastStatus`)

	// The visible status is never behind: it says how the answer ended in
	// the frame that ends it. The spoken one keeps its order (the last
	// sentences, then "Answer complete."), so it may still be on the
	// start status then, and catches up.
	require.Equal(t, "Answer complete.", browsertest.Eval[string](t, tab, `document.body.dataset.shownAtEnd`))
	t.Logf("at trickle-end the screen reader's status said %q", browsertest.Eval[string](t, tab, `document.body.dataset.spokenAtEnd`))
	browsertest.WaitFor(t, tab, 5*time.Second, `document.querySelector('#answer [data-trickle="sr-status"]').textContent === "Answer complete."`)
	require.Equal(t, "true", browsertest.Eval[string](t, tab, `document.querySelector('#answer [data-trickle="status"]').getAttribute("aria-hidden")`),
		"the visible line is not a second live region")
	// The status region is the live one where the browser has no
	// ariaNotify(); with it, the status is notified and the region is a
	// silent record (wasm/web/notify.js).
	wantRole := "status"
	if browsertest.Eval[bool](t, tab, `typeof Element.prototype.ariaNotify === "function"`) {
		wantRole = ""
	}
	require.Equal(t, wantRole, browsertest.Eval[string](t, tab, `document.querySelector('#answer [data-trickle="sr-status"]').getAttribute("role") ?? ""`))

	require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.body.dataset.lastStatus`))
	require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.getElementById("status").textContent`))
	require.Equal(t, strings.TrimSpace(shortAnswer(t)), strings.TrimSpace(browsertest.Eval[string](t, tab, `document.getElementById("answer").text`)))
	require.Contains(t, browsertest.Eval[string](t, tab, `document.querySelector('#answer [data-trickle="content"]').innerHTML`), "<pre>",
		"the answer's code block should be rendered as HTML")
	require.NotEqual(t, "–", metric(t, tab, "#metrics", "ttft_ms"), "time to first token should be shown")
	require.Equal(t, metric(t, tab, "#metrics", "ttft_ms"), metric(t, tab, "#metrics", "ttfat_ms"),
		"without thinking the first token is the answer's")
	tokens, err := strconv.Atoi(metric(t, tab, "#metrics", "tokens"))
	require.NoError(t, err)
	require.Greater(t, tokens, 10)
	require.Equal(t, thread, browsertest.Eval[string](t, tab, `document.getElementById("answer").metrics.thread`))
	require.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("stop").disabled && !document.getElementById("go").disabled && !document.getElementById("retry").disabled`),
		"after the end Stop is disabled, Ask and Retry enabled")
	shoot(t, tab, "answer")

	// Retry asks again: a new stream on the relay, the same answer.
	first := browsertest.Eval[string](t, tab, `document.getElementById("answer").streamId`)
	run(t, tab, 10*time.Second, chromedp.Click(chromedp.CSS("#retry")))
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.lastStatus`)
	require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.body.dataset.lastStatus`))
	require.NotEqual(t, first, browsertest.Eval[string](t, tab, `document.getElementById("answer").streamId`), "Retry should start a new stream")
	require.Equal(t, strings.TrimSpace(shortAnswer(t)), strings.TrimSpace(browsertest.Eval[string](t, tab, `document.getElementById("answer").text`)))
}

// The chat page: a question typed and sent with Enter is answered; one
// about the weather has the model call the page's get_weather, whose
// result reaches the model and its answer; the thread is saved, and a
// reload shows it again without a request; New chat empties it.
func TestChatPageRunsTheToolAndShowsTheSavedThreadAgainAfterAReload(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/chat/"),
		chromedp.WaitVisible(chromedp.CSS("#chat textarea")),
		chromedp.Evaluate[chromedp.Void](`localStorage.clear(); void 0`),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS("#chat textarea")),
	)
	browsertest.WaitFor(t, tab, 20*time.Second, `document.body.dataset.ready === "true"`)
	run(t, tab, 10*time.Second,
		chromedp.Focus(`#chat textarea`),
		chromedp.SendKeys(`#chat textarea`, "What is the weather in Lyon?"),
		chromedp.KeyEvent(kb.Enter),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `(() => { const m = document.getElementById("chat").messages;
		return !document.getElementById("chat").busy && m.length >= 4 && m[m.length - 1].role === "assistant"; })()`)
	msgs := browsertest.Eval[[]map[string]any](t, tab, `document.getElementById("chat").messages`)
	require.Equal(t, []any{"user", "assistant", "tool", "assistant"}, []any{msgs[0]["role"], msgs[1]["role"], msgs[2]["role"], msgs[3]["role"]})
	require.Equal(t, "What is the weather in Lyon?", msgs[0]["content"])
	require.Contains(t, msgs[2]["content"], `"conditions":"light rain, clearing by evening"`, "the page's tool ran")
	require.Contains(t, msgs[3]["content"], "light rain, clearing by evening", "its result reached the model's answer")
	require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.getElementById("status").textContent`))
	html := browsertest.Eval[string](t, tab, `document.querySelector("#chat [data-trickle-chat=turns]").innerHTML`)
	shoot(t, tab, "chat")

	// Saved, and shown again after a reload without asking the model.
	require.Equal(t, len(msgs), browsertest.Eval[int](t, tab, `JSON.parse(localStorage.getItem("trickle-example-chat")).length`))
	run(t, tab, 30*time.Second, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#chat textarea")))
	browsertest.WaitFor(t, tab, 20*time.Second, `document.body.dataset.ready === "true" && document.getElementById("chat").messages.length > 0`)
	require.Equal(t, msgs, browsertest.Eval[[]map[string]any](t, tab, `document.getElementById("chat").messages`))
	browsertest.WaitFor(t, tab, 10*time.Second, `document.querySelector("#chat [data-trickle-chat=turns]").textContent.includes("light rain, clearing by evening")`)
	require.Equal(t, 0, browsertest.Eval[int](t, tab, `performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/")).length`),
		"a stored thread is shown without a request")
	require.Equal(t, strings.Count(html, "<trickle-answer"), strings.Count(browsertest.Eval[string](t, tab, `document.querySelector("#chat [data-trickle-chat=turns]").innerHTML`), "<trickle-answer"))

	run(t, tab, 10*time.Second, chromedp.Click(chromedp.CSS("#clear")))
	require.Equal(t, 0, browsertest.Eval[int](t, tab, `document.getElementById("chat").messages.length`))
	require.Nil(t, browsertest.Eval[any](t, tab, `localStorage.getItem("trickle-example-chat")`))
}

// fakeSpeech stands in for the browser's speechSynthesis (headless
// Chromium has no voices): it records each utterance's text.
const fakeSpeech = `Object.defineProperty(window, "speechSynthesis", { configurable: true, value: {
	queued: [], speak(u) { this.queued.push(u.text); }, cancel() {}, getVoices: () => [] } }); void 0`

// The answer page's Read aloud button reads the answer aloud as it
// streams; the screen-reader lab's read-aloud timeline lists each
// utterance with its time.
func TestAnswerPageReadsAloudAndTheLabShowsTheUtterances(t *testing.T) {
	tab, base := startExamples(t)
	// The recorder goes in before the pages' scripts run (the lab wraps
	// speechSynthesis.speak as it loads), and out again after.
	added, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: fakeSpeech})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := chromedp.Call(tab, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams(added))
		require.NoError(t, err)
	})

	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/answer/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
		chromedp.Click(chromedp.CSS("#read")),
		chromedp.Click(chromedp.CSS("#go")),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.lastStatus`)
	require.Equal(t, "true", browsertest.Eval[string](t, tab, `document.getElementById("read").getAttribute("aria-pressed")`))
	said := `[...document.querySelectorAll('#answer [data-trickle="announcer"] p')].map((p) => p.textContent).join(" ")`
	browsertest.WaitFor(t, tab, 10*time.Second, `speechSynthesis.queued.length > 0 && speechSynthesis.queued.join(" ") === `+said)
	require.Greater(t, browsertest.Eval[int](t, tab, `speechSynthesis.queued.length`), 1)
	require.Equal(t, "on", browsertest.Eval[string](t, tab, `document.getElementById("answer").metrics.speech`))
	run(t, tab, 10*time.Second, chromedp.Click(chromedp.CSS("#read")))
	require.Equal(t, "off", browsertest.Eval[string](t, tab, `document.getElementById("answer").metrics.speech`))

	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/a11y/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.Click(chromedp.CSS(`input[name="_speak"]`)),
		chromedp.Click(chromedp.CSS("#go")),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.done === "1"`)
	timeline := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#t-speech li span")].map((s) => s.textContent)`)
	require.Equal(t, browsertest.Eval[[]string](t, tab, `speechSynthesis.queued`), timeline, "the timeline lists each utterance")
	require.Greater(t, len(timeline), 1)
	require.Regexp(t, `^\d+\.\d\d s$`, browsertest.Eval[string](t, tab, `document.querySelector("#t-speech li time").textContent`))
}

// msShown reads a time the answer page shows ("123 ms") as a number.
func msShown(t *testing.T, tab context.Context, key string) float64 {
	t.Helper()
	s := metric(t, tab, "#metrics", key)
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, " ms"), 64)
	require.NoErrorf(t, err, "%s should show a time in ms, not %q", key, s)
	return v
}

// The answer page shows the time to the answer's first token (TTFAT) beside
// the time to the first token of any kind (TTFT): a model that thinks
// first streams its reasoning before the answer, so TTFAT comes later, by
// at least the time the reasoning took to stream.
func TestAnswerPageShowsTheFirstAnswerTokenBesideTheFirstTokenForAThinkingAnswer(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/answer/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "thinking"),
		chromedp.Click(chromedp.CSS("#go")),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.lastStatus`)
	require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.body.dataset.lastStatus`))
	require.NotEmpty(t, browsertest.Eval[string](t, tab, `document.querySelector('#answer [data-trickle="thinking-text"]').textContent`), "the answer thought first")

	labels := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#metrics dt")].map((dt) => dt.textContent)`)
	i := slices.Index(labels, "TTFT")
	require.GreaterOrEqual(t, i, 0, "the page shows TTFT: %v", labels)
	require.Equal(t, "TTFAT", labels[i+1], "and TTFAT right beside it: %v", labels)
	require.Equal(t, "time to first answer token, after any thinking", browsertest.Eval[string](t, tab, `document.querySelectorAll("#metrics dt")[`+strconv.Itoa(i+1)+`].title`))

	ttft, ttfat := msShown(t, tab, "ttft_ms"), msShown(t, tab, "ttfat_ms")
	m := browsertest.Eval[map[string]float64](t, tab, `(() => { const m = document.getElementById("answer").metrics; return { ttft: m.ttft_ms, ttfat: m.ttfat_ms }; })()`)
	require.InDelta(t, m["ttft"], ttft, 1, "the page shows the element's metrics")
	require.InDelta(t, m["ttfat"], ttfat, 1)
	// The simulated model streams the reasoning (dozens of tokens) at its
	// gap before the first answer token: TTFAT is never before TTFT. Not
	// strictly after: on a loaded machine the reasoning and the first answer
	// token can arrive in one read (seen at 817 ms both).
	require.GreaterOrEqual(t, ttfat, ttft, "the answer's first token never comes before the reasoning's")
	if ttfat < ttft+10 {
		t.Logf("the reasoning and the answer's first token came together (TTFT %v ms, TTFAT %v ms)", ttft, ttfat)
	}
}

// cell reads the transports page's table: the number behind a cell
// (data-value) for one side and one row.
func cell(t *testing.T, tab context.Context, side, key string) float64 {
	t.Helper()
	v := browsertest.Eval[string](t, tab, `document.querySelector('#table tr[data-key="`+key+`"] td[data-side="`+side+`"]').dataset.value`)
	f, err := strconv.ParseFloat(v, 64)
	require.NoErrorf(t, err, "%s's %s should be a number", side, key)
	return f
}

// runTransports fills the transports page's form and runs both sides to
// the end.
func runTransports(t *testing.T, tab context.Context, base string, fields map[string]string) {
	t.Helper()
	startTransports(t, tab, base, fields)
	browsertest.WaitFor(t, tab, 45*time.Second, `document.body.dataset.done === "1"`)
}

// startTransports fills the transports page's form and presses Run.
func startTransports(t *testing.T, tab context.Context, base string, fields map[string]string) {
	t.Helper()
	actions := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "/examples/transports/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
	}
	for name, v := range fields {
		actions = append(actions, chromedp.SetValue(chromedp.CSS(`[name="`+name+`"]`), v))
	}
	actions = append(actions, chromedp.Click(chromedp.CSS("#go")))
	run(t, tab, 30*time.Second, actions...)
}

func TestTransportsPageResumesBothTransportsAfterADropWithNothingLostAndChartsIt(t *testing.T) {
	tab, base := startExamples(t)
	runTransports(t, tab, base, map[string]string{
		"answer": "short", "ttft_ms": "50", "jitter_ms": "0",
		// Fast enough that the page may lag behind the stream: at a cut the
		// browser discards events still queued in the fetch body, and a
		// resume that re-reads event 40 is cut again by the relay.
		"gap_ms": "5",
		"_fault": "drop_after", "_n": "40",
	})

	verdict := browsertest.Eval[string](t, tab, `document.getElementById("verdict").textContent + " | notices: " +
		[...document.querySelectorAll('[data-trickle="notice-text"]')].map(n => n.textContent).join(" / ")`)
	require.Equal(t, "true", browsertest.Eval[string](t, tab, `document.getElementById("verdict").dataset.ok`), verdict)
	sse := browsertest.Eval[string](t, tab, `document.getElementById("sse").text`)
	ws := browsertest.Eval[string](t, tab, `document.getElementById("websocket").text`)
	require.Equal(t, strings.TrimSpace(shortAnswer(t)), strings.TrimSpace(sse))
	require.Equal(t, sse, ws, "both transports should end with the same text")
	for _, side := range []string{"sse", "websocket"} {
		require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.querySelector('[data-side="`+side+`"] .pill').textContent`), side)
		require.Equal(t, browsertest.Eval[string](t, tab, `document.querySelector("#sse [data-trickle=content]").innerHTML`),
			browsertest.Eval[string](t, tab, `document.querySelector("#`+side+` [data-trickle=content]").innerHTML`), "same DOM on %s", side)

		// The table: the drop is counted, every reconnect went on, and
		// the text equals the reference.
		reconnects := cell(t, tab, side, "reconnects")
		require.GreaterOrEqual(t, reconnects, 1.0, "%s should have reconnected after the drop", side)
		require.Equal(t, reconnects, cell(t, tab, side, "resumes"), "every reconnect of %s should have resumed", side)
		require.Equal(t, "true", browsertest.Eval[string](t, tab, `document.querySelector('#table tr[data-key="vs_reference"] td[data-side="`+side+`"]').dataset.value`))
		// Times are plausible for a 50 ms first token, 5 ms gaps and a
		// resume that waits for the relay's 2 s retry: hint.
		ttft := cell(t, tab, side, "ttft")
		require.True(t, ttft >= 50 && ttft < 5000, "%s time to first token %v ms", side, ttft)
		p50, p95, longest := cell(t, tab, side, "gap_p50"), cell(t, tab, side, "gap_p95"), cell(t, tab, side, "gap_max")
		require.True(t, 0 <= p50 && p50 <= p95 && p95 <= longest, "%s gaps p50 %v ≤ p95 %v ≤ max %v", side, p50, p95, longest)
		// The wait before the resume is the longest gap; or, when the cut
		// came before the widget read any event (on a loaded machine a busy
		// thread can leave the body unread, and Chromium drops unread bytes
		// with the connection: wasm/e2e/unread_test.go), it read no retry:
		// hint either, waited its own first backoff (250 ms) and read the
		// stream from its start: the wait is then in the first token's time.
		metrics := browsertest.Eval[string](t, tab, `JSON.stringify(document.getElementById("`+side+`").metrics)`)
		if longest < 1500 {
			require.GreaterOrEqual(t, ttft, 50.0+250, "%s: no gap holds the wait before the resume, so the first token does; metrics %s", side, metrics)
			t.Logf("%s: the cut came before the widget read an event; metrics %s", side, metrics)
		}
		require.Less(t, longest, 15000.0, side)
		require.Equal(t, cell(t, tab, "sse", "tokens"), cell(t, tab, side, "tokens"), "same tokens on %s", side)
		// Bytes: one OpenAI chunk of a 4-character token is a few hundred
		// bytes; the estimate adds a few bytes of framing.
		per, wire := cell(t, tab, side, "bytes_per_token"), cell(t, tab, side, "wire_per_token")
		require.True(t, per > 100 && per < 1000, "%s: %v bytes per token", side, per)
		require.True(t, wire-per >= 2 && wire-per <= 10, "%s: framing estimate %v bytes per token", side, wire-per)

		// The chart: a stepped line with points for this side, and a mark
		// per reconnect.
		points := browsertest.Eval[string](t, tab, `document.querySelector('#chart .series[data-side="`+side+`"]').dataset.points`)
		n, err := strconv.Atoi(points)
		require.NoError(t, err)
		// At least one frame saw tokens before the cut and one after the
		// resume, 2 s later (a busy machine may give no more frames).
		require.GreaterOrEqual(t, n, 2, "%s's line should have arrivals before the cut and after the resume", side)
		require.Equal(t, int(reconnects), browsertest.Eval[int](t, tab, `document.querySelectorAll('#chart .series[data-side="`+side+`"] .marks circle').length`))
		poly := browsertest.Eval[string](t, tab, `document.querySelector('#chart .series[data-side="`+side+`"] polyline').getAttribute("points")`)
		require.Len(t, strings.Fields(poly), 2*n+2, "%s: origin, two corners per arrival, and the end", side)
	}
	require.Less(t, cell(t, tab, "websocket", "wire_per_token")-cell(t, tab, "websocket", "bytes_per_token"),
		cell(t, tab, "sse", "wire_per_token")-cell(t, tab, "sse", "bytes_per_token"),
		"a WebSocket frame header is smaller than an HTTP/1.1 chunk's framing")
	shoot(t, tab, "transports")
}

// Every control of the simulated model reaches both transports: the first
// token waits for TTFT, a stall shows as the longest gap, the token size
// sets the token count, and neither side reconnects.
func TestTransportsPageShapesBothTransportsAlikeWithTheModelControls(t *testing.T) {
	tab, base := startExamples(t)
	startTransports(t, tab, base, map[string]string{
		"answer": "short", "_seed": "3",
		"ttft_ms": "400", "gap_ms": "8", "jitter_ms": "4", "token_chars": "9",
		"_fault": "stall_after", "_n": "12", "_stall_ms": "1500",
	})
	// During the stall the chart and the table are already live: both
	// lines have arrivals, both sides are streaming.
	live := `["sse", "websocket"].every(s =>
		document.querySelector('#chart .series[data-side="' + s + '"]').dataset.points > 1 &&
		document.querySelector('#table tr[data-key="status"] td[data-side="' + s + '"]').dataset.value === "streaming" &&
		document.querySelector('#table tr[data-key="tokens"] td[data-side="' + s + '"]').dataset.value > 1)`
	browsertest.WaitFor(t, tab, 10*time.Second, live)
	require.NotEqual(t, "1", browsertest.Eval[string](t, tab, `document.body.dataset.done`), "the run is still going")
	browsertest.WaitFor(t, tab, 45*time.Second, `document.body.dataset.done === "1"`)
	require.Equal(t, "true", browsertest.Eval[string](t, tab, `document.getElementById("verdict").dataset.ok`),
		browsertest.Eval[string](t, tab, `document.getElementById("verdict").textContent`))
	// The simulated model cuts the answer into tokens of 9 characters.
	want := math.Ceil(float64(utf8.RuneCountInString(strings.TrimSpace(shortAnswer(t)))) / 9)
	for _, side := range []string{"sse", "websocket"} {
		require.GreaterOrEqual(t, cell(t, tab, side, "ttft"), 400.0, "%s waited for the first token", side)
		// The gaps are measured where the widget reads the tokens: a token
		// the page's own work held up before the stall shortens it.
		longest, p95 := cell(t, tab, side, "gap_max"), cell(t, tab, side, "gap_p95")
		require.GreaterOrEqual(t, longest, 750.0, "%s: the stall is the longest gap", side)
		require.Less(t, p95, longest/5, "%s: one stall, not slow tokens", side)
		tokens := cell(t, tab, side, "tokens")
		require.InDelta(t, want, tokens, 1, "%s: tokens of 9 characters", side)
		require.Zero(t, cell(t, tab, side, "reconnects"), "a stall is not a drop: %s stays connected", side)
	}
}

// Faults that end the answer early end it the same way on both
// transports: same status, same text.
func TestTransportsPageEndsBothTransportsAlikeOnAnErrorOrAMissingEndMarker(t *testing.T) {
	tab, base := startExamples(t)
	for _, tc := range []struct{ fault, status, whole string }{
		{"error_after", "failed", "false"},
		// Every token came; only the end marker is missing, and the
		// status says so.
		{"no_end", "incomplete", "true"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			runTransports(t, tab, base, map[string]string{
				"answer": "short", "ttft_ms": "20", "gap_ms": "2", "_fault": tc.fault, "_n": "30",
			})
			for _, side := range []string{"sse", "websocket"} {
				require.Equal(t, tc.status, browsertest.Eval[string](t, tab, `document.querySelector('[data-side="`+side+`"] .pill').textContent`), side)
				require.Equal(t, tc.whole, browsertest.Eval[string](t, tab, `document.querySelector('#table tr[data-key="vs_reference"] td[data-side="`+side+`"]').dataset.value`),
					"%s's text against the reference", side)
			}
			sse := browsertest.Eval[string](t, tab, `document.getElementById("sse").text`)
			require.NotEmpty(t, sse)
			require.Equal(t, sse, browsertest.Eval[string](t, tab, `document.getElementById("websocket").text`))
			require.Equal(t, "false", browsertest.Eval[string](t, tab, `document.getElementById("verdict").dataset.ok`),
				"the verdict must not claim the cut answer equals the reference")
		})
	}
}

// "Stop both" stops both transports mid-answer, and the verdict does not
// call the stopped answers whole.
func TestTransportsPageStopBothStopsBothTransports(t *testing.T) {
	tab, base := startExamples(t)
	startTransports(t, tab, base, map[string]string{
		"answer": "sample-100k", "ttft_ms": "20", "gap_ms": "5", "_fault": "",
	})
	browsertest.WaitFor(t, tab, 20*time.Second, `["sse", "websocket"].every(s => document.getElementById(s).text.length > 200)`)
	run(t, tab, 10*time.Second, chromedp.Click(chromedp.CSS("#stop")))
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.done === "1"`)
	for _, side := range []string{"sse", "websocket"} {
		require.Equal(t, "stopped", browsertest.Eval[string](t, tab, `document.querySelector('#table tr[data-key="status"] td[data-side="`+side+`"]').dataset.value`), side)
		require.Equal(t, "false", browsertest.Eval[string](t, tab, `document.querySelector('#table tr[data-key="vs_reference"] td[data-side="`+side+`"]').dataset.value`), side)
	}
	require.Equal(t, "false", browsertest.Eval[string](t, tab, `document.getElementById("verdict").dataset.ok`))
}

func TestScreenReaderLabHearsTrickleWithoutRepeatsAndTheNaiveRegionWithThem(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/a11y/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
		chromedp.SetValue(chromedp.CSS(`input[name="gap_ms"]`), "15"),
		// 3-character tokens: the first one, "Hel", already cuts a word, so
		// the naive region's first announcement is a fragment whatever the
		// timing.
		chromedp.SetValue(chromedp.CSS(`input[name="token_chars"]`), "3"),
		chromedp.Click(chromedp.CSS("#go")),
	)
	browsertest.WaitFor(t, tab, 45*time.Second, `document.body.dataset.done === "1"`)

	count := func(side, key string) int {
		t.Helper()
		n, err := strconv.Atoi(metric(t, tab, "#"+side+"-counts", key))
		require.NoError(t, err)
		return n
	}
	heard := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#t-log li > span")].map(s => s.textContent)`)
	t.Logf("Trickle said: %q", heard)
	t.Logf("the naive region was heard as: %q", browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("#n-log li")].map(s => s.textContent)`))
	// Every line of both transcripts carries its time since the request, in
	// the order it was heard.
	for _, log := range []string{"#t-log", "#n-log"} {
		times := browsertest.Eval[[]string](t, tab, `[...document.querySelectorAll("`+log+` li > time")].map(s => s.textContent)`)
		require.Equal(t, browsertest.Eval[int](t, tab, `document.querySelectorAll("`+log+` li").length`), len(times), log)
		last := -1.0
		for _, tm := range times {
			sec, err := strconv.ParseFloat(strings.TrimSuffix(tm, " s"), 64)
			require.NoError(t, err, "%s: %q", log, tm)
			require.GreaterOrEqual(t, sec, last, "%s is in the order heard", log)
			last = sec
		}
	}
	require.Greater(t, count("t", "announcements"), 1, "Trickle should announce the answer sentence by sentence")
	require.Zero(t, count("t", "duplicates"), "Trickle never repeats a sentence")
	require.Zero(t, count("t", "fragments"), "Trickle never stops in the middle of a word")
	require.Zero(t, count("t", "markdown chars"), "Trickle speaks the rendered text, not the markdown")
	require.Greater(t, count("n", "duplicates"), 0, "the naive region repeats what was already heard")
	require.Greater(t, count("n", "fragments"), 0, "the naive region is heard in fragments")
	require.Greater(t, count("n", "markdown chars"), 0, "the naive region reads the answer's ** and ` aloud")
	// The longest wait from a sentence's end on screen to its announcement:
	// Trickle says a sentence once its end is confirmed, within a second or
	// two; the naive reader is still busy re-reading the whole answer.
	wait := func(side string) float64 {
		t.Helper()
		v := strings.TrimSuffix(metric(t, tab, "#"+side+"-counts", "longest wait"), " ms")
		ms, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err)
		return ms
	}
	require.Positive(t, wait("t"))
	require.Less(t, wait("t"), 5000.0)
	require.Greater(t, wait("n"), wait("t"), "the naive reader lags behind Trickle's announcer")

	// In the browser as in trickle replay, "Answer complete." is said
	// last, at least the announcer's spacing (300 ms) after the answer's
	// last words, never in the same instant (a screen reader could speak
	// it first). The log shows times to 10 ms.
	browsertest.WaitFor(t, tab, 10*time.Second, `(document.querySelector("#t-log li:last-child span")?.textContent ?? "").startsWith("Answer complete.")`)
	type entry struct {
		At     string `json:"at"`
		Status bool   `json:"status"`
	}
	log := browsertest.Eval[[]entry](t, tab, `[...document.querySelectorAll("#t-log li")].map(li => ({at: li.querySelector("time").textContent, status: !!li.querySelector(".tag")}))`)
	require.GreaterOrEqual(t, len(log), 3)
	end := log[len(log)-1]
	require.True(t, end.Status)
	// In hundredths of a second, as the log shows them ("4.32 s"): each
	// time is rounded, so 300 ms apart shows as at least 29 hundredths.
	at := func(e entry) int {
		n, err := strconv.Atoi(strings.Replace(strings.TrimSuffix(e.At, " s"), ".", "", 1))
		require.NoError(t, err, "%q", e.At)
		return n
	}
	for i := len(log) - 2; i >= 0; i-- {
		if !log[i].Status {
			require.GreaterOrEqual(t, at(end)-at(log[i]), 29, "the end status follows the last sentence by ≥ 300 ms: %q then %q", log[i].At, end.At)
			break
		}
	}
	shoot(t, tab, "a11y")
}

// The answer page's Stop button stops the answer on screen and the
// generation on the relay.
func TestAnswerPageStopButtonStopsTheAnswerAndTheModel(t *testing.T) {
	for _, transport := range []string{"sse", "websocket"} {
		t.Run(transport, func(t *testing.T) {
			tab, base := startExamples(t)
			run(t, tab, 30*time.Second,
				chromedp.Navigate(base+"/examples/answer/"),
				chromedp.WaitVisible(chromedp.CSS("#go")),
				chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "sample-100k"),
				chromedp.SetValue(chromedp.CSS(`select[name="_transport"]`), transport),
				chromedp.Click(chromedp.CSS("#go")),
			)
			browsertest.WaitFor(t, tab, 20*time.Second, `document.getElementById("answer").text.length > 200`)
			run(t, tab, 10*time.Second, chromedp.Click(chromedp.CSS("#stop")))
			browsertest.WaitFor(t, tab, 20*time.Second, `document.body.dataset.lastStatus`)
			require.Equal(t, "stopped", browsertest.Eval[string](t, tab, `document.body.dataset.lastStatus`))
			id := browsertest.Eval[string](t, tab, `document.getElementById("answer").streamId`)
			require.NotEmpty(t, id)

			// The relay learns of the stop asynchronously (DELETE or the closed
			// connection): poll its view of the stream.
			info := func() string {
				return browsertest.Eval[string](t, tab, `fetch("/v1/streams/`+id+`/info").then(r => r.text())`)
			}
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(info(), `"upstream_cancelled":true`) {
				require.True(t, time.Now().Before(deadline), "the relay should cancel the generation: %s", info())
				time.Sleep(100 * time.Millisecond)
			}
			require.Less(t, len(browsertest.Eval[string](t, tab, `document.getElementById("answer").text`)), 100000, "the answer stopped early")

			// What the Stop cost: the relay's count of the tokens generated up to
			// the cancel reaches the element after the end, goes into its message
			// and onto the page.
			browsertest.WaitFor(t, tab, 10*time.Second, `!document.getElementById("cost").hidden`)
			var relay struct {
				Usage struct {
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(info()), &relay))
			n := relay.Usage.CompletionTokens
			require.Positive(t, n)
			require.Equal(t, fmt.Sprintf("Stopped after %d tokens.", n), browsertest.Eval[string](t, tab, `document.getElementById("cost").textContent`))
			require.Equal(t, n, browsertest.Eval[int](t, tab, `document.getElementById("answer").message.usage.output_tokens`))
			require.True(t, browsertest.Eval[bool](t, tab, `document.getElementById("answer").message.incomplete`))
		})
	}
}

// The lab's switch reaches the widget: "complete" says the answer once, at
// the end; "off" says nothing but the statuses.
func TestScreenReaderLabSwitchChangesWhatTrickleSays(t *testing.T) {
	tab, base := startExamples(t)
	for _, tc := range []struct {
		mode string
		max  int
	}{
		{"complete", 1},
		{"off", 0},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			run(t, tab, 30*time.Second,
				chromedp.Navigate(base+"/examples/a11y/"),
				chromedp.WaitVisible(chromedp.CSS("#go")),
				chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
				chromedp.SetValue(chromedp.CSS(`input[name="gap_ms"]`), "2"),
				chromedp.Click(chromedp.CSS(`input[name="_mode"][value="`+tc.mode+`"]`)),
				chromedp.Click(chromedp.CSS("#go")),
			)
			browsertest.WaitFor(t, tab, 45*time.Second, `document.body.dataset.done === "1"`)
			n, err := strconv.Atoi(metric(t, tab, "#t-counts", "announcements"))
			require.NoError(t, err)
			require.LessOrEqual(t, n, tc.max)
			if tc.mode == "complete" {
				require.Equal(t, 1, n, "the whole answer, once")
			}
			require.Positive(t, browsertest.Eval[int](t, tab, `document.querySelectorAll('#t-log .tag[data-kind="status"]').length`),
				"statuses are still said")
		})
	}
}

// readmeSnippet is the HTML block that follows the any-page-snippet marker
// in README.md: what the README tells people to paste into their page.
func readmeSnippet(t *testing.T) string { return readmeBlock(t, "any-page-snippet") }

// readmeBlock is the HTML block that follows the marker in README.md.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "<!-- "+marker)
	require.True(t, ok, "README.md lost its %s marker", marker)
	_, after, ok = strings.Cut(after, "```html\n")
	require.True(t, ok, "no html block after the marker")
	snippet, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	return snippet
}

// The README's <trickle-chat> snippet on a page: a question about the
// weather runs the snippet's tool and its result reaches the answer; the
// thread it saved is shown again after a reload, without a request.
func TestTheReadmeChatSnippetRunsItsToolAndShowsTheSavedThreadAgain(t *testing.T) {
	tab, _ := startExamples(t)
	snippet := readmeBlock(t, "chat-snippet")
	// The snippet is for a page the relay serves; this one is on another
	// origin, so the relay's paths get its address, and nothing else changes.
	page := strings.NewReplacer(`src="/trickle/`, `src="__RELAY__/trickle/`, `endpoint="/v1/`, `endpoint="__RELAY__/v1/`).Replace(snippet)
	require.NotEqual(t, snippet, page)
	pageURL, _ := otherOrigin(t, "<!doctype html><meta charset=utf-8><title>my chat</title>\n"+page, nil)

	run(t, tab, 30*time.Second, chromedp.Navigate(pageURL+"/"), chromedp.WaitVisible(chromedp.CSS(`trickle-chat textarea`)),
		chromedp.Evaluate[chromedp.Void](`localStorage.clear(); void 0`))
	run(t, tab, 10*time.Second,
		chromedp.Focus(`trickle-chat textarea`),
		chromedp.SendKeys(`trickle-chat textarea`, "What is the weather in Lyon?"),
		chromedp.KeyEvent(kb.Enter),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `(() => { const c = document.querySelector("trickle-chat");
		return !c.busy && c.messages.length === 4; })()`)
	msgs := browsertest.Eval[[]map[string]any](t, tab, `document.querySelector("trickle-chat").messages`)
	require.Equal(t, "tool", msgs[2]["role"])
	require.Contains(t, msgs[3]["content"], `"temperature":18`, "the tool's result reached the model's answer")
	require.Equal(t, "complete", msgs[3]["status"])

	run(t, tab, 30*time.Second, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`trickle-chat textarea`)))
	browsertest.WaitFor(t, tab, 20*time.Second, `document.querySelector("trickle-chat").messages.length === 4 &&
		document.querySelector("trickle-chat [data-trickle-chat=turns]").textContent.includes('"temperature":18')`)
	require.Equal(t, msgs, browsertest.Eval[[]map[string]any](t, tab, `document.querySelector("trickle-chat").messages`))
	require.Equal(t, 0, browsertest.Eval[int](t, tab, `performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/")).length`),
		"a stored thread is shown without a request")
}

// A chat on a page of another origin under a strict Content-Security-Policy
// (scripts, connections and styles from the relay only, its worker from a
// blob: URL, no inline script or style): two turns, each sending the whole
// history, in every dialect the simulated model speaks, over SSE and the
// WebSocket.
func TestAChatConversesInEveryDialectOverBothTransportsUnderAStrictPolicy(t *testing.T) {
	tab, _ := startExamples(t)
	csp := "default-src 'none'; script-src __RELAY__ 'wasm-unsafe-eval'; connect-src __RELAY__ ws://127.0.0.1:*; " +
		"worker-src blob:; style-src __RELAY__; img-src 'none'"
	for _, dialect := range []string{"openai", "anthropic", "responses", "gemini", "ollama", "plain"} {
		for _, transport := range []string{"sse", "websocket"} {
			t.Run(dialect+"/"+transport, func(t *testing.T) {
				pageURL, _ := otherOrigin(t, `<!doctype html><meta charset=utf-8><title>a strict page</title>
<link rel="icon" href="data:,">
<script type="module" src="__RELAY__/trickle/trickle.js"></script>
<trickle-chat endpoint="__RELAY__/v1/chat/completions?dialect=`+dialect+`&answer=short&gap_ms=1&ttft_ms=5" transport="`+transport+`"></trickle-chat>`,
					map[string]string{"Content-Security-Policy": csp})
				run(t, tab, 30*time.Second, chromedp.Navigate(pageURL+"/"), chromedp.WaitVisible(chromedp.CSS(`trickle-chat textarea`)))
				got := browsertest.Eval[map[string]any](t, tab, `(async () => {
					const c = document.querySelector("trickle-chat");
					await c.send("hello");
					await c.send("and again");
					const m = c.messages;
					const answers = [...c.querySelectorAll("trickle-answer")];
					return { roles: m.map((x) => x.role).join(","), statuses: m.filter((x) => x.role === "assistant").map((x) => x.status).join(","),
						lengths: m.filter((x) => x.role === "assistant").map((x) => x.content.length),
						transports: answers.map((a) => a.getAttribute("transport")).join(","),
						threads: answers.map((a) => a.metrics?.thread).join(","),
						sheet: document.querySelector("[data-trickle-css]")?.localName };
				})()`)
				require.Equal(t, "user,assistant,user,assistant", got["roles"])
				require.Equal(t, "complete,complete", got["statuses"])
				for _, n := range got["lengths"].([]any) {
					require.Greater(t, n, 50.0, "each answer has its text")
				}
				require.Equal(t, transport+","+transport, got["transports"])
				require.Equal(t, "worker,worker", got["threads"], "the worker starts under the policy")
				require.Equal(t, "link", got["sheet"], "the stylesheet's file, not an inline copy the policy refuses")
			})
		}
	}
}

// The README's snippet, pasted into a page of another origin, loads the
// widget from the relay and streams an answer, as the README says, once
// the relay allows that origin (--allow-origin).
func TestTheReadmeSnippetAnswersOnAPageOfAnotherOrigin(t *testing.T) {
	tab, _ := startExamples(t)
	snippet := readmeSnippet(t)
	require.Contains(t, snippet, "http://127.0.0.1:8080/")
	pageURL, relayURL := otherOrigin(t, "<!doctype html><meta charset=utf-8><title>my page</title>\n"+
		strings.ReplaceAll(snippet, "http://127.0.0.1:8080", "__RELAY__"), nil)
	require.NotEqual(t, pageURL, relayURL, "the page and the relay must be different origins")

	run(t, tab, 30*time.Second,
		chromedp.Navigate(pageURL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#ask button`)),
		chromedp.Evaluate[chromedp.Void](`const a = document.querySelector("trickle-answer");
			a.addEventListener("trickle-end", (e) => { document.body.dataset.end = e.detail.status });
			a.addEventListener("trickle-error", (e) => { document.body.dataset.error = e.detail.message }); void 0`),
		chromedp.Click(chromedp.CSS(`#ask button`)),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.end || document.body.dataset.error`)
	require.Empty(t, browsertest.Eval[string](t, tab, `document.body.dataset.error || ""`))
	require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.body.dataset.end`),
		browsertest.Eval[string](t, tab, `document.querySelector('[data-trickle="notice-text"]').textContent`))
	require.NotEmpty(t, browsertest.Eval[string](t, tab, `document.querySelector("trickle-answer").text`))
	require.NotEmpty(t, browsertest.Eval[string](t, tab, `document.querySelector('trickle-answer [data-trickle="content"]').innerHTML`))
	require.Equal(t, thread, browsertest.Eval[string](t, tab, `document.querySelector("trickle-answer").metrics.thread`),
		"from another origin too, the widget's Go side runs in a worker (a blob: bootstrap)")

	// With transport="websocket", as the README says, from the same page.
	run(t, tab, 10*time.Second,
		chromedp.Evaluate[chromedp.Void](`delete document.body.dataset.end;
			document.querySelector("trickle-answer").setAttribute("transport", "websocket"); void 0`),
		chromedp.Click(chromedp.CSS(`#ask button`)),
	)
	browsertest.WaitFor(t, tab, 30*time.Second, `document.body.dataset.end || document.body.dataset.error`)
	require.Empty(t, browsertest.Eval[string](t, tab, `document.body.dataset.error || ""`))
	require.Equal(t, "complete", browsertest.Eval[string](t, tab, `document.body.dataset.end`))
}

// The README's snippet on a page whose origin the relay was not started
// with: the page still gets the element (the widget's files are public),
// and ask() resolves "failed" with a message that names the page's origin
// and the flag to add, over SSE and over WebSocket; the relay logs the
// refused origin once, at warn.
func TestTheReadmeSnippetOnARefusedOriginSaysWhichOriginToAllow(t *testing.T) {
	tab, _ := startExamples(t)
	page := httptest.NewServer(nil)
	t.Cleanup(page.Close)
	var logs testlog.Buffer
	_, rl := relaytest.Start(t, relay.WithWidget(assets.Widget()),
		relay.WithSimDefaults(relay.SimDefaults{TokenChars: 16}), relay.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))),
		// As trickle serve phrases it.
		relay.WithOriginRefusal(func(e *relay.OriginError) string {
			return e.Error() + ": start the relay with --allow-origin " + e.Origin
		}))
	html := "<!doctype html><meta charset=utf-8><title>my page</title>\n" + strings.ReplaceAll(readmeSnippet(t), "http://127.0.0.1:8080", rl.URL)
	page.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, html)
	})
	origin := page.URL // httptest's URL is the origin: scheme://host:port
	require.NotEqual(t, origin, rl.URL)

	run(t, tab, 30*time.Second,
		chromedp.Navigate(page.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#ask button`)),
	)
	browsertest.WaitFor(t, tab, 20*time.Second, `customElements.get("trickle-answer") !== undefined`)
	require.Equal(t, "function", browsertest.Eval[string](t, tab, `typeof document.querySelector("trickle-answer").ask`),
		"the element is defined: its script loaded from the relay")

	for _, transport := range []string{"sse", "websocket"} {
		t.Run(transport, func(t *testing.T) {
			run(t, tab, 10*time.Second,
				chromedp.Evaluate[chromedp.Void](`{
					const a = document.querySelector("trickle-answer");
					a.setAttribute("transport", "`+transport+`");
					delete document.body.dataset.asked;
					a.addEventListener("trickle-error", (e) => { document.body.dataset.error = e.detail.detail }, { once: true });
					a.ask(document.querySelector("#ask input").value).then((s) => { document.body.dataset.asked = s });
				} void 0`),
			)
			browsertest.WaitFor(t, tab, 20*time.Second, `document.body.dataset.asked !== undefined`)
			require.Equal(t, "failed", browsertest.Eval[string](t, tab, `document.body.dataset.asked`))
			msg := browsertest.Eval[string](t, tab, `document.body.dataset.error || ""`)
			require.Contains(t, msg, origin, "the developer's detail names the page's origin")
			require.Contains(t, msg, "--allow-origin "+origin, "and the flag to add")
			require.NotContains(t, msg, `{"error"`, "the relay's sentence, not its JSON body")
			notice := browsertest.Eval[string](t, tab, `document.querySelector('trickle-answer [data-trickle="notice-text"]').textContent`)
			want := map[string]string{
				"sse":       "The server refused the request (403).",
				"websocket": "The relay serving this answer failed.", // the relay's refusal comes as its terminal status (browsers show a page nothing of a refused handshake): the relay's, not the model's
			}[transport]
			require.Equal(t, want, notice, "the reader gets a sentence, not the developer's instructions")
		})
	}

	n := 0
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, `"msg":"origin refused`) {
			n++
			require.Contains(t, line, `"level":"WARN"`)
			require.Contains(t, line, `"origin":"`+origin+`"`)
		}
	}
	require.Equal(t, 1, n, "the refused origin is logged once: %s", logs.String())
}

// otherOrigin serves html on a new origin with the given response headers,
// and a relay on another that allows it; it returns both base URLs. The
// relay's address is in the page as __RELAY__.
func otherOrigin(t *testing.T, html string, headers map[string]string) (pageURL, relayURL string) {
	t.Helper()
	pg := httptest.NewServer(nil)
	t.Cleanup(pg.Close)
	_, rl := relaytest.Start(t, relay.WithWidget(assets.Widget()), relay.WithAllowedOrigins(pg.URL),
		relay.WithSimDefaults(relay.SimDefaults{TokenChars: 16}))
	body := strings.ReplaceAll(html, "__RELAY__", rl.URL)
	pg.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, strings.ReplaceAll(v, "__RELAY__", rl.URL))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	})
	return pg.URL, rl.URL
}

// A page whose Content-Security-Policy forbids workers still gets its
// answer: the widget falls back to the main thread, says so once on the
// console, and its metrics say where it ran.
func TestAPageThatForbidsWorkersFallsBackToTheMainThreadAndAnswers(t *testing.T) {
	tab, _ := startExamples(t)
	pageURL, _ := otherOrigin(t, `<!doctype html><meta charset=utf-8><title>strict page</title>
<script type="module" src="__RELAY__/trickle/trickle.js"></script>
<trickle-answer endpoint="__RELAY__/v1/chat/completions?answer=short"></trickle-answer>`,
		map[string]string{"Content-Security-Policy": "worker-src 'none'"})

	var mu sync.Mutex
	var warnings []string
	logs, cancel := context.WithCancel(tab)
	defer cancel()
	go func() {
		for ev, err := range chromedp.Events(logs, runtime.ConsoleAPICalled) {
			if err != nil {
				return
			}
			if ev.Type == runtime.ConsoleAPICalledTypeWarning && len(ev.Args) > 0 {
				mu.Lock()
				warnings = append(warnings, string(ev.Args[0].Value))
				mu.Unlock()
			}
		}
	}()
	run(t, tab, 30*time.Second, chromedp.Navigate(pageURL+"/"))
	got := browsertest.Eval[[]string](t, tab, `(async () => {
		await customElements.whenDefined("trickle-answer");
		const a = document.querySelector("trickle-answer");
		const status = await a.ask("hi");
		return [status, a.metrics.thread, String(a.text.length > 0)];
	})()`)
	require.Equal(t, []string{"complete", "main", "true"}, got)
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, w := range warnings {
		if strings.Contains(w, "main thread") {
			n++
			require.Contains(t, w, "Worker", "the console says why")
		}
	}
	want := 1
	if thread == "main" {
		want = 0 // worker="off" (TRICKLE_WIDGET_THREAD=main) is asked for, not a fallback to explain
	}
	require.Equal(t, want, n, "the fallback is said once: %q", warnings)
}

// The widget's stylesheet comes inside trickle.js: a page of another origin
// loads no stylesheet file for it, and gets the rules first in its <head>
// (so its own rules win at equal specificity). A page whose
// Content-Security-Policy refuses inline styles gets the stylesheet's file
// instead, in the same place, with the same effect.
func TestTheStylesheetComesInsideTheScriptOrFromItsFileUnderAStrictPolicy(t *testing.T) {
	tab, _ := startExamples(t)
	for _, tc := range []struct {
		name, csp, element, files string
	}{
		{"no policy", "", "style", "0"},
		{"style-src without unsafe-inline", "style-src 'self' http://127.0.0.1:*", "link", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			headers := map[string]string{}
			if tc.csp != "" {
				headers["Content-Security-Policy"] = tc.csp
			}
			pageURL, _ := otherOrigin(t, `<!doctype html><meta charset=utf-8><title>a page</title>
<link rel="icon" href="data:,">
<script type="module" src="__RELAY__/trickle/trickle.js"></script>
<trickle-answer endpoint="__RELAY__/v1/chat/completions?answer=short"></trickle-answer>`, headers)
			run(t, tab, 30*time.Second, chromedp.Navigate(pageURL+"/"))
			got := browsertest.Eval[[]string](t, tab, `(async () => {
				await customElements.whenDefined("trickle-answer");
				const a = document.querySelector("trickle-answer");
				const sheet = document.querySelector("[data-trickle-css]");
				if (!sheet.sheet) await new Promise((r) => sheet.addEventListener("load", r, { once: true }));
				const status = await a.ask("hi");
				const files = performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname.endsWith(".css")).length;
				return [sheet.localName, String(document.head.firstElementChild === sheet), String(files),
					getComputedStyle(a).maxHeight, getComputedStyle(a.querySelector('[data-trickle="jump"]')).display, status];
			})()`)
			require.Equal(t, []string{tc.element, "true", tc.files, "576px", "none", "complete"}, got,
				"[element, first in head, stylesheet files loaded, max-height (36rem), the hidden jump button's display, status]")
			if tc.element == "style" {
				var m struct {
					CSS string `json:"css"`
				}
				raw, err := fs.ReadFile(assets.Widget(), "manifest.json")
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(raw, &m))
				file, err := fs.ReadFile(assets.Widget(), m.CSS)
				require.NoError(t, err)
				require.Equal(t, string(file), browsertest.Eval[string](t, tab, `document.querySelector("style[data-trickle-css]").textContent`),
					"the loader's copy is the stylesheet's file")
			}
		})
	}
}
