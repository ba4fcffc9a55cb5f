//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// aisdkRouteModules is the AI SDK (the `ai` package) at the exact version
// testdata/aisdk-route/package-lock.json pins, for server.mjs (make
// installs it with npm ci).
const aisdkRouteModules = "testdata/aisdk-route/node_modules"

// aisdkRoute is testdata/aisdk-route/server.mjs running: an AI SDK chat
// route written as the AI SDK's docs write one, over the package's mock
// model, with a page of <trickle-chat protocol="ai-sdk">.
type aisdkRoute struct {
	url string

	mu      sync.Mutex
	bodies  []map[string]any // each POST body as it arrived
	prompts [][]map[string]any
	errors  []string // what the route threw
	closed  int      // answers whose client went away before their end
	booked  int      // book_table runs
	sdk     string   // the release of the ai package the route runs on
}

func (r *aisdkRoute) seen() (bodies []map[string]any, prompts [][]map[string]any, errs []string, closed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies), slices.Clone(r.prompts), slices.Clone(r.errors), r.closed
}

// aiMajors are the AI SDK majors the route runs on: the 6 major as "ai"
// and the current one as "ai7" (an npm alias), both pinned in
// testdata/aisdk-route/package-lock.json; server.mjs takes the package's
// name from AI_SDK.
var aiMajors = []struct{ name, pkg string }{{"ai6", "ai"}, {"ai7", "ai7"}}

// forEachAIMajor runs f once for each AI SDK major, as a subtest whose
// route (startAISDKRoute) runs on it.
func forEachAIMajor(t *testing.T, f func(t *testing.T)) {
	for _, m := range aiMajors {
		t.Run(m.name, func(t *testing.T) {
			t.Setenv("AI_SDK", m.pkg)
			f(t)
		})
	}
}

func startAISDKRoute(t *testing.T) *aisdkRoute {
	t.Helper()
	if _, err := os.Stat(filepath.Join(aisdkRouteModules, ".package-lock.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: make test installs it", aisdkRouteModules)
		}
		t.Skipf("%s is missing: run npm ci in wasm/e2e/testdata/aisdk-route", aisdkRouteModules)
	}
	widget, err := filepath.Abs(filepath.Join("..", "..", "assets", "widget"))
	require.NoError(t, err)
	r := &aisdkRoute{}
	r.url = browsertest.StartNode(t, filepath.Join("testdata", "aisdk-route"), func(line string) {
		kind, raw, _ := strings.Cut(line, " ")
		r.mu.Lock()
		defer r.mu.Unlock()
		switch kind {
		case "request":
			var q struct{ Body string }
			var body map[string]any
			if json.Unmarshal([]byte(raw), &q) == nil && json.Unmarshal([]byte(q.Body), &body) == nil {
				r.bodies = append(r.bodies, body)
			}
		case "prompt":
			var p []map[string]any
			if json.Unmarshal([]byte(raw), &p) == nil {
				r.prompts = append(r.prompts, p)
			}
		case "error":
			r.errors = append(r.errors, raw)
		case "closed":
			r.closed++
		case "sdk":
			var v struct{ Version string }
			if json.Unmarshal([]byte(raw), &v) == nil {
				r.sdk = v.Version
			}
		case "booked":
			r.booked++
		}
	}, "server.mjs", widget)
	want := "6."
	if os.Getenv("AI_SDK") == "ai7" {
		want = "7."
	}
	r.mu.Lock()
	sdk := r.sdk
	r.mu.Unlock()
	require.True(t, strings.HasPrefix(sdk, want), "the route runs on ai %sx, not %q", want, sdk)
	return r
}

// An AI SDK useChat route, written as the AI SDK's docs write it
// (convertToModelMessages, streamText, toUIMessageStreamResponse) over the
// package's mock model, serves <trickle-chat protocol="ai-sdk"> unchanged:
// the chat sends what DefaultChatTransport sends ({id, messages as UI
// messages with parts, trigger, messageId}), reads the UI message stream
// back (text, reasoning), runs the route's client-side tool and sends its
// result as a tool part with its output, which reaches the model; Stop
// keeps the text and closes the route's request; regenerate says so. The
// same route refuses the OpenAI-style body (the chat's default), as it
// did before.
func TestAChatTalksToAnAISDKRouteUnchanged(t *testing.T) {
	forEachAIMajor(t, aChatTalksToAnAISDKRouteUnchanged)
}

func aChatTalksToAnAISDKRouteUnchanged(t *testing.T) {
	r := startAISDKRoute(t)
	ctx := untouchedTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(r.url+"/")))
	require.True(t, browsertest.Eval[bool](t, ctx, `(async () => {
		await customElements.whenDefined("trickle-chat");
		const c = document.getElementById("chat");
		if (document.querySelector("trickle-answer[worker=off]") || `+browsertest.JSString(thread)+` === "main") c.setAttribute("worker", "off");
		c.chatId = "chat-1";
		return true;
	})()`))
	send := func(js string) {
		t.Helper()
		browsertest.Eval[bool](t, ctx, `(async () => { const c = document.getElementById("chat"); `+js+`; return true; })()`)
	}
	history := func() []map[string]any {
		return browsertest.Eval[[]map[string]any](t, ctx, `document.getElementById("chat").messages`)
	}

	// Text and reasoning.
	send(`await c.send("hello")`)
	bodies, prompts, errs, _ := r.seen()
	require.Empty(t, errs)
	require.Len(t, bodies, 1)
	b := bodies[0]
	require.Equal(t, "chat-1", b["id"])
	require.Equal(t, "submit-message", b["trigger"])
	require.NotContains(t, b, "messageId", "a new message has none")
	msgs := b["messages"].([]any)
	require.Len(t, msgs, 1)
	user := msgs[0].(map[string]any)
	require.Equal(t, "user", user["role"])
	require.NotEmpty(t, user["id"])
	require.Equal(t, []any{map[string]any{"type": "text", "text": "hello"}}, user["parts"])
	require.Equal(t, "user", prompts[0][len(prompts[0])-1]["role"], "convertToModelMessages took it")
	h := history()
	require.Len(t, h, 2)
	require.Equal(t, "complete", h[1]["status"])
	require.Equal(t, "Hello from the **AI SDK** route.", h[1]["content"])
	require.Equal(t, "A greeting; I greet back.", h[1]["thinking"])

	// A tool round: the route's client-side tool runs on the page, and its
	// result goes back as the tool part's output.
	send(`window.ran = []; c.tools = { get_weather: {
		description: "The weather in a city.",
		parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
		run: async (args) => { window.ran.push(args); return { city: args.city, temperature: 18 }; },
	} }; await c.send("What is the weather in Lyon?")`)
	require.Equal(t, []any{map[string]any{"city": "Lyon"}}, browsertest.Eval[[]any](t, ctx, `window.ran`))
	bodies, prompts, errs, _ = r.seen()
	require.Empty(t, errs)
	require.Len(t, bodies, 3, "the question, then the tool's result")
	round := bodies[2]
	require.Equal(t, "submit-message", round["trigger"])
	require.NotContains(t, round, "tools", "the route declares its tools itself")
	msgs = round["messages"].([]any)
	require.Len(t, msgs, 4, "two questions and two answers, the second still open")
	answer := msgs[3].(map[string]any)
	require.Equal(t, "assistant", answer["role"])
	require.Equal(t, answer["id"], round["messageId"], "the round goes on with the answer that called the tool")
	var tp map[string]any
	for _, p := range answer["parts"].([]any) {
		if p.(map[string]any)["type"] == "tool-get_weather" {
			tp = p.(map[string]any)
		}
	}
	require.NotNil(t, tp, "a tool part: %v", answer["parts"])
	require.Equal(t, "output-available", tp["state"])
	require.Equal(t, "call_1", tp["toolCallId"])
	require.Equal(t, map[string]any{"city": "Lyon"}, tp["input"])
	require.Equal(t, map[string]any{"city": "Lyon", "temperature": float64(18)}, tp["output"])
	last := prompts[len(prompts)-1]
	require.Equal(t, "tool", last[len(last)-1]["role"], "the result reached the model as a tool message")
	h = history()
	require.Equal(t, `The tool said: {"city":"Lyon","temperature":18}.`, h[len(h)-1]["content"])
	require.Equal(t, "complete", h[len(h)-1]["status"])

	// Regenerate names the answer it replaces.
	before := history()
	n := len(bodies)
	send(`await c.regenerate()`)
	bodies, _, errs, _ = r.seen()
	require.Empty(t, errs)
	regen := bodies[n]
	require.Equal(t, "regenerate-message", regen["trigger"])
	require.Equal(t, before[len(before)-3]["id"], regen["messageId"], "the first answer after the question")
	require.Len(t, regen["messages"].([]any), 3, "the history up to the question")

	// Stop: the answer stops where it was, and its request is closed (the
	// route's Request is aborted).
	send(`c.tools = {}; const done = c.send("write a long answer");
		const latest = () => [...c.querySelectorAll("trickle-answer")].at(-1);
		while (!(latest()?.text ?? "").includes("on and on")) await new Promise((r) => setTimeout(r, 10));
		c.stop(); await done`)
	h = history()
	require.Equal(t, "stopped", h[len(h)-1]["status"])
	require.Contains(t, h[len(h)-1]["content"], "on and on")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, _, n := r.seen(); n > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the route's response was not closed after Stop")
		time.Sleep(20 * time.Millisecond)
	}

	// The chat's default protocol sends OpenAI-style messages, which this
	// route cannot take (convertToModelMessages throws): the reason for
	// protocol="ai-sdk".
	send(`c.removeAttribute("protocol"); c.messages = []; await c.send("hello")`)
	_, _, errs, _ = r.seen()
	require.NotEmpty(t, errs)
	require.Equal(t, "failed", history()[1]["status"])
}

// A route's tool with needsApproval (the AI SDK's tool-approval-request,
// ai@6 and later) is asked in the chat as a page tool that asks first is:
// the call, its arguments, Approve / Deny. Deny goes back as the tool
// part's approval-responded, the route never runs the tool, and the
// denial reaches the model as the tool's result.
func TestAnAISDKRoutesApprovalRequestIsAskedAndDenyReachesTheModel(t *testing.T) {
	forEachAIMajor(t, anAISDKRoutesApprovalRequestIsAskedAndDenyReachesTheModel)
}

func anAISDKRoutesApprovalRequestIsAskedAndDenyReachesTheModel(t *testing.T) {
	r := startAISDKRoute(t)
	ctx := untouchedTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(r.url+"/")))
	require.True(t, browsertest.Eval[bool](t, ctx, `(async () => {
		await customElements.whenDefined("trickle-chat");
		const c = document.getElementById("chat");
		if (`+browsertest.JSString(thread)+` === "main") c.setAttribute("worker", "off");
		window.done = c.send("Book a table at Chez Nous");
		return true;
	})()`))
	deadline := time.Now().Add(20 * time.Second)
	for !browsertest.Eval[bool](t, ctx, `!!document.querySelector('[data-trickle-chat="approval"] [data-trickle-chat="deny"]')`) {
		require.True(t, time.Now().Before(deadline), "the approval was never asked")
		time.Sleep(20 * time.Millisecond)
	}
	got := browsertest.Eval[map[string]any](t, ctx, `(() => {
		const box = document.querySelector('[data-trickle-chat="approval"]');
		return { question: document.getElementById(box.getAttribute("aria-labelledby")).textContent,
			args: JSON.parse(box.querySelector("pre code").textContent),
			focused: document.activeElement === box.querySelector('[data-trickle-chat="approve"]') };
	})()`)
	require.Equal(t, "Run book_table?", got["question"])
	require.Equal(t, map[string]any{"restaurant": "Chez Nous", "people": float64(2)}, got["args"])
	require.Equal(t, true, got["focused"], "the question takes focus")
	browsertest.Eval[bool](t, ctx, `(async () => { document.querySelector('[data-trickle-chat="deny"]').click(); await window.done; return true; })()`)

	bodies, prompts, errs, _ := r.seen()
	require.Empty(t, errs)
	require.Len(t, bodies, 2, "the question, then the denial")
	msgs := bodies[1]["messages"].([]any)
	var tp map[string]any
	for _, p := range msgs[len(msgs)-1].(map[string]any)["parts"].([]any) {
		if p.(map[string]any)["type"] == "tool-book_table" {
			tp = p.(map[string]any)
		}
	}
	require.NotNil(t, tp)
	require.Equal(t, "approval-responded", tp["state"])
	require.Equal(t, false, tp["approval"].(map[string]any)["approved"])
	r.mu.Lock()
	booked := r.booked
	r.mu.Unlock()
	require.Zero(t, booked, "a denied tool never runs")
	last := prompts[len(prompts)-1]
	denial, _ := json.Marshal(last[len(last)-1])
	require.Equal(t, "tool", last[len(last)-1]["role"], "the denial reached the model as the tool's result")
	require.Contains(t, string(denial), "execution-denied")
	h := browsertest.Eval[[]map[string]any](t, ctx, `document.getElementById("chat").messages`)
	require.Contains(t, h[len(h)-1]["content"], "execution-denied", "and the model's answer says so")
	require.Equal(t, "complete", h[len(h)-1]["status"])
}
