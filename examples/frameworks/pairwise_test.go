//go:build !(js && wasm)

package frameworks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
	"github.com/trickle-dev/trickle/relay/sim"
)

// The pairwise suite: real apps, each a page (plain, or a React +
// TypeScript build) that installed the npm package, served under the
// README's Content-Security-Policy by the app's own server, which sends
// the element's requests on to a backend. Each case asks, runs a declared
// tool round, stops mid-answer (the backend's generation ends, and the
// relay reports the cost), resumes after a cut where the backend can, and
// reloads the thread. The factors and the cases are below; every pair of
// factor values that can meet appears in at least one case
// (TestThePairwiseCasesCoverEveryPair), and docs/testing.md#real-apps
// holds the same table (TestTheCaseTableIsInTestingMd).

// factors are the suite's factors and their values, in order.
var factors = []struct {
	name   string
	values []string
}{
	{"element", []string{"answer", "chat"}},
	{"transport", []string{"sse", "websocket"}},
	{"backend", []string{"relay-sim", "relay-upstream", "node", "ai-sdk"}},
	{"auth", []string{"off", "jwt"}},
	{"page", []string{"plain", "react"}},
}

// realApp is one case: a value of every factor.
type realApp struct{ element, transport, backend, auth, page string }

func (c realApp) values() []string {
	return []string{c.element, c.transport, c.backend, c.auth, c.page}
}

func (c realApp) name() string { return strings.Join(c.values(), "/") }

func (c realApp) relay() bool { return strings.HasPrefix(c.backend, "relay-") }

// realApps holds a pairwise covering set of the factors (the first 8
// cases; the whole product has 128) and one case more.
var realApps = []realApp{
	{"answer", "sse", "relay-sim", "off", "plain"},
	{"chat", "websocket", "relay-sim", "jwt", "react"},
	{"chat", "sse", "relay-upstream", "jwt", "react"},
	{"answer", "websocket", "relay-upstream", "off", "plain"},
	{"answer", "sse", "node", "jwt", "react"},
	{"chat", "sse", "node", "off", "plain"},
	{"chat", "sse", "ai-sdk", "jwt", "plain"},
	{"answer", "sse", "ai-sdk", "off", "react"},
	// Beyond the pairs: Stop under JWT auth with a real upstream over the
	// WebSocket too (case 3 is SSE), the real-app issue's promise.
	{"chat", "websocket", "relay-upstream", "jwt", "plain"},
}

// cannotMeet says why two factor values never meet in an app, or "".
func cannotMeet(a, b string) string {
	pair := map[string]bool{a: true, b: true}
	if pair["websocket"] && (pair["node"] || pair["ai-sdk"]) {
		return "the WebSocket endpoint is the relay's: a plain Node backend or an AI SDK route serves HTTP"
	}
	return ""
}

func TestThePairwiseCasesCoverEveryPair(t *testing.T) {
	seen := map[[2]string]bool{}
	for _, c := range realApps {
		v := c.values()
		for i := range v {
			require.Contains(t, factors[i].values, v[i], "case %s: %s", c.name(), factors[i].name)
			for j := i + 1; j < len(v); j++ {
				require.Empty(t, cannotMeet(v[i], v[j]), "case %s pairs %s with %s", c.name(), v[i], v[j])
				seen[[2]string{v[i], v[j]}] = true
			}
		}
	}
	missing := 0
	for i := range factors {
		for j := i + 1; j < len(factors); j++ {
			for _, a := range factors[i].values {
				for _, b := range factors[j].values {
					if cannotMeet(a, b) == "" && !seen[[2]string{a, b}] {
						t.Errorf("no case has %s=%s with %s=%s", factors[i].name, a, factors[j].name, b)
						missing++
					}
				}
			}
		}
	}
	require.Zero(t, missing)
}

// caseTable is the cases as docs/testing.md shows them.
func caseTable() string {
	var b strings.Builder
	b.WriteString("| case |")
	for _, f := range factors {
		b.WriteString(" " + f.name + " |")
	}
	b.WriteString(" resume after a cut |\n| --- |")
	for range factors {
		b.WriteString(" --- |")
	}
	b.WriteString(" --- |\n")
	for i, c := range realApps {
		fmt.Fprintf(&b, "| %d |", i+1)
		for _, v := range c.values() {
			b.WriteString(" " + v + " |")
		}
		if c.relay() {
			b.WriteString(" yes |\n")
		} else {
			b.WriteString(" no: the backend keeps no stream to resume |\n")
		}
	}
	return b.String()
}

func TestTheCaseTableIsInTestingMd(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "testing.md"))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(doc), caseTable()), "docs/testing.md#real-apps shows the suite's cases; this is the table:\n%s", caseTable())
}

// readmeCSP is the Content-Security-Policy the README documents.
func readmeCSP(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	m := regexp.MustCompile("`Content-Security-Policy: ([^`]+)`").FindSubmatch(b)
	require.NotNil(t, m, "the README documents a Content-Security-Policy")
	return string(m[1])
}

// appServer is the app's own server: it serves the page's files under the
// README's policy and sends everything else (the element's requests, the
// relay's stream URLs, the WebSocket) on to the backend. Once armed, it
// cuts the first connection that writes cutAfter bytes to the browser
// after the arming (an answer's stream, over HTTP or a WebSocket), as a
// network that drops does: mid-answer, however fast the answer comes.
type appServer struct {
	*httptest.Server
	mu    sync.Mutex
	conns map[net.Conn]bool
	armed atomic.Bool
	gen   atomic.Int64 // counts the armings
	cuts  atomic.Int64
}

// cutAfter is how far into an answer's stream the armed cut comes.
const cutAfter = 8 << 10

func startAppServer(t *testing.T, pageDir, csp, backend string) *appServer {
	t.Helper()
	target, err := url.Parse(backend)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	// Its own connections to the backend, closed with it: no case shares
	// a connection pool with another, or with the test's own requests
	// (http.DefaultTransport, which every httptest.Server's Close
	// empties).
	tr := &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute}
	proxy.Transport = tr
	// What the proxy failed at goes to the test's log when the case
	// fails: a cut's copy errors are the point of a cut, anything else
	// is what to look at.
	proxyErrs := &lockedBuffer{}
	proxy.ErrorLog = log.New(proxyErrs, "app server's proxy: ", log.Lmicroseconds)
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		if t.Failed() {
			t.Logf("%s", proxyErrs.String())
		}
	})
	files := http.FileServer(http.Dir(pageDir))
	a := &appServer{conns: map[net.Conn]bool{}}
	a.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/v1/") {
			// The backend's request ends when the browser's does: when a
			// write to the browser fails (a Stop, a cut), or when the
			// browser's request is cancelled after the browser has gone
			// quiet.
			ctx, cancelCause := context.WithCancelCause(context.WithoutCancel(r.Context()))
			defer cancelCause(errHandlerDone)
			// Each request's end, and the connection to the backend it
			// went on, for the log of a failed case.
			var got httptrace.GotConnInfo
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i }})
			cw := &cancelWriter{ResponseWriter: w, cancel: cancelCause}
			defer func() {
				cause := "not cancelled"
				if ctx.Err() != nil {
					cause = "cancelled: " + context.Cause(ctx).Error()
				}
				fmt.Fprintf(proxyErrs, "%s %s %s: ended, the backend's request %s, on %s (reused %v, was idle %v)\n",
					time.Now().Format("15:04:05.000000"), r.Method, r.URL.Path, cause, connName(got.Conn), got.Reused, got.WasIdle)
			}()
			stop := context.AfterFunc(r.Context(), func() {
				fmt.Fprintf(proxyErrs, "%s %s %s: the browser's request was cancelled (%v)\n", time.Now().Format("15:04:05.000000"), r.Method, r.URL.Path, context.Cause(r.Context()))
				cw.cancelIfQuiet()
			})
			defer stop()
			// Full duplex: the proxy writes the answer's headers while its
			// transport may still be reading the request's body (its last
			// read, that finds the end), and a server that is not full
			// duplex closes the body at the headers: the transport's read
			// then fails ("invalid Read on closed Body") and it closes the
			// backend's connection mid-answer. A loaded run hit it in 1 of
			// 15 cases.
			if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
				t.Errorf("app server: %v", err)
			}
			if r.Body != nil {
				r.Body = &tracedBody{ReadCloser: r.Body, failed: func(err error) {
					fmt.Fprintf(proxyErrs, "%s %s %s: reading the browser's body failed: %v\n", time.Now().Format("15:04:05.000000"), r.Method, r.URL.Path, err)
				}}
			}
			proxy.ServeHTTP(cw, r.WithContext(ctx))
			return
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Cache-Control", "no-store")
		files.ServeHTTP(w, r)
	}))
	a.Listener = cutListener{a.Listener, a}
	a.Config.ConnState = func(c net.Conn, s http.ConnState) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if s == http.StateClosed {
			delete(a.conns, c)
		} else {
			a.conns[c] = true
		}
	}
	a.Start()
	t.Cleanup(func() {
		a.mu.Lock()
		for c := range a.conns {
			_ = c.Close()
		}
		a.mu.Unlock()
		a.Close()
	})
	return a
}

// arm makes the next cutAfter bytes one connection writes its last.
func (a *appServer) arm() {
	a.gen.Add(1)
	a.armed.Store(true)
}

type cutListener struct {
	net.Listener
	a *appServer
}

func (l cutListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &cutConn{Conn: c, a: l.a}, nil
}

// cutConn counts what it writes since the last arming, and closes itself
// when it is the first to reach cutAfter.
type cutConn struct {
	net.Conn
	a       *appServer
	mu      sync.Mutex
	gen     int64
	written int
}

func (c *cutConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if !c.a.armed.Load() {
		return n, err
	}
	c.mu.Lock()
	if g := c.a.gen.Load(); c.gen != g {
		c.gen, c.written = g, 0
	}
	c.written += n
	over := c.written >= cutAfter
	c.mu.Unlock()
	if over && c.a.armed.CompareAndSwap(true, false) {
		c.a.cuts.Add(1)
		_ = c.Conn.Close()
	}
	return n, err
}

// backendLog gathers what a Node backend printed, with when it arrived.
type backendLog struct {
	mu    sync.Mutex
	lines []logLine
}

type logLine struct {
	kind string
	raw  string
	at   time.Time
}

func (l *backendLog) add(line string) {
	kind, raw, _ := strings.Cut(line, " ")
	l.mu.Lock()
	l.lines = append(l.lines, logLine{kind, raw, time.Now()})
	l.mu.Unlock()
}

// find returns the lines of a kind after the first `from` lines.
func (l *backendLog) find(kind string, from int) []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logLine
	for _, x := range l.lines[min(from, len(l.lines)):] {
		if x.kind == kind {
			out = append(out, x)
		}
	}
	return out
}

func (l *backendLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// theBackend is a running backend of a case.
type theBackend struct {
	url      string // where the app's server sends requests
	endpoint string // the element's endpoint, on the app's origin
	log      *backendLog
	relay    string // the relay's own URL, for its stream info (relay backends)
	oracle   string // the long answer's whole text (relay backends)
}

const (
	upstreamKey = "sk-upstream-key-the-relay-holds"
	jwtSecret   = "pairwise-suite-jwt-secret-0123456789abcdef"
	longPrompt  = "Write a long essay, please"
	toolPrompt  = "What is the weather in Lyon?"
)

// longAnswer is model.mjs's long answer.
func longAnswer() string {
	var b strings.Builder
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&b, "Paragraph %d of the long answer goes on.\n\n", i)
	}
	return b.String()
}

func startBackend(t *testing.T, c realApp) *theBackend {
	t.Helper()
	lines := &backendLog{}
	secret := ""
	if c.auth == "jwt" {
		secret = jwtSecret
	}
	switch c.backend {
	case "relay-sim", "relay-upstream":
		opts := []relay.Option{relay.WithGrace(time.Minute),
			relay.WithSimDefaults(relay.SimDefaults{TTFT: 20 * time.Millisecond, Gap: time.Millisecond, TokenChars: 4})}
		if secret != "" {
			opts = append(opts, relay.WithAuthSecret([]byte(secret)))
		}
		// The relay's log (each request, each stream's end) goes to the
		// test's log when the case fails.
		relayLog := &lockedBuffer{}
		opts = append(opts, relay.WithLogger(slog.New(slog.NewTextHandler(relayLog, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the relay's log:\n%s", relayLog.String())
			}
		})
		b := &theBackend{endpoint: "/v1/chat/completions", log: lines}
		if c.backend == "relay-upstream" {
			up := browsertest.StartNode(t, ".", lines.add, "model.mjs", "upstream", upstreamKey)
			opts = append(opts, relay.WithUpstream(relay.Upstream{URL: up + "/v1/chat/completions", Dialect: "openai", Key: upstreamKey, Model: "model-mjs"}))
			b.oracle = longAnswer()
		} else {
			a, ok := sim.Lookup("sample-20k")
			require.True(t, ok)
			b.oracle = a.Text
		}
		_, ts := relaytest.Start(t, opts...)
		b.url, b.relay = ts.URL, ts.URL
		return b
	case "node":
		args := []string{"model.mjs", "backend"}
		if secret != "" {
			args = append(args, secret)
		}
		return &theBackend{url: browsertest.StartNode(t, ".", lines.add, args...), endpoint: "/api/chat", log: lines}
	case "ai-sdk":
		route := filepath.Join("..", "..", "wasm", "e2e", "testdata", "aisdk-route")
		if _, err := os.Stat(filepath.Join(route, "node_modules", ".package-lock.json")); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s/node_modules is missing: make test installs it", route)
			}
			t.Skipf("%s/node_modules is missing: run npm ci there", route)
		}
		widget, err := filepath.Abs(filepath.Join("..", "..", "assets", "widget"))
		require.NoError(t, err)
		args := []string{"server.mjs", widget}
		if secret != "" {
			args = append(args, secret)
		}
		return &theBackend{url: browsertest.StartNode(t, route, lines.add, args...), endpoint: "/api/chat", log: lines}
	}
	t.Fatalf("no backend %q", c.backend)
	return nil
}

// reactApp builds the React app once for the suite.
var reactApp = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "trickle-react-app-")
	if err != nil {
		return "", err
	}
	return dir, nil
})

// pageDir installs the case's page and returns the folder its server serves.
func pageDir(t *testing.T, page string) string {
	t.Helper()
	dir, err := filepath.Abs(page)
	require.NoError(t, err)
	install(t, dir)
	if page == "plain" {
		return dir
	}
	out, err := reactApp()
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(out, "app.html")); err != nil {
		run(t, dir, 3*time.Minute, "npx", "--no-install", "tsc", "--noEmit")
		run(t, dir, 3*time.Minute, "npx", "--no-install", "vite", "build", "--outDir", out, "--emptyOutDir")
	}
	return out
}

// stopLatencies are the Stop-to-cancellation times the suite saw, by case.
var stopLatencies sync.Map

func TestRealAppsPairwise(t *testing.T) {
	browsertest.Available(t)
	csp := readmeCSP(t)
	t.Cleanup(func() {
		if dir, err := reactApp(); err == nil {
			os.RemoveAll(dir)
		}
		var lines []string
		stopLatencies.Range(func(k, v any) bool {
			lines = append(lines, fmt.Sprintf("%s: %v", k, v))
			return true
		})
		sort.Strings(lines)
		t.Logf("Stop → the backend's generation ended:\n%s", strings.Join(lines, "\n"))
	})
	token, err := relay.MintToken([]byte(jwtSecret), "reader", time.Hour)
	require.NoError(t, err)
	for i, c := range realApps {
		t.Run(fmt.Sprintf("%d-%s", i+1, strings.ReplaceAll(c.name(), "/", "-")), func(t *testing.T) {
			runRealApp(t, c, csp, token)
		})
	}
}

func runRealApp(t *testing.T, c realApp, csp, token string) {
	dir := pageDir(t, c.page)
	be := startBackend(t, c)
	app := startAppServer(t, dir, csp, be.url)

	// Auth is on where the case says so: the backend refuses a request
	// without the token.
	if c.auth == "jwt" {
		resp, err := http.Post(app.URL+be.endpoint, "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "without the token the backend refuses")
	}

	q := url.Values{"element": {c.element}, "transport": {c.transport}, "endpoint": {be.endpoint}}
	if c.auth == "jwt" {
		q.Set("token", token)
	}
	if c.backend == "ai-sdk" && c.element == "chat" {
		q.Set("protocol", "ai-sdk")
	}
	pageURL := app.URL + "/app.html?" + q.Encode()
	ctx := browsertest.Timeout(t, browsertest.New(t), 3*time.Minute)
	// What the page threw or logged as an error, for a failure's message.
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			desc := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				desc += " " + e.ExceptionDetails.Exception.Description
			}
			t.Logf("page threw: %s", desc)
		case *cdpruntime.EventConsoleAPICalled:
			if e.Type == cdpruntime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, strings.Trim(string(a.Value), `"`))
				}
				t.Logf("console.error: %s", strings.Join(parts, " "))
			}
		}
	}))
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(pageURL)))
	// app.el, not window.app: the plain page's <main id="app"> is
	// window.app (named access) before its script has run.
	browsertest.WaitFor(t, ctx, 30*time.Second, `!!window.app?.el`)
	browsertest.Eval[bool](t, ctx, `(async () => {
		await customElements.whenDefined(app.el.localName);
		window.usage = [];
		document.addEventListener("trickle-usage", (e) => usage.push(e.detail));
		// The request body for a prompt: OpenAI-style, or the AI SDK's UI
		// messages for an AI SDK route (what an answer on such a page sends).
		window.body = (messages, tools) => `+browsertest.JSString(c.backend)+` === "ai-sdk"
			? { id: "answer-thread", trigger: "submit-message", messages: messages.map((m, i) => m.parts ? m : { id: "m" + i, role: m.role, parts: [{ type: "text", text: m.content }] }) }
			: { messages, ...(tools ? { tools } : {}) };
		window.latest = () => app.el.localName === "trickle-chat" ? [...app.el.querySelectorAll("trickle-answer")].at(-1) : app.el;
		return true;
	})()`)
	chat := c.element == "chat"

	// Ask.
	type turn struct {
		Status string
		Text   string
	}
	var got turn
	if chat {
		got = browsertest.Eval[turn](t, ctx, `(async () => { await app.el.send("hello"); const m = app.el.messages.at(-1); return { status: m.status, text: m.content }; })()`)
	} else {
		got = browsertest.Eval[turn](t, ctx, `(async () => { const s = await app.el.ask(body([{ role: "user", content: "hello" }])); return { status: s, text: app.el.text }; })()`)
	}
	require.Equal(t, "complete", got.Status, "ask")
	require.NotEmpty(t, strings.TrimSpace(got.Text), "ask")

	// A tool round with the page's declared tool.
	type round struct {
		Ran    []map[string]any
		Name   string
		Status string
		Text   string
	}
	var r round
	if chat {
		r = browsertest.Eval[round](t, ctx, `(async () => {
			await app.el.send(`+browsertest.JSString(toolPrompt)+`);
			const m = app.el.messages;
			const call = m.findLast((x) => x.tool_calls?.length)?.tool_calls[0];
			return { ran: app.ran, name: call?.name ?? "", status: m.at(-1).status, text: m.at(-1).content };
		})()`)
	} else {
		// The page runs the round itself: the answer's message names the
		// call, the page runs the tool and asks again with its result.
		r = browsertest.Eval[round](t, ctx, `(async () => {
			const t = app.tools.get_weather;
			const def = { type: "function", function: { name: "get_weather", description: t.description, parameters: t.parameters } };
			const user = { role: "user", content: `+browsertest.JSString(toolPrompt)+` };
			await app.el.ask(body([user], [def]));
			const m = app.el.message;
			const call = m.tool_calls?.[0];
			if (!call) return { ran: [], name: "", status: m.status, text: m.content };
			const result = await t.run(call.arguments, call);
			const next = `+browsertest.JSString(c.backend)+` === "ai-sdk"
				? [{ id: "m0", role: "user", parts: [{ type: "text", text: user.content }] },
				   { id: "m1", role: "assistant", parts: [{ type: "tool-" + call.name, toolCallId: call.id, state: "output-available", input: call.arguments, output: result }] }]
				: [user, { role: "assistant", content: m.content || null, tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.raw } }] },
				   { role: "tool", tool_call_id: call.id, content: JSON.stringify(result) }];
			const s = await app.el.ask(body(next, [def]));
			return { ran: app.ran, name: call.name, status: s, text: app.el.text };
		})()`)
	}
	require.Equal(t, "get_weather", r.Name, "the model called the declared tool")
	require.Len(t, r.Ran, 1, "the page's tool ran once")
	require.NotEmpty(t, r.Ran[0]["city"], "with arguments valid against its schema")
	require.Equal(t, "complete", r.Status, "the answer after the tool's result")
	require.Contains(t, r.Text, "18", "the answer after the tool's result carries it")
	switch c.backend {
	case "relay-upstream", "node":
		reqs := be.log.find("request", 0)
		require.NotEmpty(t, reqs)
		var last struct{ Body string }
		require.NoError(t, json.Unmarshal([]byte(reqs[len(reqs)-1].raw), &last))
		require.Contains(t, last.Body, `"tools"`, "the tool is declared in the request")
		require.Contains(t, last.Body, `"role":"tool"`, "its result went back as a tool message")
	case "ai-sdk":
		reqs := be.log.find("request", 0)
		require.Contains(t, reqs[len(reqs)-1].raw, `output-available`, "its result went back as the tool part's output")
	}

	// Stop mid-answer: the backend's generation ends, and a relay reports
	// the cost.
	usageBefore := browsertest.Eval[int](t, ctx, `usage.length`)
	mark := be.log.len()
	if c.backend == "relay-sim" {
		// The simulated model at 10 ms a token for this answer (its 20 KB
		// take about 50 s): the Stop must land while it generates however
		// slow the page is (at the suite's 1 ms a token a loaded run saw the
		// whole answer generated before the Stop came).
		browsertest.Eval[bool](t, ctx, `(app.el.setAttribute("endpoint", `+browsertest.JSString(be.endpoint+"?gap_ms=10")+`), true)`)
	}
	if chat {
		browsertest.Eval[bool](t, ctx, `(window.done = app.el.send(`+browsertest.JSString(longPrompt)+`).then(() => app.el.messages.at(-1).status), true)`)
	} else {
		browsertest.Eval[bool](t, ctx, `(window.done = app.el.ask(body([{ role: "user", content: `+browsertest.JSString(longPrompt)+` }])), true)`)
	}
	browsertest.WaitFor(t, ctx, 30*time.Second, `(latest()?.text ?? "").length > 200`)
	stopAt := time.Now()
	stopped := browsertest.Eval[string](t, ctx, `(async () => { app.el.stop(); return await done; })()`)
	require.Equal(t, "stopped", stopped)
	switch c.backend {
	case "relay-sim", "relay-upstream":
		id := browsertest.Eval[string](t, ctx, `latest().streamId`)
		require.NotEmpty(t, id)
		var in relay.Info
		if !assert.Eventually(t, func() bool {
			in = streamInfo(t, be.relay, id, token)
			return in.State == relay.StateStopped && in.UpstreamCancelled
		}, 10*time.Second, 10*time.Millisecond, "the relay stops the generation and cancels the upstream") {
			t.Fatalf("stream %s: the relay's last info: %+v", id, in)
		}
		browsertest.WaitFor(t, ctx, 10*time.Second, fmt.Sprintf(`usage.length > %d`, usageBefore))
		out := browsertest.Eval[float64](t, ctx, `usage.at(-1).usage?.output_tokens ?? 0`)
		require.Positive(t, out, "trickle-usage says what the stopped answer cost")
	}
	if c.backend != "relay-sim" {
		kind := "cancelled"
		if c.backend == "ai-sdk" {
			kind = "closed" // the route's request aborted
		}
		var seen []logLine
		require.Eventually(t, func() bool { seen = be.log.find(kind, mark); return len(seen) > 0 }, 10*time.Second, 5*time.Millisecond,
			"the backend's generation ends on Stop")
		stopLatencies.Store(c.name(), seen[0].at.Sub(stopAt).Round(time.Millisecond))
		require.Less(t, seen[0].at.Sub(stopAt), time.Minute, "well before the relay's grace")
		require.Empty(t, be.log.find("ended", mark), "the long answer did not run to its end")
	}
	if c.backend == "relay-sim" {
		browsertest.Eval[bool](t, ctx, `(app.el.setAttribute("endpoint", `+browsertest.JSString(be.endpoint)+`), true)`)
	}

	// Resume after a cut, where the backend keeps the stream: nothing lost.
	if c.relay() {
		app.arm()
		if chat {
			browsertest.Eval[bool](t, ctx, `(window.done = app.el.send(`+browsertest.JSString(longPrompt)+`).then(() => app.el.messages.at(-1).status), true)`)
		} else {
			browsertest.Eval[bool](t, ctx, `(window.done = app.el.ask(body([{ role: "user", content: `+browsertest.JSString(longPrompt)+` }])), true)`)
		}
		type resumed struct {
			Status     string
			Text       string
			Reconnects float64
		}
		res := browsertest.Eval[resumed](t, ctx, `(async () => { const s = await done; const a = latest(); return { status: s, text: a.text, reconnects: a.metrics.reconnects }; })()`)
		require.EqualValues(t, 1, app.cuts.Load(), "the stream was cut")
		require.Equal(t, "complete", res.Status, "resumed to the end")
		require.GreaterOrEqual(t, res.Reconnects, 1.0, "the answer resumed")
		require.Equal(t, be.oracle, res.Text, "nothing lost, nothing doubled")
	}

	// Reload: the thread the page saved is shown again, with no request.
	before := browsertest.Eval[any](t, ctx, `app.el.localName === "trickle-chat" ? app.el.messages : app.el.message`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(pageURL)))
	browsertest.WaitFor(t, ctx, 30*time.Second, `!!window.app && app.restored`)
	browsertest.WaitFor(t, ctx, 10*time.Second, `customElements.get(app.el.localName) !== undefined`)
	after := browsertest.Eval[any](t, ctx, `app.el.localName === "trickle-chat" ? app.el.messages : app.el.message`)
	require.Equal(t, before, after, "the thread after a reload")
	require.Zero(t, browsertest.Eval[int](t, ctx, `performance.getEntriesByType("resource").filter((e) => /\/(api|v1)\//.test(e.name)).length`),
		"a saved thread is shown without a request")
	// The one refusal the policy makes: the widget's stylesheet as an
	// inline <style> (first in <head>, so that the page's rules win), for
	// which it links the stylesheet's file instead (docs/package.md).
	for _, v := range browsertest.Eval[[]string](t, ctx, `app.violations`) {
		require.Equal(t, "style-src-elem inline", v, "nothing else the README's policy refuses")
		require.Equal(t, "link", browsertest.Eval[string](t, ctx, `document.querySelector("[data-trickle-css]")?.localName ?? ""`), "the stylesheet's file in its place")
	}
}

// streamInfo reads the relay's info on a stream.
func streamInfo(t *testing.T, base, id, token string) relay.Info {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/streams/"+url.PathEscape(id)+"/info", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var in relay.Info
	if resp.StatusCode != http.StatusOK {
		return in
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
	return in
}

// lockedBuffer is a bytes.Buffer several goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var (
	errHandlerDone      = errors.New("the app server's handler returned")
	errBrowserGoneQuiet = errors.New("the browser's request was cancelled with the backend quiet")
)

// tracedBody reports a read of the browser's request body that fails.
type tracedBody struct {
	io.ReadCloser
	failed func(error)
}

func (b *tracedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.failed(err)
	}
	return n, err
}

// connName names a connection by its two addresses.
func connName(c net.Conn) string {
	if c == nil {
		return "no connection"
	}
	return c.LocalAddr().String() + "->" + c.RemoteAddr().String()
}

// cancelWriter is the browser's response as the app server's proxy
// writes it: a write that fails cancels the backend's request.
type cancelWriter struct {
	http.ResponseWriter
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	last   time.Time // the last write that went through
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.mu.Lock()
	if err != nil {
		w.cancel(fmt.Errorf("a write to the browser failed: %w", err))
	} else {
		w.last = time.Now()
	}
	w.mu.Unlock()
	return n, err
}

// cancelIfQuiet cancels the backend's request when nothing has been
// written for a while (the backend is silent: no write would find the
// browser gone), and else leaves it to the next write.
func (w *cancelWriter) cancelIfQuiet() {
	w.mu.Lock()
	quiet := time.Since(w.last) > time.Second
	w.mu.Unlock()
	if quiet {
		w.cancel(errBrowserGoneQuiet)
	}
}

func (w *cancelWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
