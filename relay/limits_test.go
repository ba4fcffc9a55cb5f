package relay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/testlog"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/sse"
)

func TestTooManyStreamsGet429WithRetryAfter(t *testing.T) {
	_, base := start(t, relay.WithMaxStreams(2))
	slow := "?answer=sample-20k&gap_ms=50"
	for range 2 {
		require.Equal(t, http.StatusOK, post(t, base+"/v1/chat/completions"+slow, hello).StatusCode)
	}
	resp := post(t, base+"/v1/chat/completions"+slow, hello)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	b, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(b), "limit 2")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws"+slow, nil)
	require.NoError(t, err)
	defer c.CloseNow()
	require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(hello)))
	_, msg, err := c.Read(ctx)
	require.NoError(t, err)
	require.Contains(t, string(msg), `"status":"failed"`)
	_, _, err = c.Read(ctx)
	require.Equal(t, websocket.StatusTryAgainLater, websocket.CloseStatus(err))
}

func TestABodyOverTheLimitGets413(t *testing.T) {
	_, base := start(t, relay.WithMaxBodyBytes(100))
	big := `{"stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("x", 200) + `"}]}`
	resp := post(t, base+"/v1/chat/completions", big)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body)
	require.Contains(t, string(b), "limit of 100 bytes")
}

func TestAStreamOverTheEventLimitFailsWithAStatusEvent(t *testing.T) {
	_, base := start(t, relay.WithMaxEvents(10))
	resp := post(t, base+"/v1/chat/completions?answer=short", hello)
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Len(t, evs, 11)
	require.Equal(t, relay.StatusEvent, evs[10].Type)
	require.Contains(t, evs[10].Data, "limit of 10 events")
	require.Equal(t, relay.StateFailed, info(t, base, resp.Header.Get("X-Trickle-Stream")).State)
}

func TestAnEventOverTheSizeLimitFailsTheStream(t *testing.T) {
	_, base := start(t, relay.WithMaxEventSize(120))
	resp := post(t, base+"/v1/chat/completions?answer=short&dialect=openai", hello)
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Len(t, evs, 1, "the first chunk is already over 120 bytes")
	require.Contains(t, evs[0].Data, "over the limit of 120")
}

func TestOriginsAreSameOriginByDefault(t *testing.T) {
	var logs testlog.Buffer
	_, base := start(t, relay.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	const evil = "https://evil.example"
	for range 3 {
		resp := post(t, base+"/v1/chat/completions", hello, "Origin", evil)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		// The refusal is readable by the page, so it can say what to do.
		require.Equal(t, evil, resp.Header.Get("Access-Control-Allow-Origin"))
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"))
		b, _ := io.ReadAll(resp.Body)
		var e struct {
			Error struct{ Message, Type string }
		}
		require.NoError(t, json.Unmarshal(b, &e))
		require.Equal(t, "origin_not_allowed", e.Error.Type)
		require.Contains(t, e.Error.Message, evil)
		require.Contains(t, e.Error.Message, "add it to the relay's allowed origins")
		require.NotContains(t, e.Error.Message, "--", "the library names no command-line flag")
	}
	require.Equal(t, 0, strings.Count(logs.String(), "stream started"), "a refused origin spends nothing")

	// Its preflight passes, so the refusal itself reaches the page.
	req, _ := http.NewRequest(http.MethodOptions, base+"/v1/chat/completions", nil)
	req.Header.Set("Origin", evil)
	req.Header.Set("Access-Control-Request-Method", "POST")
	pre, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	pre.Body.Close()
	require.Equal(t, http.StatusNoContent, pre.StatusCode)
	require.Equal(t, evil, pre.Header.Get("Access-Control-Allow-Origin"))

	same := post(t, base+"/v1/chat/completions?answer=short", hello, "Origin", base)
	require.Equal(t, http.StatusOK, same.StatusCode)

	// A WebSocket from the refused origin gets the refusal as its one
	// event, then a policy-violation close.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {evil}}})
	require.NoError(t, err)
	msgs, err := wsMessages(t, ws)
	require.Equal(t, websocket.StatusPolicyViolation, websocket.CloseStatus(err))
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0], "event: "+relay.StatusEvent)
	require.Contains(t, msgs[0], `"status":"failed"`)
	require.Contains(t, msgs[0], "add it to the relay's allowed origins")

	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws?answer=short",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {base}}})
	require.NoError(t, err)
	c.CloseNow()

	// Logged once per origin, at warn, whatever the number of requests.
	post(t, base+"/v1/chat/completions", hello, "Origin", "https://other.example")
	var refusals []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if strings.HasPrefix(rec["msg"].(string), "origin refused") {
			refusals = append(refusals, rec)
		}
	}
	require.Len(t, refusals, 2, "one line per refused origin: %s", logs.String())
	require.Equal(t, "WARN", refusals[0]["level"])
	require.Equal(t, evil, refusals[0]["origin"])
	require.Equal(t, "https://other.example", refusals[1]["origin"])
}

func TestAllowlistedOriginsGetCORSHeadersAndPreflights(t *testing.T) {
	_, base := start(t, relay.WithAllowedOrigins("https://app.example"))
	req, _ := http.NewRequest(http.MethodOptions, base+"/v1/chat/completions", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type, last-event-id")
	pre, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	pre.Body.Close()
	require.Equal(t, http.StatusNoContent, pre.StatusCode)
	require.Equal(t, "https://app.example", pre.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, pre.Header.Get("Access-Control-Allow-Methods"), "DELETE")
	require.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), "Last-Event-ID")

	resp := post(t, base+"/v1/chat/completions?answer=short", hello, "Origin", "https://app.example")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "https://app.example", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "X-Trickle-Stream")

	other := post(t, base+"/v1/chat/completions", hello, "Origin", "https://other.example")
	require.Equal(t, http.StatusForbidden, other.StatusCode)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://app.example"}}})
	require.NoError(t, err)
	c.CloseNow()
}

// A page elsewhere loads the widget from the relay (the README's snippet):
// module scripts and the .wasm fetch are CORS requests. The files are
// public code, so every origin may load them, as from a CDN, and never
// with credentials; the API keeps its allowlist.
func TestTheWidgetsFilesArePublicToEveryOrigin(t *testing.T) {
	widget := fstest.MapFS{"trickle.js": {Data: []byte("export {}")}}
	_, base := start(t, relay.WithWidget(widget), relay.WithAllowedOrigins("https://app.example"), relay.WithToken("s3cret"))
	for _, origin := range []string{"https://app.example", "https://other.example", ""} {
		req, _ := http.NewRequest(http.MethodGet, base+"/trickle/trickle.js", nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "origin %q", origin)
		require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"), "origin %q", origin)
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"), "origin %q", origin)
	}
	other := post(t, base+"/v1/chat/completions", hello, "Origin", "https://other.example", "Authorization", "Bearer s3cret")
	require.Equal(t, http.StatusForbidden, other.StatusCode, "the API keeps its allowlist")
}

func TestABearerTokenIsRequiredWhenConfigured(t *testing.T) {
	_, base := start(t, relay.WithToken("s3cret"))
	require.Equal(t, http.StatusUnauthorized, post(t, base+"/v1/chat/completions", hello).StatusCode)
	require.Equal(t, http.StatusUnauthorized, post(t, base+"/v1/chat/completions", hello, "Authorization", "Bearer wrong").StatusCode)
	ok := post(t, base+"/v1/chat/completions?answer=short", hello, "Authorization", "Bearer s3cret")
	require.Equal(t, http.StatusOK, ok.StatusCode)
	require.Equal(t, http.StatusOK, get(t, base+"/healthz").StatusCode, "health checks need no token")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, hs, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusUnauthorized, hs.StatusCode)
	c := wsDial(t, base, "?answer=short&access_token=s3cret", hello)
	msgs, err := wsMessages(t, c)
	require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err))
	require.NotEmpty(t, msgs)
}

func TestShutdownLetsStreamsFinishAndRefusesNewOnes(t *testing.T) {
	srv, base := start(t)
	resp := post(t, base+"/v1/chat/completions?answer=short&gap_ms=3", hello)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		done <- srv.Shutdown(ctx)
	}()
	eventually(t, "draining", func() bool { return get(t, base+"/healthz").StatusCode == http.StatusServiceUnavailable })
	refused := post(t, base+"/v1/chat/completions", hello)
	require.Equal(t, http.StatusServiceUnavailable, refused.StatusCode)
	require.NotEmpty(t, refused.Header.Get("Retry-After"))
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "[DONE]", evs[len(evs)-1].Data, "the running stream finished")
	require.NoError(t, <-done)
}

func TestShutdownPastItsDeadlineHandsClientsAResumableEnd(t *testing.T) {
	srv, base := start(t)
	resp := post(t, base+"/v1/chat/completions?answer=sample-100k&gap_ms=5", hello)
	c := wsDial(t, base, "?answer=sample-100k&gap_ms=5", hello)
	dec := decoder(t, resp.Body)
	_, err := dec.Next()
	require.NoError(t, err)
	// Both streams run before the shutdown: a WebSocket whose request the
	// relay reads once draining began is refused (1013, try again later),
	// which a loaded run with the Redis store saw.
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	_, _, err = c.Read(rctx)
	require.NoError(t, err, "the WebSocket's first event")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = srv.Shutdown(ctx)
	require.ErrorIs(t, err, relay.ErrShutdownLate)
	last := lastEvent(t, dec, "a clean end the client can resume from")
	require.NotEqual(t, "[DONE]", last.Data)
	_, err = wsMessages(t, c)
	require.Equal(t, websocket.StatusGoingAway, websocket.CloseStatus(err))
}

func TestWidgetFilesArePrecompressedTypedAndCachedByName(t *testing.T) {
	wasm := []byte("\x00asm\x01\x00\x00\x00")
	widget := fstest.MapFS{
		"trickle.0123abcd.wasm":    {Data: wasm},
		"trickle.0123abcd.wasm.br": {Data: []byte("brotli bytes")},
		"trickle.0123abcd.wasm.gz": {Data: []byte("gzip bytes")},
		"trickle.js":               {Data: []byte("console.log(1)")},
	}
	pages := fstest.MapFS{"index.html": {Data: []byte("<h1>examples</h1>")}}
	_, base := start(t, relay.WithWidget(widget), relay.WithPages(pages))

	cases := []struct {
		name, path, accept, body, encoding, ctype, cache string
	}{
		{"brotli when accepted", "/trickle/trickle.0123abcd.wasm", "gzip, br", "brotli bytes", "br", "application/wasm", "public, max-age=31536000, immutable"},
		{"gzip when brotli is not", "/trickle/trickle.0123abcd.wasm", "gzip", "gzip bytes", "gzip", "application/wasm", "public, max-age=31536000, immutable"},
		{"identity when nothing is", "/trickle/trickle.0123abcd.wasm", "identity", string(wasm), "", "application/wasm", "public, max-age=31536000, immutable"},
		{"brotli refused with q=0", "/trickle/trickle.0123abcd.wasm", "br;q=0", string(wasm), "", "application/wasm", "public, max-age=31536000, immutable"},
		{"unhashed names revalidate", "/trickle/trickle.js", "br", "console.log(1)", "", "text/javascript; charset=utf-8", "no-cache"},
		{"pages", "/examples/", "", "<h1>examples</h1>", "", "text/html; charset=utf-8", "no-cache"},
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, base+c.path, nil)
			if c.accept != "" {
				req.Header.Set("Accept-Encoding", c.accept)
			}
			resp, err := client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, c.body, string(b))
			require.Equal(t, c.encoding, resp.Header.Get("Content-Encoding"))
			require.Equal(t, c.ctype, resp.Header.Get("Content-Type"))
			require.Equal(t, c.cache, resp.Header.Get("Cache-Control"))
			require.Contains(t, resp.Header.Get("Vary"), "Accept-Encoding")
		})
	}
	require.Equal(t, http.StatusNotFound, get(t, base+"/trickle/missing.js").StatusCode)
	require.Equal(t, http.StatusNotFound, get(t, base+"/trickle/trickle.0123abcd.wasm.br").StatusCode, "siblings only through negotiation")

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(base + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "/examples/", resp.Header.Get("Location"))
	for _, old := range []string{"/examples/compare", "/examples/compare/"} {
		resp, err = noRedirect.Get(base + old)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusMovedPermanently, resp.StatusCode, "the comparison page's first address moved for good")
		require.Equal(t, "/examples/transports/", resp.Header.Get("Location"))
	}
}

// A client that stops reading never holds up the generator or the other
// readers: the generation completes, another reader gets everything, and
// the stuck one is cut at the write deadline (it may resume); one that
// does not even read up to the cut is let go after the cut wait.
func TestASlowReaderBlocksNeitherTheGeneratorNorOtherReaders(t *testing.T) {
	_, base := start(t, relay.WithWriteTimeout(300*time.Millisecond), relay.WithCutWait(300*time.Millisecond))
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	// It says it will resume: a plain client's cut (the write deadline,
	// on a loaded machine before the generation ends) cancels at once.
	fmt.Fprintf(c, "POST /v1/chat/completions?answer=sample-100k&dialect=openai&token_chars=2&gap_ms=0 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Trickle-Resume: on\r\nContent-Length: %d\r\n\r\n%s", len(hello), hello)
	br := bufio.NewReader(c)
	var id string
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if v, ok := strings.CutPrefix(line, "X-Trickle-Stream: "); ok {
			id = strings.TrimSpace(v)
		}
		if line == "\r\n" {
			break
		}
	}
	require.NotEmpty(t, id)
	// The slow client reads nothing more.
	eventually(t, "the generation to complete", func() bool { return info(t, base, id).State == relay.StateComplete })
	in := info(t, base, id)
	require.Greater(t, in.Events, 50000, "megabytes of events, far more than the socket buffers hold")

	// Another reader gets everything (resuming if a loaded test machine
	// reads it too slowly for the 300 ms write timeout).
	var evs []sse.Event
	for attempt := 0; ; attempt++ {
		last := ""
		if len(evs) > 0 {
			last = evs[len(evs)-1].LastEventID
		}
		got, err := events(get(t, base+"/v1/streams/"+id, "Last-Event-ID", last).Body)
		evs = append(evs, got...)
		if err == nil {
			break
		}
		require.Less(t, attempt, 5, "cut again and again: %v", err)
	}
	require.Len(t, evs, in.Events)
	require.Equal(t, "[DONE]", evs[len(evs)-1].Data)

	eventually(t, "the stuck reader to be cut", func() bool { return info(t, base, id).Readers == 0 })
	metrics, err := io.ReadAll(get(t, base+"/metrics").Body)
	require.NoError(t, err)
	cuts := regexp.MustCompile(`\ntrickle_slow_client_cuts_total (\d+)\n`).FindStringSubmatch(string(metrics))
	require.NotNil(t, cuts)
	require.NotEqual(t, "0", cuts[1], "the stuck reader was cut (another one may have been too, on a slow machine)")
}

func TestAtMostTwiceTheStreamLimitOfFinishedStreamsAreKept(t *testing.T) {
	_, base := start(t, relay.WithMaxStreams(1))
	var ids []string
	for range 3 {
		resp := post(t, base+"/v1/chat/completions?answer=short&token_chars=64", hello)
		io.Copy(io.Discard, resp.Body)
		ids = append(ids, resp.Header.Get("X-Trickle-Stream"))
		id := ids[len(ids)-1]
		eventually(t, "the stream to finish", func() bool { return info(t, base, id).State == relay.StateComplete })
	}
	if sharedStore == "" {
		require.Equal(t, http.StatusNotFound, get(t, base+"/v1/streams/"+ids[0]+"/info").StatusCode)
	} else {
		// Forgotten by this process, still in Redis: followed from there.
		require.Equal(t, relay.StateComplete, info(t, base, ids[0]).State)
	}
	require.Equal(t, http.StatusOK, get(t, base+"/v1/streams/"+ids[1]+"/info").StatusCode)
	require.Equal(t, http.StatusOK, get(t, base+"/v1/streams/"+ids[2]+"/info").StatusCode)
}

func TestOptionsThatCannotWorkAreRefusedByName(t *testing.T) {
	for _, c := range []struct {
		name, option string
		opt          relay.Option
	}{
		{"zero write timeout", "WithWriteTimeout", relay.WithWriteTimeout(0)},
		{"zero heartbeat", "WithHeartbeat", relay.WithHeartbeat(0)},
		{"zero lease", "WithLease", relay.WithLease(0)},
		{"negative grace", "WithGrace", relay.WithGrace(-time.Second)},
		{"negative cut wait", "WithCutWait", relay.WithCutWait(-time.Second)},
		{"negative retention", "WithRetention", relay.WithRetention(-time.Second)},
		{"zero stream limit", "WithMaxStreams", relay.WithMaxStreams(0)},
		{"negative body limit", "WithMaxBodyBytes", relay.WithMaxBodyBytes(-1)},
		{"zero event limit", "WithMaxEvents", relay.WithMaxEvents(0)},
		{"negative simulated gap", "WithSimDefaults (Gap)", relay.WithSimDefaults(relay.SimDefaults{Gap: -time.Millisecond})},
	} {
		_, err := relay.New(c.opt)
		require.ErrorIs(t, err, relay.ErrBadOption, c.name)
		require.ErrorContains(t, err, c.option+"(", c.name)
	}
}
