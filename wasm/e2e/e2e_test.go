//go:build !(js && wasm)

// Package e2e_test runs <trickle-answer> in a real headless Chromium
// (chromedp) against the relay on loopback: the built widget from
// assets/widget, the relay's simulated model, and outside oracles — the
// canned answer's text, render.Convert for the HTML, a11y.Units for what a
// screen reader should hear, the relay's own stream info for Stop.
package e2e_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

// page is the test page: the loader, one element, and traps that record
// anything the XSS corpus might manage to run.
const testPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>trickle e2e</title>
<script>
window.__pwned = 0;
window.__events = [];
window.alert = window.confirm = window.prompt = function () { window.__pwned++; };
</script>
<script type="module" src="/trickle/trickle.js"></script>
<style>body { margin: 0 } #a { --trickle-max-height: 240px; }</style>
</head><body>
<trickle-answer id="a"__WORKER__></trickle-answer>
<script>
for (const name of ["trickle-start", "trickle-first-token", "trickle-tool-call", "trickle-end", "trickle-error"]) {
  document.addEventListener(name, (ev) => window.__events.push({ type: ev.type, detail: ev.detail }));
}
</script>
</body></html>`

// thread is where the suite expects the widget's Go side to run: "worker"
// (the default), or "main" with TRICKLE_WIDGET_THREAD=main, which gives the
// test page's element worker="off" (make test runs the suite both ways).
var thread = cmp.Or(os.Getenv("TRICKLE_WIDGET_THREAD"), "worker")

// pageHTML is the test page for the suite's thread.
func pageHTML() string {
	attr := ""
	if thread == "main" {
		attr = ` worker="off"`
	}
	return strings.Replace(testPage, "__WORKER__", attr, 1)
}

var (
	relayOnce sync.Once
	relayURL  string
)

// server starts the relay (widget included) with the test page at /e2e, once
// for the package, on 127.0.0.1.
func server(t testing.TB) string {
	t.Helper()
	relayOnce.Do(func() { relayURL = startRelay() })
	return relayURL
}

// startRelay serves a new relay with the test page at /e2e and the custom
// backend at /custom/, on 127.0.0.1, until the test binary exits.
func startRelay(opts ...relay.Option) string {
	srv, err := relay.New(append([]relay.Option{
		relay.WithWidget(assets.Widget()),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 2 * time.Millisecond, TokenChars: 4}),
	}, opts...)...)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, pageHTML())
	})
	mux.HandleFunc("/custom/", custom)
	mux.Handle("/", srv.Handler())
	return httptest.NewServer(mux).URL
}

var (
	browserMu     sync.Mutex
	browser       context.Context
	stopBrowser   context.CancelFunc
	browserDir    string
	browserFailed error
)

// TestMain stops the package's shared browser at the end.
func TestMain(m *testing.M) {
	code := m.Run()
	if stopBrowser != nil {
		stopBrowser()
		os.RemoveAll(browserDir)
	}
	os.Exit(code)
}

// tab opens the test page in a new tab of the package's browser (started by
// the first test that needs one: one browser, a fresh tab per test), with
// the widget loaded.
func tab(t testing.TB) context.Context {
	t.Helper()
	return tabAt(t, "")
}

// tabAt is tab on another relay (base URL; "" for the package's).
func tabAt(t testing.TB, base string) context.Context {
	t.Helper()
	if _, err := fs.Stat(assets.Widget(), "trickle.js"); err != nil {
		t.Fatal("assets/widget has no trickle.js: run make widget (go run ./wasm/internal/build -out assets/widget), then rerun the tests")
	}
	if base == "" {
		base = server(t)
	}
	ctx := browserTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/e2e")))
	widgetReady(t, ctx, browsertest.JSString("/trickle/trickle.js"))
	require.True(t, browsertest.Eval[bool](t, ctx, recordSaid))
	return ctx
}

// widgetReady waits until the page's <trickle-answer> is defined and the
// widget loaded from loader (the page's trickle.js) is ready.
func widgetReady(t testing.TB, ctx context.Context, loader string) {
	t.Helper()
	require.True(t, browsertest.Eval[bool](t, ctx, `(async () => {
		await customElements.whenDefined("trickle-answer");
		const { ready } = await import(`+loader+`);
		await ready();
		return true;
	})()`))
}

// recordSaid makes the page record what each announcer said, as a screen
// reader hears a log: the nodes added to it, in order. The page trims what
// was said from the front of the log (answer.js, trimLog), one node at a
// time; a new answer empties it at once (one removal of every node, with
// nothing before or after them), and the record starts again.
const recordSaid = `(() => {
	window.__said = new Map();
	new MutationObserver((records) => {
		for (const r of records) {
			const n = r.target;
			if (n.nodeType !== 1 || n.dataset.trickle !== "announcer") continue;
			if (r.removedNodes.length > 0 && r.previousSibling === null && r.nextSibling === null) window.__said.set(n, []);
			const list = window.__said.get(n) ?? [];
			for (const a of r.addedNodes) if (a.nodeType === 1) list.push(a.textContent);
			window.__said.set(n, list);
		}
	}).observe(document, { childList: true, subtree: true });
	return true;
})()`

// browserTab is a new blank tab of the package's browser.
func browserTab(t testing.TB) context.Context {
	t.Helper()
	path := browsertest.Available(t)
	browserMu.Lock()
	if browser == nil && browserFailed == nil {
		browserDir, browserFailed = os.MkdirTemp("", "trickle-e2e-chromium-")
		if browserFailed == nil {
			browser, stopBrowser = browsertest.Launch(context.Background(), path, browserDir)
			browserFailed = chromedp.Do(browser)
		}
	}
	b, err := browser, browserFailed
	browserMu.Unlock()
	require.NoError(t, err, "starting %s", path)
	return browsertest.Timeout(t, browsertest.Tab(t, b), 90*time.Second)
}

// result is the element's state after an answer.
type result struct {
	Status      string            `json:"status"`
	Text        string            `json:"text"`
	HTML        string            `json:"html"`
	Tail        bool              `json:"tail"`
	Notice      string            `json:"notice"`
	NoticeShown bool              `json:"noticeShown"`
	RetryShown  bool              `json:"retryShown"`
	Thinking    string            `json:"thinking"`
	ThinkShown  bool              `json:"thinkingShown"`
	Tools       string            `json:"tools"`
	Announced   []string          `json:"announced"`
	StatusText  string            `json:"statusText"` // what the screen reader heard last (sr-status)
	ShownText   string            `json:"shownText"`  // the visible status line
	StreamID    string            `json:"streamId"`
	Metrics     map[string]any    `json:"metrics"`
	Message     *message          `json:"message"`
	Events      []json.RawMessage `json:"events"`
	EventTypes  []string          `json:"eventTypes"`
}

const collect = `(() => {
	const a = document.getElementById("a");
	const part = (p) => a.querySelector('[data-trickle="' + p + '"]');
	return {
		status: a.status, text: a.text,
		// The answer's blocks, without the toolbars the page adds beside
		// settled code blocks and tables (reading_blocks_test.go tests them),
		// out of the settled groups (settled_test.go tests those).
		html: (() => { const c = part("content").cloneNode(true);
			for (const b of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) b.remove();
			for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
			return c.innerHTML; })(),
		tail: !!part("tail"),
		notice: part("notice-text").textContent, noticeShown: !part("notice").hidden,
		retryShown: !part("retry").hidden,
		thinking: part("thinking-text").textContent, thinkingShown: !part("thinking").hidden,
		tools: part("tools").innerHTML,
		// What the announcer said of this answer: what was added to it
		// (the page trims the log; window.__said, from tab, records).
		announced: window.__said?.get(part("announcer")) ?? [...part("announcer").children].map((p) => p.textContent),
		statusText: part("sr-status").textContent,
		shownText: part("status").textContent,
		streamId: a.streamId,
		metrics: a.metrics,
		message: a.message,
		events: window.__events,
		eventTypes: window.__events.map((e) => e.type),
	};
})()`

// weatherTool declares get_weather, the tool the canned tool-call answer
// calls: the simulated model, like a real one, calls only declared tools.
const weatherTool = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",` +
	`"properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]},"include_forecast":{"type":"boolean"}},"required":["location"]}}}`

// withWeather is a request body (for ask) asking prompt with get_weather
// declared.
func withWeather(prompt string) string {
	q, _ := json.Marshal(prompt)
	return `{"messages":[{"role":"user","content":` + string(q) + `}],"tools":[` + weatherTool + `]}`
}

// ask sets the element's attributes, asks, waits for the end and collects.
// A prompt that is a JSON object (withWeather) is asked as the request body.
func ask(t testing.TB, ctx context.Context, attrs map[string]string, prompt string) result {
	t.Helper()
	var set strings.Builder
	for k, v := range attrs {
		fmt.Fprintf(&set, "a.setAttribute(%q, %q);\n", k, v)
	}
	arg := browsertest.JSString(prompt)
	if strings.HasPrefix(prompt, "{") && json.Valid([]byte(prompt)) {
		arg = prompt
	}
	status := browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		`+set.String()+`
		return await a.ask(`+arg+`);
	})()`)
	r := waitAnnouncer(t, ctx)
	require.Equal(t, status, r.Status, "ask() resolves with the final status")
	require.Equal(t, thread, r.Metrics["thread"], "the widget's Go side runs where the suite expects")
	return r
}

// waitAnnouncer collects once the screen reader has heard the final status.
// The announcer says it after every sentence of the answer (a11y's End:
// the status waits for the queue to empty, and the page writes it at least
// a11y.MinGap after the sentence before it), and the answer's first frame
// empties the status region: so a final status there means the announcer
// region holds all it will say for this answer.
func waitAnnouncer(t testing.TB, ctx context.Context) result {
	t.Helper()
	// Not the start status, nor the stall's: on a loaded machine a stream
	// can go quiet long enough to be told stalled before it ends.
	heard := `(() => { const s = document.querySelector('#a [data-trickle="sr-status"]').textContent;
		return s !== "" && s !== ` + browsertest.JSString(a11y.StatusResponding) + ` && s !== ` + browsertest.JSString(element.StallNotice) + `; })()`
	deadline := time.Now().Add(15 * time.Second)
	for !browsertest.Eval[bool](t, ctx, heard) {
		require.True(t, time.Now().Before(deadline), "the final status was never said: %+v", browsertest.Eval[result](t, ctx, collect))
		time.Sleep(20 * time.Millisecond)
	}
	return browsertest.Eval[result](t, ctx, collect)
}

// convert is render.Convert, the one-shot oracle, for options the test
// knows are good.
func convert(t testing.TB, text string, opts ...render.Option) string {
	t.Helper()
	html, err := render.Convert(text, opts...)
	require.NoError(t, err)
	return html
}

// document is render.NewDocument for options the test knows are good.
func document(t testing.TB, opts ...render.Option) *render.Document {
	t.Helper()
	d, err := render.NewDocument(opts...)
	require.NoError(t, err)
	return d
}

// sameDOM checks that the content's HTML is render.Convert(text): both are
// serialized by the same browser (parsing normalizes <br /> to <br> and the
// like), so the comparison is byte for byte after one parse of each.
func sameDOM(t testing.TB, ctx context.Context, text, html string) {
	t.Helper()
	want := convert(t, text, element.RenderOptions(render.Policy{SameOrigin: server(t)})...)
	normalized := browsertest.Eval[string](t, ctx, `(() => {
		const t = document.createElement("template");
		t.innerHTML = `+browsertest.JSString(want)+`;
		return t.innerHTML;
	})()`)
	require.Equal(t, normalized, html, "the streamed DOM equals the one-shot render of the final text")
}

func canned(t testing.TB, name string) sim.Answer {
	a, ok := sim.Lookup(name)
	require.True(t, ok, name)
	return a
}

func TestAnAnswerStreamsCompletesAndEqualsTheOneShotRender(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short"}, "reverse a string in Go")

	require.Equal(t, "complete", r.Status)
	require.Equal(t, canned(t, "short").Text, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	require.False(t, r.Tail, "the live tail is gone once everything settled")
	require.False(t, r.NoticeShown)
	require.NotEmpty(t, r.StreamID)
	require.Equal(t, []string{"trickle-start", "trickle-first-token", "trickle-end"}, r.EventTypes)
	var end struct {
		Detail struct {
			Status  string  `json:"status"`
			Metrics Metrics `json:"metrics"`
		} `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(r.Events[2], &end))
	require.Equal(t, "complete", end.Detail.Status)
	m := end.Detail.Metrics
	require.Greater(t, m.Tokens, 10)
	require.Greater(t, m.Bytes, len(r.Text))
	require.Greater(t, m.TTFT, 0.0)
	require.GreaterOrEqual(t, m.TTFT, m.TTFB)
	require.Greater(t, m.Frames, 0)
	require.Less(t, m.Frames, m.Tokens, "frames are batched, never one per token")
}

// message mirrors el.message.
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Status     string     `json:"status"`
	Incomplete bool       `json:"incomplete"`
	ToolCalls  []toolCall `json:"tool_calls"`
}

type toolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Raw       string          `json:"raw"`
	Complete  bool            `json:"complete"`
}

// Metrics mirrors the widget's metrics JSON.
type Metrics struct {
	TTFB       float64 `json:"ttfb_ms"`
	TTFT       float64 `json:"ttft_ms"`
	Tokens     int     `json:"tokens"`
	Bytes      int     `json:"bytes"`
	Frames     int     `json:"frames"`
	Reconnects int     `json:"reconnects"`
	Buffering  string  `json:"buffering"`
}

func TestEveryDialectOfTheSimulatedModelRendersTheSameAnswer(t *testing.T) {
	ctx := tab(t)
	want := canned(t, "tool-call")
	for _, d := range sim.Dialects() {
		t.Run(d.String(), func(t *testing.T) {
			r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=tool-call&gap_ms=0.5&dialect=" + d.String()}, withWeather("weather"))
			require.Equal(t, "complete", r.Status)
			require.Equal(t, want.Text, r.Text)
			sameDOM(t, ctx, r.Text, r.HTML)
			// The events of this ask: from its trickle-start (the tab's
			// events gather over the subtests).
			last := 0
			for i, typ := range r.EventTypes {
				if typ == "trickle-start" {
					last = i
				}
			}
			r.EventTypes, r.Events = r.EventTypes[last:], r.Events[last:]
			require.NotNil(t, r.Message)
			require.Equal(t, want.Text, r.Message.Content, "el.message is the answer")
			require.Equal(t, "complete", r.Message.Status)
			require.False(t, r.Message.Incomplete)
			if d == "plain" {
				require.Empty(t, r.Tools, "the plain dialect carries text only")
				require.Empty(t, r.Message.ToolCalls)
				require.NotContains(t, r.EventTypes, "trickle-tool-call")
				return
			}
			require.Contains(t, r.Tools, "<p>Called <code>get_weather</code></p>", "a finished call says it was called")
			require.NotContains(t, r.Tools, "Calling", "a finished call never reads as one in progress")
			require.Contains(t, r.Tools, "Lyon, France", "the complete arguments are shown")
			require.Len(t, r.Message.ToolCalls, 1)
			call := r.Message.ToolCalls[0]
			require.Equal(t, "get_weather", call.Name)
			require.True(t, call.Complete)
			require.Contains(t, string(call.Arguments), "Lyon, France", "the arguments parsed")
			var told []message
			for i, typ := range r.EventTypes {
				if typ == "trickle-tool-call" {
					var ev struct{ Detail toolCall }
					require.NoError(t, json.Unmarshal(r.Events[i], &ev))
					require.Equal(t, call.Name, ev.Detail.Name)
					require.JSONEq(t, string(call.Arguments), string(ev.Detail.Arguments))
					told = append(told, message{})
				}
			}
			require.Len(t, told, 1, "trickle-tool-call fires once, when the arguments complete")
		})
	}
}

func TestThinkingGoesInACollapsedPanelAndNotInTheAnswer(t *testing.T) {
	ctx := tab(t)
	want := canned(t, "thinking")
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=thinking&dialect=anthropic"}, "think")
	require.Equal(t, "complete", r.Status)
	require.Equal(t, want.Text, r.Text)
	require.True(t, r.ThinkShown)
	require.Equal(t, want.Thinking, strings.TrimSpace(r.Thinking))
	// trickle-first-token comes with the answer's first token: the time to
	// the first token of any kind (the reasoning's) and to the answer's own.
	var first struct {
		Detail struct {
			TTFT  float64 `json:"ttft_ms"`
			TTFAT float64 `json:"ttfat_ms"`
		} `json:"detail"`
	}
	require.Equal(t, "trickle-first-token", r.EventTypes[1])
	require.NoError(t, json.Unmarshal(r.Events[1], &first))
	require.Greater(t, first.Detail.TTFT, 0.0)
	// The reasoning streamed before the answer, but its last token and the
	// answer's first can arrive in one read on a loaded machine: the two
	// readings are then equal, never in the other order.
	require.GreaterOrEqual(t, first.Detail.TTFAT, first.Detail.TTFT, "the answer's first token cannot come before the first token of any kind")
	require.Equal(t, r.Metrics["ttfat_ms"], first.Detail.TTFAT)
	open := browsertest.Eval[bool](t, ctx, `document.querySelector('[data-trickle="thinking"] details').open`)
	require.False(t, open, "thinking is collapsed by default")
	sameDOM(t, ctx, r.Text, r.HTML)
}
