//go:build !(js && wasm)

package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
)

// chatRequest is what a chat sent the relay: its body's fields.
type chatRequest map[string]json.RawMessage

// messages decodes the request's messages.
func (c chatRequest) messages(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	require.NoError(t, json.Unmarshal(c["messages"], &out))
	return out
}

// recordingRelay is a relay with the test page whose chat requests are
// kept, in order, as they reached it.
type recordingRelay struct {
	url  string
	mu   sync.Mutex
	reqs []chatRequest
}

func (r *recordingRelay) requests() []chatRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]chatRequest(nil), r.reqs...)
}

func startRecordingRelay(t *testing.T) *recordingRelay {
	t.Helper()
	srv, err := relay.New(relay.WithWidget(assets.Widget()),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: 2 * time.Millisecond, TokenChars: 4}))
	require.NoError(t, err)
	rr := &recordingRelay{}
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, pageHTML())
	})
	h := srv.Handler()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions" {
			body, _ := io.ReadAll(r.Body)
			var c chatRequest
			json.Unmarshal(body, &c)
			rr.mu.Lock()
			rr.reqs = append(rr.reqs, c)
			rr.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	rr.url = ts.URL
	return rr
}

// newChat puts a <trickle-chat> on the page (the suite's thread mode).
const newChat = `(async () => {
	await customElements.whenDefined("trickle-chat");
	document.querySelector("trickle-chat")?.remove();
	const c = document.createElement("trickle-chat");
	c.id = "chat";
	c.setAttribute("endpoint", "/v1/chat/completions?gap_ms=1&ttft_ms=5");
	if (document.querySelector("trickle-answer[worker=off]")) c.setAttribute("worker", "off");
	window.changes = 0;
	c.addEventListener("trickle-chat-change", () => window.changes++);
	document.body.append(c);
	return true;
})()`

// A conversation in <trickle-chat> on the relay's simulated model: each
// request carries the whole history, a stopped answer goes back flagged as
// cut off, a tool the page gives runs and its result reaches the next
// request, regenerate and edit ask again, and the thread set from stored
// messages after a reload shows the same turns without any request.
func TestAChatSendsTheHistoryRunsToolsAndShowsAStoredThreadAgain(t *testing.T) {
	rr := startRecordingRelay(t)
	ctx := tabAt(t, rr.url)
	require.True(t, browsertest.Eval[bool](t, ctx, newChat))

	send := func(text string) {
		t.Helper()
		browsertest.Eval[bool](t, ctx, `(async () => { await document.getElementById("chat").send(`+browsertest.JSString(text)+`); return true; })()`)
	}

	// Three turns, the first typed and sent with Enter.
	for _, a := range []chromedp.Action[chromedp.Void]{chromedp.Focus(`#chat textarea`), chromedp.SendKeys(`#chat textarea`, "hello"), chromedp.KeyEvent(kb.Enter)} {
		_, err := chromedp.Run(ctx, a)
		require.NoError(t, err)
	}
	browsertest.WaitFor(t, ctx, 20*time.Second, `document.getElementById("chat").messages.length === 2 && !document.getElementById("chat").busy`)
	require.True(t, browsertest.Eval[bool](t, ctx, `document.activeElement === document.querySelector("#chat textarea")`), "focus stays in the composer")
	send("Compare Go and Rust")
	send("thanks")
	reqs := rr.requests()
	require.Len(t, reqs, 3)
	hist := browsertest.Eval[[]map[string]any](t, ctx, `document.getElementById("chat").messages`)
	require.Len(t, hist, 6)
	for i, r := range reqs {
		msgs := r.messages(t)
		require.Len(t, msgs, 2*i+1, "request %d carries the history and the new question", i)
		for j, m := range msgs {
			require.Equal(t, hist[j]["role"], m["role"])
			require.Equal(t, hist[j]["content"], m["content"], "request %d message %d as the history has it", i, j)
			if m["role"] == "assistant" {
				require.NotContains(t, m, "status", "only what the provider knows is sent back")
			}
		}
		keys := []string{}
		for k := range r {
			keys = append(keys, k)
		}
		require.ElementsMatch(t, []string{"messages", "stream"}, keys, "no field the page did not give")
	}
	require.Equal(t, "hello", hist[0]["content"])
	require.Equal(t, 3, browsertest.Eval[int](t, ctx, `window.changes`), "one trickle-chat-change a turn")
	labels := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#chat [data-trickle-chat="speaker"]')].map((h) => h.textContent)`)
	require.Equal(t, []string{"You said:", "The assistant said:", "You said:", "The assistant said:", "You said:", "The assistant said:"}, labels)
	require.Zero(t, browsertest.Eval[int](t, ctx, `document.querySelectorAll('#chat [aria-live], #chat [role=log], #chat [role=status]').length
		- document.querySelectorAll('#chat trickle-answer [aria-live], #chat trickle-answer [role=log], #chat trickle-answer [role=status]').length`),
		"no live region but the answers' own: the reader's message is not read back")

	t.Run("a stopped answer goes back flagged as cut off", func(t *testing.T) {
		browsertest.Eval[bool](t, ctx, `(async () => {
			const c = document.getElementById("chat");
			c.addEventListener("trickle-chat-change", (e) => {
				if (e.detail.messages.at(-1)?.usage?.output_tokens > 0) window.costHeard = true;
			});
			const done = c.send("Write an essay about rivers");
			const t0 = performance.now();
			while (performance.now() - t0 < 20000) {
				const a = [...c.querySelectorAll("trickle-answer")].at(-1);
				if (a && a.text.length > 40) break;
				await new Promise((r) => setTimeout(r, 10));
			}
			c.stop();
			await done;
			return true;
		})()`)
		last := browsertest.Eval[map[string]any](t, ctx, `document.getElementById("chat").messages.at(-1)`)
		require.Equal(t, "stopped", last["status"])
		require.Equal(t, true, last["incomplete"])
		// What the Stop cost reaches the history after the end, and the
		// page hears of it.
		browsertest.WaitFor(t, ctx, 10*time.Second, `window.costHeard && document.getElementById("chat").messages.at(-1).usage?.output_tokens > 0`)
		send("go on")
		msgs := rr.requests()[len(rr.requests())-1].messages(t)
		cut := msgs[len(msgs)-2]
		require.Equal(t, "assistant", cut["role"])
		require.True(t, strings.HasSuffix(cut["content"].(string), "\n\n[This answer was cut off before it finished.]"), "%q", cut["content"])
		require.True(t, strings.HasPrefix(cut["content"].(string), last["content"].(string)))
	})

	t.Run("a tool the page gives runs and its result reaches the model", func(t *testing.T) {
		n := len(rr.requests())
		browsertest.Eval[bool](t, ctx, `(async () => {
			const c = document.getElementById("chat");
			c.tools = { get_weather: async (args) => ({ location: args.location, temperature: 21, unit: args.unit }) };
			await c.send("What's the weather in Lyon?");
			return true;
		})()`)
		reqs := rr.requests()[n:]
		require.Len(t, reqs, 2, "the question, then the tool's result")
		msgs := reqs[1].messages(t)
		call, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
		require.Equal(t, "assistant", call["role"])
		calls := call["tool_calls"].([]any)
		require.Len(t, calls, 1)
		fn := calls[0].(map[string]any)["function"].(map[string]any)
		require.Equal(t, "get_weather", fn["name"])
		require.JSONEq(t, `{"location": "Lyon, France", "unit": "celsius", "include_forecast": true}`, fn["arguments"].(string))
		require.Equal(t, "tool", result["role"])
		require.Equal(t, calls[0].(map[string]any)["id"], result["tool_call_id"])
		require.JSONEq(t, `{"location":"Lyon, France","temperature":21,"unit":"celsius"}`, result["content"].(string))
		answer := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll("#chat trickle-answer")].at(-1).text`)
		require.Contains(t, answer, `"temperature":21`, "the next answer used the result")
		require.Contains(t, browsertest.Eval[string](t, ctx, `[...document.querySelectorAll("#chat trickle-answer")].at(-2).querySelector('[data-trickle="tools"]').textContent`), "Called get_weather")

		n = len(rr.requests())
		browsertest.Eval[bool](t, ctx, `(async () => {
			const c = document.getElementById("chat");
			c.tools = { get_weather: async () => { throw new Error("the weather service is down"); } };
			await c.send("Will it rain tomorrow?");
			return true;
		})()`)
		reqs = rr.requests()[n:]
		require.Len(t, reqs, 2)
		msgs = reqs[1].messages(t)
		require.JSONEq(t, `{"error":"the weather service is down"}`, msgs[len(msgs)-1]["content"].(string), "a tool that throws is reported to the model")
		require.Contains(t, browsertest.Eval[string](t, ctx, `document.querySelector('#chat [data-trickle-chat="tool-error"]').textContent`), "the weather service is down", "and to the reader")
	})

	t.Run("regenerate and edit ask again", func(t *testing.T) {
		before := browsertest.Eval[[]map[string]any](t, ctx, `document.getElementById("chat").messages`)
		n := len(rr.requests())
		browsertest.Eval[bool](t, ctx, `(async () => { const c = document.getElementById("chat"); c.tools = {}; await c.send("hello"); await c.regenerate(); return true; })()`)
		reqs := rr.requests()[n:]
		require.Len(t, reqs, 2)
		require.Equal(t, reqs[0].messages(t), reqs[1].messages(t), "regenerate asks the same history again")
		after := browsertest.Eval[[]map[string]any](t, ctx, `document.getElementById("chat").messages`)
		require.Len(t, after, len(before)+2, "in place of the last answer")

		browsertest.Eval[bool](t, ctx, `(async () => { await document.getElementById("chat").edit("hello, edited"); return true; })()`)
		msgs := rr.requests()[len(rr.requests())-1].messages(t)
		require.Len(t, msgs, len(before)+1)
		require.Equal(t, "hello, edited", msgs[len(msgs)-1]["content"])
		require.Len(t, browsertest.Eval[[]map[string]any](t, ctx, `document.getElementById("chat").messages`), len(before)+2)
	})

	t.Run("a stored thread shows again after a reload without a request", func(t *testing.T) {
		stored := browsertest.Eval[string](t, ctx, `JSON.stringify(document.getElementById("chat").messages)`)
		turnsText := `[...document.querySelectorAll('#chat [data-trickle-chat="turn"]')].map((t) => t.dataset.role + ":" + (t.querySelector("trickle-answer")?.text ?? t.querySelector('[data-trickle-chat="text"]').textContent))`
		want := browsertest.Eval[[]string](t, ctx, turnsText)
		html := `[...document.querySelectorAll('#chat trickle-answer [data-trickle="content"]')].map((c) => c.textContent)`
		wantHTML := browsertest.Eval[[]string](t, ctx, html)
		n := len(rr.requests())

		_, err := chromedp.Run(ctx, chromedp.Reload())
		require.NoError(t, err)
		require.True(t, browsertest.Eval[bool](t, ctx, newChat))
		browsertest.Eval[bool](t, ctx, `(async () => {
			const c = document.getElementById("chat");
			c.messages = JSON.parse(`+browsertest.JSString(stored)+`);
			// The newest turns come at once, the older ones in batches.
			const turns = c.messages.filter((m) => m.role === "user" || m.role === "assistant").length;
			const t0 = performance.now();
			while (performance.now() - t0 < 10000) {
				const as = [...c.querySelectorAll("trickle-answer")];
				if (c.querySelectorAll('[data-trickle-chat="turn"]').length === turns && as.every((a) => a.status !== "idle")) break;
				await new Promise((r) => setTimeout(r, 20));
			}
			return true;
		})()`)
		require.Equal(t, want, browsertest.Eval[[]string](t, ctx, turnsText), "the same thread")
		require.Equal(t, wantHTML, browsertest.Eval[[]string](t, ctx, html), "the same answers on screen")
		require.Len(t, rr.requests(), n, "no request")
		require.JSONEq(t, stored, browsertest.Eval[string](t, ctx, `JSON.stringify(document.getElementById("chat").messages)`))
	})
}

// The chat declares its tools in every request (OpenAI's tools, with the
// page's description and JSON Schema) and the simulated model, like a real
// one, calls only what was declared: with no tool it answers in words,
// with a declared tool it calls it with arguments valid against the
// schema, and tool_choice "none" keeps it from calling.
func TestAChatDeclaresItsToolsAndTheModelCallsOnlyThose(t *testing.T) {
	rr := startRecordingRelay(t)
	ctx := tabAt(t, rr.url)
	require.True(t, browsertest.Eval[bool](t, ctx, newChat))
	ask := func(setup, text string) (reqs []chatRequest, last map[string]any) {
		t.Helper()
		n := len(rr.requests())
		browsertest.Eval[bool](t, ctx, `(async () => { const c = document.getElementById("chat"); `+setup+`; await c.send(`+browsertest.JSString(text)+`); return true; })()`)
		return rr.requests()[n:], browsertest.Eval[map[string]any](t, ctx, `document.getElementById("chat").messages.at(-1)`)
	}

	// No tool: none declared, none called, the model says so.
	reqs, last := ask(`c.tools = {}`, "What's the weather in Lyon?")
	require.Len(t, reqs, 1)
	require.NotContains(t, reqs[0], "tools", "no tool, no declaration")
	require.Equal(t, "complete", last["status"])
	require.Empty(t, last["tool_calls"], "the model never calls an undeclared tool")
	require.Contains(t, last["content"], "declares no tool")

	// A declared tool with its own schema: called, with arguments that fit it.
	reqs, last = ask(`window.ran = []; c.tools = { get_weather: {
		description: "The weather in a city.",
		parameters: { type: "object", properties: { city: { type: "string", maxLength: 4 } }, required: ["city"], additionalProperties: false },
		run: async (args, call) => { window.ran.push({ args, call }); return { city: args.city, temperature: 21 }; },
	} }`, "What's the weather in Lyon?")
	require.Len(t, reqs, 2, "the question, then the tool's result")
	require.JSONEq(t, `[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.",
		"parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":4}},"required":["city"],"additionalProperties":false}}}]`, string(reqs[0]["tools"]))
	require.JSONEq(t, string(reqs[0]["tools"]), string(reqs[1]["tools"]), "every request declares them")
	ran := browsertest.Eval[[]map[string]any](t, ctx, `window.ran`)
	require.Len(t, ran, 1)
	require.Equal(t, map[string]any{"city": "Lyon"}, ran[0]["args"], "arguments valid against the declared schema")
	require.Equal(t, "complete", last["status"])
	require.Contains(t, last["content"], `"temperature":21`)

	// tool_choice "none": declared, not called.
	reqs, last = ask(`c.toolChoice = "none"`, "What's the weather in Lyon?")
	require.Len(t, reqs, 1)
	require.JSONEq(t, `"none"`, string(reqs[0]["tool_choice"]))
	require.Empty(t, last["tool_calls"])
	require.Len(t, browsertest.Eval[[]any](t, ctx, `window.ran`), 1, "not run again")
}

// A turn that failed stays in the thread for the reader but is not sent
// back as an empty assistant message, which the simulated model (like
// the providers) refuses: the next question is answered.
func TestAFailedTurnIsKeptButNotSentBack(t *testing.T) {
	rr := startRecordingRelay(t)
	ctx := tabAt(t, rr.url)
	require.True(t, browsertest.Eval[bool](t, ctx, newChat))
	browsertest.Eval[bool](t, ctx, `(async () => {
		const c = document.getElementById("chat");
		const ok = c.getAttribute("endpoint");
		c.setAttribute("endpoint", ok + "&error_after=1");
		await c.send("hello");
		c.setAttribute("endpoint", ok);
		await c.send("hello again");
		return true;
	})()`)
	hist := browsertest.Eval[[]map[string]any](t, ctx, `document.getElementById("chat").messages`)
	require.Len(t, hist, 4, "the failed turn is kept")
	require.Equal(t, "failed", hist[1]["status"])
	require.Equal(t, "", hist[1]["content"])
	require.Equal(t, 2, browsertest.Eval[int](t, ctx, `document.querySelectorAll("#chat [data-trickle-chat=turn][data-role=assistant]").length`), "and shown")
	reqs := rr.requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].messages(t)
	require.Equal(t, []map[string]any{{"role": "user", "content": "hello"}, {"role": "user", "content": "hello again"}}, msgs)
	require.Equal(t, "complete", hist[3]["status"], "the model answered the next question")
}
