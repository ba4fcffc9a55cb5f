//go:build !(js && wasm)

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/sim"
)

// The "done when" (issue 21), as one test: the README's snippet
// and a page with its own Node backend work unchanged under a path prefix,
// under Tailwind's preflight, with the relay's stream, a plain text stream
// and an AI SDK UI message stream; Stop reaches the relay under /ai/; no
// request carries a field the page did not give; a 401 with an HTML body
// shows one plain sentence.

// anypageModules is the AI SDK (the `ai` package) at the exact version
// testdata/anypage/package-lock.json pins, for backend.mjs (make installs
// it with npm ci).
const anypageModules = "testdata/anypage/node_modules"

// preflightV4 is how a Tailwind v4 page loads its preflight: into the base
// layer, from the real package (testdata/resets).
func preflightV4(href string) string {
	return `<style>@layer theme, base, components, utilities; @import url(` + browsertest.JSString(href) + `) layer(base);</style>`
}

// needAnypage skips (fails under CI) when backend.mjs's packages are not
// installed.
func needAnypage(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(anypageModules, ".package-lock.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: make test installs it", anypageModules)
		}
		t.Skipf("%s is missing: run npm ci in wasm/e2e/testdata/anypage", anypageModules)
	}
}

// untouchedTab is a new tab for a page the test did not write: under
// TRICKLE_WIDGET_THREAD=main every element gets worker="off" before the
// widget's module runs (readyState turns interactive after the parse,
// before module scripts run), so the page itself stays as it is.
func untouchedTab(t *testing.T) context.Context {
	t.Helper()
	ctx := browserTab(t)
	if thread == "main" {
		_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `document.addEventListener("readystatechange", () => {
				if (document.readyState === "interactive") for (const el of document.querySelectorAll("trickle-answer")) el.setAttribute("worker", "off");
			});`,
		})
		require.NoError(t, err)
	}
	return ctx
}

// watchEvents makes the page keep the element events in window.__events
// (what collect reads), as the suite's own test page does.
const watchEvents = `(() => {
	window.__events = [];
	for (const name of ["trickle-start", "trickle-first-token", "trickle-tool-call", "trickle-end", "trickle-error"]) {
		document.addEventListener(name, (ev) => window.__events.push({ type: ev.type, detail: ev.detail }));
	}
	return true;
})()`

// of rewrites one of the suite's scripts about element #a (collect,
// readerView) to be about the element sel selects.
func of(script, sel string) string {
	out := strings.Replace(script, `document.getElementById("a")`, `document.querySelector(`+browsertest.JSString(sel)+`)`, 1)
	if out == script {
		panic("the script names no element #a")
	}
	return out
}

// heardEnd waits until the element sel selects has said its final status
// to the screen reader (waitAnnouncer, for any element), and collects.
func heardEnd(t *testing.T, ctx context.Context, sel string) result {
	t.Helper()
	browsertest.WaitFor(t, ctx, 30*time.Second, `(() => { const s = document.querySelector(`+browsertest.JSString(sel+` [data-trickle="sr-status"]`)+`).textContent;
		return s !== "" && s !== `+browsertest.JSString(a11y.StatusResponding)+`; })()`)
	return browsertest.Eval[result](t, ctx, of(collect, sel))
}

// answerStyle is what the checks read of an answer's blocks, by computed
// style: the size of the body text, and per part of the answer the
// properties that make it read as that part.
type answerStyle map[string]string

func readAnswerStyle(t *testing.T, ctx context.Context, sel string) answerStyle {
	t.Helper()
	return browsertest.Eval[answerStyle](t, ctx, `(() => {
		const c = document.querySelector(`+browsertest.JSString(sel+` [data-trickle="content"]`)+`);
		const out = { "page-h1|font-size": getComputedStyle(document.querySelector("body > h1")).fontSize };
		const read = (part, props) => { const e = c.querySelector(part); const s = e && getComputedStyle(e);
			for (const p of props) out[part + "|" + p] = s ? s.getPropertyValue(p) : "(missing)"; };
		read("p", ["font-size", "margin-bottom"]);
		read("h2", ["font-size", "font-weight", "margin-top"]);
		read("ol", ["list-style-type", "padding-inline-start"]);
		read("ul", ["list-style-type", "padding-inline-start"]);
		read("pre", ["padding-left", "background-color"]);
		return out;
	})()`)
}

// request is one request a backend got, as it arrived.
type request struct {
	Method, Path, Body string
	Status             int // the answer's status, recorded for DELETE
}

// fields is the request body's top-level keys, sorted.
func (r request) fields(t *testing.T) []string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(r.Body), &m), "%s %s: %q", r.Method, r.Path, r.Body)
	return slices.Sorted(maps.Keys(m))
}

// promptOnly requires the body ask(prompt) sends: the prompt as one user
// message and stream: true, nothing else (no model: the page set none).
func promptOnly(t *testing.T, r request, prompt string) {
	t.Helper()
	require.Equal(t, []string{"messages", "stream"}, r.fields(t), "no field the page did not give: %s", r.Body)
	require.JSONEq(t, `{"messages":[{"role":"user","content":`+browsertest.JSString(prompt)+`}],"stream":true}`, r.Body)
}

// requestLog records every request a handler gets (its body read and put
// back), and the status of each DELETE.
type requestLog struct {
	mu   sync.Mutex
	reqs []request
}

func (l *requestLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		l.mu.Lock()
		i := len(l.reqs)
		l.reqs = append(l.reqs, request{Method: r.Method, Path: r.URL.Path, Body: string(body)})
		l.mu.Unlock()
		if r.Method != http.MethodDelete { // a stream or a WebSocket: the writer stays the server's
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		l.mu.Lock()
		l.reqs[i].Status = sw.status
		l.mu.Unlock()
	})
}

func (l *requestLog) list() []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// readmeSnippet is the HTML block after the any-page-snippet marker in
// README.md (what the README tells people to paste into their page) and
// the prompt its input holds.
func readmeSnippet(t *testing.T) (snippet, prompt string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "<!-- any-page-snippet")
	require.True(t, ok, "README.md lost its any-page-snippet marker")
	_, after, ok = strings.Cut(after, "```html\n")
	require.True(t, ok, "no html block after the marker")
	snippet, _, ok = strings.Cut(after, "```")
	require.True(t, ok)
	m := regexp.MustCompile(`<input name="prompt" value="([^"]+)"`).FindStringSubmatch(snippet)
	require.NotNil(t, m, "the snippet's prompt input")
	return snippet, m[1]
}

// The README's snippet, pasted as it is into a page of a site that mounts
// the relay under /ai/ of its own mux (http.StripPrefix) and loads
// Tailwind's preflight: only the relay's address changes, from
// 127.0.0.1:8080 to the site's /ai/. Ask streams the relay's answer with
// its lists and code styled for an answer, Stop sends DELETE under /ai/
// and the relay cancels the generation, transport="websocket" (as the
// README says) streams over /ai/v1/ws, nothing asks the site's root for
// /v1/, and every body is the prompt and stream: true.
func TestTheReadmeSnippetWorksUnderAPrefixAndTailwindsPreflight(t *testing.T) {
	needResets(t)
	snippet, prompt := readmeSnippet(t)
	require.Contains(t, snippet, "http://127.0.0.1:8080/", "the snippet names the relay's default address")

	srv, err := relay.New(
		relay.WithWidget(assets.Widget()),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		// Slow enough that Stop, clicked after the first token, lands
		// mid-answer even on a loaded machine (the answer takes seconds).
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 30 * time.Millisecond, TokenChars: 4}),
	)
	require.NoError(t, err)
	var log requestLog
	mux := http.NewServeMux()
	mux.Handle("/ai/", http.StripPrefix("/ai", srv.Handler()))
	mux.Handle("/assets/", http.StripPrefix("/assets/", http.FileServer(http.Dir(resetModules))))
	ts := httptest.NewServer(log.wrap(mux))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	html := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Help</title>` +
		preflightV4("/assets/tailwindcss/preflight.css") + `</head><body><h1>Help</h1>` +
		strings.ReplaceAll(snippet, "http://127.0.0.1:8080", ts.URL+"/ai") + `</body></html>`
	mux.HandleFunc("/help/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, html)
	})

	ctx := untouchedTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/help/")))
	browsertest.WaitFor(t, ctx, 30*time.Second, `customElements.get("trickle-answer") !== undefined && document.querySelector("#ask button") !== null`)
	require.True(t, browsertest.Eval[bool](t, ctx, watchEvents))
	const el = "trickle-answer"
	ended := func(n int) string {
		return `window.__events.filter((e) => e.type === "trickle-end").length >= ` + itoa(n)
	}

	// Ask, as a reader does: the form's button.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#ask button`))))
	browsertest.WaitFor(t, ctx, 60*time.Second, ended(1))
	r := heardEnd(t, ctx, el)
	require.Equal(t, "complete", r.Status, "notice: %s", r.Notice)
	require.Equal(t, canned(t, sim.Choose(prompt)).Text, r.Text, "the relay's answer to the snippet's question, whole")
	require.Equal(t, thread, r.Metrics["thread"])
	st := readAnswerStyle(t, ctx, el)
	require.Equal(t, "16px", st["page-h1|font-size"], "the preflight is in force: the page's own h1 is body-sized")
	require.Equal(t, "disc", st["ul|list-style-type"], "the answer's list keeps its markers: %v", st)
	require.Positive(t, px(t, st["ul|padding-inline-start"]), "and its indent")
	require.Positive(t, px(t, st["p|margin-bottom"]), "paragraphs keep their spacing")
	require.Positive(t, px(t, st["pre|padding-left"]), "code blocks keep their padding")
	require.NotEqual(t, "rgba(0, 0, 0, 0)", st["pre|background-color"], "and their background")

	// Ask again and Stop once the answer has begun: DELETE under /ai/, and
	// the relay there cancels the generation.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#ask button`))))
	browsertest.WaitFor(t, ctx, 30*time.Second, `window.__events.filter((e) => e.type === "trickle-first-token").length >= 2`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#stop`))))
	browsertest.WaitFor(t, ctx, 30*time.Second, ended(2))
	r = heardEnd(t, ctx, el)
	require.Equal(t, "stopped", r.Status, "Stop came before the answer's end (notice: %s)", r.Notice)
	require.NotEmpty(t, r.StreamID)
	m := mounted{relay: ts.URL + "/ai"}
	require.Eventually(t, func() bool {
		in := m.info(t, r.StreamID)
		return in.UpstreamCancelled && in.State == relay.StateStopped && in.Readers == 0
	}, 10*time.Second, 50*time.Millisecond, "the relay under /ai/ stopped the generation")
	var deletes []request
	require.Eventually(t, func() bool {
		deletes = slices.DeleteFunc(log.list(), func(q request) bool { return q.Method != http.MethodDelete })
		return len(deletes) > 0 && deletes[0].Status != 0
	}, 10*time.Second, 20*time.Millisecond, "Stop sent DELETE")
	require.Len(t, deletes, 1)
	require.Equal(t, "/ai/v1/streams/"+r.StreamID, deletes[0].Path, "Stop went to the relay under /ai/")
	require.Less(t, deletes[0].Status, 300, "and the relay took it")

	// The README's one change for a WebSocket: transport="websocket". The
	// socket opens under /ai/ too.
	require.True(t, browsertest.Eval[bool](t, ctx, `(document.querySelector("trickle-answer").setAttribute("transport", "websocket"), true)`))
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#ask button`))))
	browsertest.WaitFor(t, ctx, 60*time.Second, ended(3))
	r = heardEnd(t, ctx, el)
	require.Equal(t, "complete", r.Status, "notice: %s", r.Notice)
	require.Equal(t, canned(t, sim.Choose(prompt)).Text, r.Text)
	require.True(t, slices.ContainsFunc(log.list(), func(q request) bool { return q.Method == http.MethodGet && q.Path == "/ai/v1/ws" }),
		"the WebSocket opened under /ai/: %v", log.list())

	var posts int
	for _, q := range log.list() {
		if strings.Contains(q.Path, "/v1/") {
			require.True(t, strings.HasPrefix(q.Path, "/ai/"), "%s %s left the prefix", q.Method, q.Path)
		}
		if q.Method == http.MethodPost {
			posts++
			require.Equal(t, "/ai/v1/chat/completions", q.Path)
			promptOnly(t, q, prompt)
		}
	}
	require.Equal(t, 2, posts, "one request per ask: %v", log.list())
}

// anypageAnswer is what backend.mjs's mock model answers, and
// anypageReasoning what it reasons first on the UI message stream.
const (
	anypageAnswer    = "## Brewing green tea\n\nUse water at **80 °C**, never boiling 🍵.\n\n1. Warm the pot.\n2. Add 2 g of leaves a cup (日本茶 too).\n3. Steep for *two* minutes.\n\nThen pour it all.\n"
	anypageReasoning = "The reader asks about green tea. Cooler water keeps it sweet."
)

// nodeBackend is testdata/anypage/backend.mjs running under prefix: the
// page's own backend, with no relay.
type nodeBackend struct {
	url string // the page's URL, prefix included

	mu      sync.Mutex
	reqs    []request
	cancels []string // the paths whose generation ended as their client went away
}

func (b *nodeBackend) requests() []request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.reqs)
}

func (b *nodeBackend) cancelled() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.cancels)
}

// startBackend starts backend.mjs under prefix and ends it (by its PID)
// with the test.
func startBackend(t *testing.T, prefix string) *nodeBackend {
	t.Helper()
	dir := t.TempDir()
	answer, reasoning := filepath.Join(dir, "answer.md"), filepath.Join(dir, "reasoning.txt")
	require.NoError(t, os.WriteFile(answer, []byte(anypageAnswer), 0o644))
	require.NoError(t, os.WriteFile(reasoning, []byte(anypageReasoning), 0o644))
	widget, err := filepath.Abs(filepath.Join("..", "..", "assets", "widget"))
	require.NoError(t, err)
	css, err := filepath.Abs(filepath.Join(resetModules, "tailwindcss", "preflight.css"))
	require.NoError(t, err)
	b := &nodeBackend{}
	b.url = browsertest.StartNode(t, filepath.Join("testdata", "anypage"), func(line string) {
		if raw, ok := strings.CutPrefix(line, "request "); ok {
			var q request
			if json.Unmarshal([]byte(raw), &q) == nil {
				b.mu.Lock()
				b.reqs = append(b.reqs, q)
				b.mu.Unlock()
			}
		} else if raw, ok := strings.CutPrefix(line, "cancelled "); ok {
			var c struct{ Path string }
			if json.Unmarshal([]byte(raw), &c) == nil {
				b.mu.Lock()
				b.cancels = append(b.cancels, c.Path)
				b.mu.Unlock()
			}
		}
	}, "backend.mjs", prefix, widget, css, answer, reasoning) + prefix
	return b
}

// A page with its own Node backend (testdata/anypage: every address on it
// relative, Tailwind v4's preflight, three elements and no dialect named),
// served under a path prefix, answered by the AI SDK's own server helpers
// over its mock model: the UI message stream shows the text with its
// reasoning in the thinking panel and the server's tool call with its
// output, the text stream the same text, both complete and styled as an
// answer; Stop ends the backend's generation (the request's abort reaches
// streamText's abortSignal); the route behind a login wall (401,
// an HTML body) shows one plain sentence, once, and trickle-error's detail
// has the technical chain. Each body is what the page asked, plus stream:
// true.
func TestAPageWithItsOwnNodeBackendReadsTheAISDKsStreamsUnderAPrefix(t *testing.T) {
	needResets(t)
	needAnypage(t)
	b := startBackend(t, "/tools/assistant/")

	ctx := untouchedTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(b.url)))
	widgetReady(t, ctx, `new URL("trickle/trickle.js", document.baseURI).href`)
	require.True(t, browsertest.Eval[bool](t, ctx, watchEvents))
	askOn := func(t *testing.T, id, arg string) result {
		t.Helper()
		status := browsertest.Eval[string](t, ctx, `(async () => {
			window.__events = [];
			return await document.getElementById(`+browsertest.JSString(id)+`).ask(`+arg+`);
		})()`)
		r := heardEnd(t, ctx, "#"+id)
		require.Equal(t, status, r.Status, "ask() resolves with the final status")
		require.Equal(t, thread, r.Metrics["thread"])
		return r
	}

	t.Run("ui message stream", func(t *testing.T) {
		r := askOn(t, "ui", browsertest.JSString("How do I brew green tea?"))
		require.Equal(t, "complete", r.Status, "finish is the end: notice %q", r.Notice)
		require.False(t, r.NoticeShown)
		require.Equal(t, anypageAnswer, r.Text)
		require.True(t, r.ThinkShown, "the reasoning has its panel")
		require.Equal(t, anypageReasoning, strings.TrimSpace(r.Thinking))
		require.NotContains(t, r.HTML, "Cooler water", "and stays out of the answer")
		require.Contains(t, r.Tools, "<p>Called <code>get_weather</code></p>", "the server's tool call, finished")
		require.NotContains(t, r.Tools, "Calling")
		require.Contains(t, r.Tools, `<pre><code>{"city":"Kyoto"}</code></pre>`, "with its input")
		require.Contains(t, r.Tools, `<pre data-trickle="tool-output"><code>{"city":"Kyoto","temperature":18,"sky":"light rain"}</code></pre>`, "and its output")
		require.NotNil(t, r.Message)
		require.Len(t, r.Message.ToolCalls, 1)
		require.Equal(t, "get_weather", r.Message.ToolCalls[0].Name)
		require.True(t, r.Message.ToolCalls[0].Complete)

		st := readAnswerStyle(t, ctx, "#ui")
		require.Equal(t, "16px", st["page-h1|font-size"], "the preflight is in force: the page's own h1 is body-sized")
		require.Greater(t, px(t, st["h2|font-size"]), px(t, st["p|font-size"]), "the answer's heading is larger than its text: %v", st)
		require.GreaterOrEqual(t, st["h2|font-weight"], "600", "and bold")
		require.Equal(t, "decimal", st["ol|list-style-type"], "the numbered list keeps its numbers")
		require.Positive(t, px(t, st["ol|padding-inline-start"]), "and its indent")
		require.Positive(t, px(t, st["p|margin-bottom"]), "paragraphs keep their spacing")
	})

	t.Run("stop", func(t *testing.T) {
		require.True(t, browsertest.Eval[bool](t, ctx, `(() => {
			window.__events = [];
			window.__p = document.getElementById("long").ask("Tell me slowly");
			return true;
		})()`))
		browsertest.WaitFor(t, ctx, 30*time.Second, `window.__events.some((e) => e.type === "trickle-first-token")`)
		require.Equal(t, "stopped", browsertest.Eval[string](t, ctx, `(async () => {
			document.getElementById("long").stop();
			return await window.__p;
		})()`), "Stop came before the answer's end")
		r := heardEnd(t, ctx, "#long")
		require.Equal(t, "stopped", r.Status)
		require.Less(t, len(r.Text), len(anypageAnswer), "the answer stopped partway")
		require.Eventually(t, func() bool { return len(b.cancelled()) > 0 }, 10*time.Second, 20*time.Millisecond,
			"the backend's generation ended with the request (its abortSignal)")
		require.Equal(t, []string{"/tools/assistant/api/ui"}, b.cancelled())
	})

	t.Run("text stream", func(t *testing.T) {
		r := askOn(t, "text", `{ id: "chat-1", messages: [{ role: "user", content: "And in a glass?" }] }`)
		require.Equal(t, "complete", r.Status, "the body's clean end is the answer's: notice %q", r.Notice)
		require.Equal(t, anypageAnswer, r.Text)
		require.False(t, r.ThinkShown, "a text stream carries no reasoning")
		st := readAnswerStyle(t, ctx, "#text")
		require.Greater(t, px(t, st["h2|font-size"]), px(t, st["p|font-size"]), "%v", st)
		require.Equal(t, "decimal", st["ol|list-style-type"])
	})

	t.Run("401 with an HTML body", func(t *testing.T) {
		r := askOn(t, "private", browsertest.JSString("What is in the vault?"))
		require.Equal(t, "failed", r.Status)
		const sentence = "The server refused the request (401)."
		require.Equal(t, sentence, r.Notice)
		v := browsertest.Eval[seenByReader](t, ctx, of(readerView, "#private"))
		require.Equal(t, 1, strings.Count(v.Visible, sentence), "the sentence is shown once: %q", v.Visible)
		readerSafe(t, "visible text", v.Visible)
		readerSafe(t, "spoken status", v.Spoken)
		d := errorDetail(t, r)
		require.Equal(t, "refused", d.Reason)
		require.Equal(t, 401, d.HTTPStatus)
		require.Contains(t, d.Detail, "HTTP 401", "the developer gets the chain")
		require.Contains(t, d.Detail, "<h1>401 Authorization Required</h1>", "with the body")
	})

	got := map[string]request{}
	for _, q := range b.requests() {
		require.Equal(t, http.MethodPost, q.Method)
		_, dup := got[q.Path]
		require.False(t, dup, "one request per ask: %v", b.requests())
		got[q.Path] = q
	}
	require.Len(t, got, 4, "%v", b.requests())
	promptOnly(t, got["/tools/assistant/api/ui"], "How do I brew green tea?")
	promptOnly(t, got["/tools/assistant/api/ui?delay_ms=40"], "Tell me slowly")
	promptOnly(t, got["/tools/assistant/api/private"], "What is in the vault?")
	text := got["/tools/assistant/api/text"]
	require.Equal(t, []string{"id", "messages", "stream"}, text.fields(t), "the page's body, with stream: true and nothing else")
	require.JSONEq(t, `{"id":"chat-1","messages":[{"role":"user","content":"And in a glass?"}],"stream":true}`, text.Body)
}
