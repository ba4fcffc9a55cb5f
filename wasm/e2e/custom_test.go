//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// seen records what the custom backend received, per path.
var (
	seenMu sync.Mutex
	seen   = map[string]seenRequest{}
)

type seenRequest struct {
	Method string
	Header http.Header
	Body   map[string]any
}

// custom is a page's own backend that is not a Trickle relay: no stream
// ids, no X-Trickle-Stream. /custom/sse answers OpenAI SSE, /custom/ndjson
// Ollama NDJSON, both the "short" answer.
func custom(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/custom/image" {
		customImage(w, r)
		return
	}
	if r.URL.Path == "/custom/error" {
		// 400 bytes of non-ASCII text: a cut at byte 300 falls inside a
		// character.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, errorBody)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/custom/recorded/") {
		customRecorded(w, r)
		return
	}
	if r.URL.Path == "/custom/401" {
		unauthorized(w, r)
		return
	}
	if r.URL.Path == "/custom/completion" {
		customCompletion(w, r)
		return
	}
	if r.URL.Path == "/custom/empty404" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if r.URL.Path == "/custom/silent" {
		customSilent(w, r)
		return
	}
	if r.URL.Path == "/custom/text" {
		customText(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/custom/resets/") {
		serveResets(w, r)
		return
	}
	if r.URL.Path == "/custom/reading/highlight" {
		serveHighlightPage(w, r)
		return
	}
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(raw, &body)
	seenMu.Lock()
	seen[r.URL.Path] = seenRequest{Method: r.Method, Header: r.Header.Clone(), Body: body}
	seenMu.Unlock()

	ndjson := r.URL.Path == "/custom/ndjson"
	dialect := stream.DialectOpenAI
	if ndjson {
		dialect = "ollama"
	}
	g, err := sim.New(sim.Params{Dialect: dialect, Answer: "short", TokenChars: 6})
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	if ndjson {
		w.Header().Set("Content-Type", "application/x-ndjson")
	} else {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	f := w.(http.Flusher)
	for i := 0; ; i++ {
		m, ok := g.Next()
		if !ok {
			break
		}
		if ndjson {
			io.WriteString(w, m.Data+"\n")
		} else {
			w.Write(sse.AppendMessage(nil, sse.Message{Event: m.Event, Data: m.Data}))
		}
		if i%5 == 0 {
			f.Flush()
		}
	}
}

func seenAt(t *testing.T, path string) seenRequest {
	seenMu.Lock()
	defer seenMu.Unlock()
	r, ok := seen[path]
	require.True(t, ok, "the backend got no request at %s", path)
	return r
}

func TestAskSendsTheHeadersPropertyAndAStreamingBody(t *testing.T) {
	ctx := tab(t)
	status := browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		a.setAttribute("endpoint", "/custom/sse");
		a.setAttribute("model", "my-model");
		a.headers = { Authorization: "Bearer t0ken", "X-Tenant": "acme" };
		return await a.ask({ messages: [{ role: "user", content: "hi" }], temperature: 0.25 });
	})()`)
	require.Equal(t, "complete", status)
	r := waitAnnouncer(t, ctx)
	require.Equal(t, canned(t, "short").Text, r.Text)
	require.Empty(t, r.StreamID, "not a relay: no stream id")
	sameDOM(t, ctx, r.Text, r.HTML)

	got := seenAt(t, "/custom/sse")
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "Bearer t0ken", got.Header.Get("Authorization"))
	require.Equal(t, "acme", got.Header.Get("X-Tenant"))
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Equal(t, true, got.Body["stream"], "stream:true is added")
	require.NotContains(t, got.Body, "model", "a body is sent as the page gave it: no model added, not even the attribute's")
	require.Equal(t, 0.25, got.Body["temperature"], "the page's fields are kept")
}

func TestAPromptNamesAModelOnlyWhenThePageSetsTheAttribute(t *testing.T) {
	ctx := tab(t)
	status := browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		a.removeAttribute("model");
		a.setAttribute("endpoint", "/custom/prompt-bare");
		const first = await a.ask("hi");
		a.setAttribute("model", "gpt-4o-mini");
		a.setAttribute("endpoint", "/custom/prompt-named");
		return first + " " + await a.ask("hi");
	})()`)
	require.Equal(t, "complete complete", status)

	bare := seenAt(t, "/custom/prompt-bare")
	require.NotContains(t, bare.Body, "model", "no model attribute: the backend picks the model")
	require.Equal(t, true, bare.Body["stream"])
	require.Equal(t, []any{map[string]any{"role": "user", "content": "hi"}}, bare.Body["messages"])
	require.Len(t, bare.Body, 2, "messages and stream, nothing else")

	named := seenAt(t, "/custom/prompt-named")
	require.Equal(t, "gpt-4o-mini", named.Body["model"])
}

func TestStreamReadsAnArbitraryFetchResponse(t *testing.T) {
	ctx := tab(t)
	status := browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		a.setAttribute("dialect", "auto");
		return await a.stream("/custom/ndjson", { method: "PUT", headers: { "X-Mine": "1" }, body: "{}" });
	})()`)
	require.Equal(t, "complete", status, "Ollama NDJSON is detected and ends with done:true")
	r := waitAnnouncer(t, ctx)
	require.Equal(t, canned(t, "short").Text, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	got := seenAt(t, "/custom/ndjson")
	require.Equal(t, http.MethodPut, got.Method, "the init is the page's own")
	require.Equal(t, "1", got.Header.Get("X-Mine"))
}

func TestAnHTTPErrorShowsASentenceAndGivesTheDeveloperTheServersMessage(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?token_chars=" + strconv.Itoa(-1)}, "bad")
	require.Equal(t, "failed", r.Status)
	require.Equal(t, "The server did not accept the request (400).", r.Notice)
	d := errorDetail(t, r)
	require.Contains(t, d.Detail, "HTTP 400")
	require.Contains(t, d.Detail, "token_chars", "the relay's own explanation is the developer's")
	require.Equal(t, 400, d.HTTPStatus)
}

// errorDetail is the detail of the trickle-error the answer dispatched.
func errorDetail(t *testing.T, r result) errorEventDetail {
	t.Helper()
	var ev struct {
		Detail errorEventDetail `json:"detail"`
	}
	n := 0
	for i, typ := range r.EventTypes {
		if typ == "trickle-error" {
			n++
			require.NoError(t, json.Unmarshal(r.Events[i], &ev))
		}
	}
	require.Equal(t, 1, n, "one trickle-error: %v", r.EventTypes)
	require.Equal(t, "failed", ev.Detail.Status)
	require.Equal(t, r.Notice, ev.Detail.Message, "the event's message is the sentence the reader was shown")
	return ev.Detail
}

type errorEventDetail struct {
	Status, Message, Reason, Detail string
	HTTPStatus                      int
}

// errorBody is what /custom/error answers: 400 bytes, none of them ASCII.
var errorBody = "é" + strings.Repeat("語", 132) + "é"

func TestAnErrorBodyOfNonASCIITextFailsTheAnswerWithAReadableMessage(t *testing.T) {
	require.Len(t, errorBody, 400)
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/error"}, "fail")
	require.Equal(t, "failed", r.Status, "ask() resolves (it hung when the message was cut inside a character)")
	require.Equal(t, "The server failed to answer (502).", r.Notice)
	d := errorDetail(t, r)
	require.True(t, utf8.ValidString(d.Detail))
	require.Contains(t, d.Detail, "HTTP 502 at "+server(t)+"/custom/error: "+errorBody, "the URL, then the whole body (400 bytes, 134 characters), no character cut in two")
	require.Equal(t, "serverError", d.Reason)
}

func TestAskingAgainStopsTheAnswerInProgress(t *testing.T) {
	ctx := tab(t)
	start(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&gap_ms=5"}, 100)
	first := browsertest.Eval[string](t, ctx, `document.getElementById("a").streamId`)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short"}, "again")
	require.Equal(t, "stopped", browsertest.Eval[string](t, ctx, `window.__p`), "the first ask settles as stopped")
	require.Equal(t, "complete", r.Status)
	require.Equal(t, canned(t, "short").Text, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	require.True(t, info(t, first).UpstreamCancelled)
}

var (
	imageOnce sync.Once
	imageURL  string
	imageHits atomic.Int64
)

// imageServer is another origin serving one PNG, counting requests.
func imageServer() string {
	imageOnce.Do(func() {
		png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
		imageURL = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			imageHits.Add(1)
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
		})).URL
	})
	return imageURL
}

// customImage streams, in the plain dialect, an answer with an image on
// the image server.
func customImage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	text := "A chart:\n\n![the chart](" + imageServer() + "/chart.png)\n\nDone.\n"
	for i := 0; i < len(text); i += 8 {
		delta, _ := json.Marshal(map[string]string{"delta": text[i:min(len(text), i+8)]})
		w.Write(sse.AppendMessage(nil, sse.Message{Data: string(delta)}))
	}
	w.Write(sse.AppendMessage(nil, sse.Message{Data: "[DONE]"}))
}

func TestImagesLoadOnlyFromAllowedOrigins(t *testing.T) {
	ctx := tab(t)
	origin := imageServer()

	before := imageHits.Load()
	requests := recordRequests(t, ctx)
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/image", "image-origins": ""}, "chart")
	require.Equal(t, "complete", r.Status)
	require.NotContains(t, r.HTML, "<img", "a third-party image is not rendered by default")
	require.Contains(t, r.HTML, "the chart")
	for _, u := range requests.before(t, ctx, server(t)) {
		require.False(t, strings.HasPrefix(u, origin+"/"), "and never requested: %s", u)
	}
	require.Equal(t, before, imageHits.Load(), "and never requested")

	r = ask(t, ctx, map[string]string{"endpoint": "/custom/image", "image-origins": "https://cdn.example " + origin}, "chart")
	require.Equal(t, "complete", r.Status)
	require.Contains(t, r.HTML, `<img src="`+origin+`/chart.png" alt="the chart">`)
	require.Eventually(t, func() bool { return imageHits.Load() > before }, 5*time.Second, 20*time.Millisecond,
		"an allowed origin's image loads")
}

func TestABearerTokenInHeadersReachesAProtectedRelayOnBothTransports(t *testing.T) {
	base := startRelay(relay.WithToken("t0ken"))
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			ctx := tabAt(t, base)
			r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short", "transport": tr}, "no token")
			require.Equal(t, "failed", r.Status, "without the token the relay refuses")

			status := browsertest.Eval[string](t, ctx, `(async () => {
				const a = document.getElementById("a");
				a.headers = { authorization: "Bearer t0ken" };
				return await a.ask("with token");
			})()`)
			require.Equal(t, "complete", status)
			require.Equal(t, canned(t, "short").Text, browsertest.Eval[string](t, ctx, `document.getElementById("a").text`))
		})
	}
}

func TestBadArgumentsFailTheAnswerAndTheWidgetLivesOn(t *testing.T) {
	ctx := tab(t)
	got := browsertest.Eval[[]string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		const cyclic = {}; cyclic.self = cyclic;
		return [
			await a.stream("http://[not a url"),
			await a.ask(cyclic),
			await a.ask(42),
			String(window.__events.filter((e) => e.type === "trickle-error").length),
		];
	})()`)
	require.Equal(t, []string{"failed", "failed", "failed", "3"}, got)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short"}, "still alive")
	require.Equal(t, "complete", r.Status)
}
