//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// recordings is stream/testdata: the AI SDK's and the AG-UI SDK's own
// bodies among them (stream/testdata/aisdk/record.mjs, aisdk7/record.mjs
// and agui/record.mjs wrote them, with the headers they sent in their
// headers.json).
var recordings = filepath.Join("..", "..", "stream", "testdata")

// customRecorded is a plain backend that answers a recording as the AI SDK
// did: /custom/recorded/FILE sends stream/testdata/FILE with the headers
// the SDK sent for it, in small flushed pieces. ?headers=none leaves them
// out but the content type (a page on another origin cannot read the
// SDK's header unless it is exposed), ?repeat=N sends the body N times,
// ?short=N announces N bytes more in Content-Length than it sends, then
// closes.
func customRecorded(w http.ResponseWriter, r *http.Request) {
	file := strings.TrimPrefix(r.URL.Path, "/custom/recorded/")
	if file == "sign-in.html" {
		// A page where an answer should be: a login wall, a proxy's page.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(signInPage))
		return
	}
	body, err := os.ReadFile(filepath.Join(recordings, filepath.Base(file)))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	// Each recording project keeps the headers its SDK sent.
	headers := map[string]map[string]string{}
	for _, dir := range []string{"aisdk", "aisdk7", "agui"} {
		var hs map[string]map[string]string
		b, err := os.ReadFile(filepath.Join(recordings, dir, "headers.json"))
		if err == nil {
			err = json.Unmarshal(b, &hs)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for f, h := range hs {
			headers[f] = h
		}
	}
	h, ok := headers[file]
	if !ok && strings.HasSuffix(file, "-citations.sse") {
		// The providers' citation recordings (written from their
		// documented shapes, not by an SDK): an SSE body, as they send.
		h, ok = map[string]string{"content-type": "text/event-stream"}, true
	}
	if !ok {
		http.Error(w, "no headers recorded for "+file, http.StatusNotFound)
		return
	}
	for k, v := range h {
		if r.URL.Query().Get("headers") == "none" && k != "content-type" {
			continue
		}
		if k == "connection" {
			continue // hop-by-hop: net/http's to say
		}
		w.Header().Set(k, v)
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("repeat")); err == nil {
		body = []byte(strings.Repeat(string(body), n))
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("short")); err == nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)+n))
	}
	f := w.(http.Flusher)
	for len(body) > 0 {
		n := min(len(body), 37)
		w.Write(body[:n])
		f.Flush()
		body = body[n:]
	}
	if r.URL.Query().Get("hold") != "" {
		// The test says when the page has read it all: then the body
		// ends (short of its Content-Length, with ?short).
		select {
		case <-cutRecorded:
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	}
}

// cutRecorded ends a ?hold body.
var cutRecorded = make(chan struct{}, 1)

const signInPage = `<!doctype html><html><head><title>Sign in</title></head><body><form><input name="user"><button>Sign in</button></form></body></html>`

// aisdkMarkdown is the answer of ai-sdk-markdown.sse and text-ai-sdk.txt.
const aisdkMarkdown = "## Brewing green tea\n\nUse water at **80 °C** — never boiling 🍵.\n\n" +
	"1. Warm the pot.\n2. Add 2 g of leaves a cup (日本茶 too).\n3. Steep for *two* minutes.\n\n" +
	"| step | time |\n| --- | --- |\n| steep | 2 min |\n"

func TestTheAISDKsUIMessageStreamShowsItsTextThinkingAndToolWithItsOutput(t *testing.T) {
	ctx := tab(t)
	for _, q := range []string{"", "?headers=none"} {
		r := ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/ai-sdk-reasoning-tool.sse" + q}, "weather")
		require.Equal(t, "complete", r.Status, "%s: %s", q, r.Notice)
		require.Equal(t, "Let me check the weather in *Paris*.", r.Text, q)
		sameDOM(t, ctx, r.Text, r.HTML)
		require.True(t, r.ThinkShown, q)
		require.Equal(t, "The user asks about Paris. The weather tool can tell.", strings.TrimSpace(r.Thinking))
		require.NotContains(t, r.Text, "Paris. The weather", "the reasoning is not the answer")
		require.Contains(t, r.Tools, "<code>get_weather</code>")
		require.Contains(t, r.Tools, `<pre><code>{"city":"Paris"}</code></pre>`, "the input, once available")
		require.Contains(t, r.Tools, `<pre data-trickle="tool-output"><code>{"city":"Paris","temperature":21,"sky":"clear"}</code></pre>`, "and the tool's output")
		require.False(t, r.NoticeShown)
	}

	r := ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/ai-sdk-markdown.sse"}, "tea")
	require.Equal(t, "complete", r.Status, r.Notice)
	require.Equal(t, aisdkMarkdown, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	require.Empty(t, r.Tools)
	require.Equal(t, "Answer complete.", r.StatusText)
}

func TestTheAISDKsErrorFailsTheAnswerWithItsMessageAndItsAbortStopsIt(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/ai-sdk-error.sse"}, "story")
	require.Equal(t, "failed", r.Status)
	require.Equal(t, "The first half of the answer, then", r.Text, "the text before the error stays")
	require.True(t, r.NoticeShown)
	require.Equal(t, "The model's service reported an error.", r.Notice, "the reader's sentence")
	require.Contains(t, errorDetail(t, r).Detail, "The model is overloaded, try again", "the SDK's message goes to the developer's detail")

	r = ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/ai-sdk-abort.sse"}, "go on")
	require.Equal(t, "stopped", r.Status, r.Notice)
	require.Equal(t, "Stopped mid", r.Text)
}

// The AG-UI SDK's own streams (stream/testdata/agui/record.mjs): text,
// thinking, a tool call with its result; a cancelled run is stopped, a
// failed one fails with its message.
func TestAnAGUIStreamShowsItsTextThinkingAndToolAndItsOutcome(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/ag-ui-tool.sse"}, "weather")
	require.Equal(t, "complete", r.Status, r.Notice)
	require.Equal(t, "## Paris\n\nLet me check the weather in *Paris* 🌦️ — one moment.\n\nIt is **21 °C** and clear.\n\n| city | sky |\n| --- | --- |\n| Paris | clear |\n", r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	require.True(t, r.ThinkShown)
	require.Equal(t, "The reader asks about Paris. The weather tool can tell.", strings.TrimSpace(r.Thinking))
	require.Contains(t, r.Tools, "<code>get_weather</code>")
	require.Contains(t, r.Tools, `<pre><code>{"city":"Paris"}</code></pre>`, "the arguments, assembled")
	require.Contains(t, r.Tools, `<pre data-trickle="tool-output"><code>{"city":"Paris","temperature":21,"sky":"clear"}</code></pre>`, "and the tool's result")
	require.False(t, r.NoticeShown)

	r = ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/ag-ui-cancelled.sse"}, "go on")
	require.Equal(t, "stopped", r.Status, r.Notice)
	require.Equal(t, "Stopped mid sentence", r.Text)

	r = ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/ag-ui-error.sse"}, "story")
	require.Equal(t, "failed", r.Status)
	require.Equal(t, "The first half of the answer, then", r.Text, "the text before the error stays")
	require.Equal(t, "The model's service reported an error.", r.Notice, "the reader's sentence")
	require.Contains(t, errorDetail(t, r).Detail, "The model is overloaded, try again", "the agent's message goes to the developer's detail")
}

func TestATextBodyIsTheAnswerAndABodyCutShortIsNotComplete(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/text-ai-sdk.txt"}, "tea")
	require.Equal(t, "complete", r.Status, r.Notice)
	require.Equal(t, aisdkMarkdown, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	require.Equal(t, "Answer complete.", r.StatusText)

	// The server announced more than it sent, then closed once the page
	// had read what came: the browser's read fails, the answer keeps its
	// text and is not complete. (A fresh tab: the element must not still
	// show the last answer, the same text, when start looks.)
	ctx = tab(t)
	start(t, ctx, map[string]string{"endpoint": "/custom/recorded/text-ai-sdk.txt?short=100&hold=1"}, len([]rune(aisdkMarkdown)))
	require.Equal(t, "streaming", browsertest.Eval[string](t, ctx, `document.getElementById("a").status`), "the body's Content-Length is not reached yet")
	cutRecorded <- struct{}{}
	require.Equal(t, "failed", browsertest.Eval[string](t, ctx, `window.__p`))
	r = waitAnnouncer(t, ctx)
	require.Equal(t, "failed", r.Status, r.Notice)
	require.Equal(t, aisdkMarkdown, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	require.True(t, r.RetryShown, "it can be asked again")
}

func TestABodyTheWidgetCannotReadFailsSayingWhatCame(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/sign-in.html"}, "hi")
	require.Equal(t, "failed", r.Status)
	require.Equal(t, "The server's answer is in a form this page cannot read.", r.Notice, "the reader's sentence, never Incomplete")
	detail := errorDetail(t, r).Detail
	require.Contains(t, detail, `"text/html; charset=utf-8"`, "the developer's detail says what came")
	require.Contains(t, detail, `"<!doctype html><html><head><title>Sign in</title>`)
	require.Empty(t, r.Text)
	require.Empty(t, browsertest.Eval[string](t, ctx, `document.getElementById("a").querySelector('[data-trickle="content"]').textContent`), "no HTML of the body reaches the answer")
}

// The same research answer from OpenAI Responses, Anthropic and Gemini
// recordings (and OpenAI Chat Completions') shows the same numbered Sources list, links that follow the
// answer's link policy, and [n] markers in the text that link to their
// sources; el.message carries them for the page's history.
func TestThreeProvidersCitationsShowTheSameNumberedSources(t *testing.T) {
	ctx := tab(t)
	var first string
	for _, file := range []string{"responses-citations.sse", "anthropic-citations.sse", "gemini-citations.sse", "openai-citations.sse"} {
		r := ask(t, ctx, map[string]string{"endpoint": "/custom/recorded/" + file}, "tea")
		require.Equal(t, "complete", r.Status, "%s: %s", file, r.Notice)
		got := browsertest.Eval[map[string]any](t, ctx, `(() => {
			const el = document.getElementById("a");
			const part = el.querySelector('[data-trickle="sources"]');
			const items = [...part.querySelectorAll('[data-trickle="source"]')].map((li) => {
				const a = li.querySelector("a");
				return [li.dataset.n, a.textContent, a.href, a.rel, a.target, li.querySelector('[data-trickle="source-host"]').textContent];
			});
			const markers = [...el.querySelector('[data-trickle="content"]').querySelectorAll("a")].map((a) => [a.textContent, a.href, a.rel]);
			const m = el.message;
			return { hidden: part.hidden, heading: part.querySelector('[data-trickle="sources-heading"]').textContent, items, markers,
				text: el.querySelector('[data-trickle="content"]').textContent,
				sources: m.sources.map((s) => s.url), citations: m.citations.map((c) => [c.source, c.end]) };
		})()`)
		require.Equal(t, false, got["hidden"], file)
		require.Equal(t, "Sources", got["heading"], file)
		rel := "noopener noreferrer nofollow ugc"
		require.Equal(t, []any{
			[]any{"1", "Brewing green tea", "https://tea.example.org/brewing-green-tea", rel, "_blank", "tea.example.org"},
			[]any{"2", "Catechins and bitterness", "https://journal.example.com/catechins", rel, "_blank", "journal.example.com"},
		}, got["items"], file)
		require.Equal(t, []any{
			[]any{"[1]", "https://tea.example.org/brewing-green-tea", rel},
			[]any{"[2]", "https://journal.example.com/catechins", rel},
		}, got["markers"], file)
		require.Equal(t, "Green tea tastes best brewed at 70–80 °C for two to three minutes.[1] Boiling water draws out catechins, which make it bitter.[2]\n", got["text"], file)
		require.Equal(t, []any{"https://tea.example.org/brewing-green-tea", "https://journal.example.com/catechins"}, got["sources"], file)
		require.Equal(t, []any{[]any{float64(1), float64(69)}, []any{float64(2), float64(126)}}, got["citations"], file)
		html := browsertest.Eval[string](t, ctx, `document.getElementById("a").querySelector('[data-trickle="sources"]').innerHTML`)
		if first == "" {
			first = html
		}
		require.Equal(t, first, html, "%s shows the same list", file)
		require.Equal(t, "Answer complete. Sources listed after the answer: 2.",
			browsertest.Eval[string](t, ctx, `document.getElementById("a").querySelector('[data-trickle="sr-status"]').textContent`), file)
	}
}

// The simulated model's research answer, streamed by the relay in every
// dialect that carries citations and over both transports, shows the same
// numbered Sources list and markers: the example pages' research answer.
func TestTheSimulatedResearchAnswerShowsItsSourcesInEveryDialect(t *testing.T) {
	ctx := tab(t)
	var first []any
	for _, d := range []string{"openai", "responses", "anthropic", "gemini", "ai-sdk"} {
		for _, tr := range []string{"sse", "websocket"} {
			q := "?answer=research&gap_ms=1&dialect=" + d
			r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions" + q, "ws-endpoint": "/v1/ws" + q, "transport": tr}, "sources?")
			require.Equal(t, "complete", r.Status, "%s %s: %s", d, tr, r.Notice)
			got := browsertest.Eval[[]any](t, ctx, `(() => {
				const el = document.getElementById("a");
				const items = [...el.querySelectorAll('[data-trickle="source"] a')].map((a) => [a.textContent, a.href]);
				const markers = [...el.querySelector('[data-trickle="content"]').querySelectorAll("a")].map((a) => [a.textContent, a.href]);
				return [items, markers];
			})()`)
			require.Len(t, got[0], 3, "%s %s", d, tr)
			require.Len(t, got[1], 3, "%s %s: a marker for each citation", d, tr)
			if first == nil {
				first = got
			}
			require.Equal(t, first, got, "%s %s shows what openai over SSE shows", d, tr)
		}
	}
}
