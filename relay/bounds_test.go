package relay_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// metric reads one unlabelled sample from the relay's /metrics.
func metric(t testing.TB, base, name string) int64 {
	t.Helper()
	resp := get(t, base+"/metrics")
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "metric %s", name)
	v, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	return int64(v)
}

// finish posts a streamed request and reads it to its end; it returns
// the stream's id.
func finish(t testing.TB, url string) string {
	t.Helper()
	resp := post(t, url, hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return resp.Header.Get("X-Trickle-Stream")
}

// The logs kept for resumes hold at most WithMaxRetainedBytes together:
// past it the oldest finished streams are forgotten first (a resume finds
// them gone), the newest stay, and /metrics says how much is held and how
// many were forgotten.
func TestRetainedLogsStayWithinTheirBudgetOldestFinishedFirst(t *testing.T) {
	const q = "/v1/chat/completions?answer=short&gap_ms=0"
	// One stream's size, as the relay counts it, from a relay without a
	// tight budget.
	_, probe := startMemory(t)
	finish(t, probe+q)
	size := metric(t, probe, "trickle_retained_bytes")
	require.Positive(t, size)

	budget := 3*size + size/2
	_, base := startMemory(t, relay.WithMaxRetainedBytes(budget))
	var ids []string
	for range 6 {
		ids = append(ids, finish(t, base+q))
		require.LessOrEqual(t, metric(t, base, "trickle_retained_bytes"), budget)
	}
	require.Equal(t, int64(3), metric(t, base, "trickle_retained_evictions_total"))
	for i, id := range ids {
		resp := get(t, base+"/v1/streams/"+id+"/info")
		if i < 3 {
			require.Equal(t, http.StatusNotFound, resp.StatusCode, "stream %d, among the oldest, was forgotten", i)
		} else {
			require.Equal(t, http.StatusOK, resp.StatusCode, "stream %d, among the newest, is kept", i)
		}
	}
}

// A running stream is never forgotten for the budget: when the running
// streams hold it, a new stream is refused in the relay's words (429
// memory_full, Retry-After), and once the running one has ended, it is
// the one forgotten to make room. A running stream that cannot grow
// within the budget fails, saying why.
func TestRunningStreamsAreNeverForgottenANewOneThatCannotFitIsRefused(t *testing.T) {
	const budget = 15 << 10
	_, base := startMemory(t, relay.WithMaxRetainedBytes(budget))
	// 10 events of 1 KiB of text, then a long stall: the stream holds most of
	// the budget, running.
	holder := post(t, base+"/v1/chat/completions?answer=sample-100k&gap_ms=0&token_chars=1024&stall_after=10&stall_ms=60000", hello)
	require.Equal(t, http.StatusOK, holder.StatusCode)
	id := holder.Header.Get("X-Trickle-Stream")
	eventually(t, "the running stream to hold most of the budget", func() bool {
		return metric(t, base, "trickle_retained_bytes") > budget-4<<10
	})

	refused := post(t, base+"/v1/chat/completions?answer=short", hello)
	r := refusalOf(t, refused, http.StatusTooManyRequests)
	require.Equal(t, "memory_full", r.Error.Code)
	require.Contains(t, r.Error.Message, "memory for streams is full")
	require.NotEmpty(t, refused.Header.Get("Retry-After"))
	require.Equal(t, int64(1), metric(t, base, "trickle_memory_full_total"))
	require.Equal(t, relay.StateRunning, info(t, base, id).State, "the running stream was kept")
	require.Zero(t, metric(t, base, "trickle_retained_evictions_total"))

	require.Equal(t, http.StatusOK, del(t, base+"/v1/streams/"+id).StatusCode)
	finish(t, base+"/v1/chat/completions?answer=short&gap_ms=0")
	require.Equal(t, int64(1), metric(t, base, "trickle_retained_evictions_total"), "the ended stream made room")
	require.Equal(t, http.StatusNotFound, get(t, base+"/v1/streams/"+id+"/info").StatusCode)

	// One stream alone over the budget: it fails when it cannot grow.
	over := post(t, base+"/v1/chat/completions?answer=sample-100k&gap_ms=0&token_chars=1024", hello)
	require.Equal(t, http.StatusOK, over.StatusCode)
	evs, err := events(over.Body)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	if last.Data == "[DONE]" {
		last = evs[len(evs)-2]
	}
	require.Equal(t, relay.StatusEvent, last.Type)
	require.Contains(t, last.Data, "the relay's memory for streams is full")
	in := info(t, base, over.Header.Get("X-Trickle-Stream"))
	require.Equal(t, relay.StateFailed, in.State)
	require.LessOrEqual(t, metric(t, base, "trickle_retained_bytes"), int64(budget+2<<10), "at most the terminal event over")
}

// connCapped runs a relay behind its per-address connection cap
// (Server.Listener), as trickle serve does.
func connCapped(t *testing.T, max int) string {
	t.Helper()
	srv, err := relay.New(relay.WithSimDefaults(fast), relay.WithMaxConnsPerAddr(max), relay.WithGrace(time.Second),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { hs.Serve(srv.Listener(ln)); close(done) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		hs.Close()
		<-done
	})
	return "http://" + ln.Addr().String()
}

// One address holds at most WithMaxConnsPerAddr connections: over it a
// new connection is answered 429 too_many_connections in the relay's
// words and closed, and counted; once one of the address's connections
// closes, a new one is served.
func TestAnAddressOverItsConnectionCapIsRefusedInTheRelaysWords(t *testing.T) {
	const max = 4
	base := connCapped(t, max)
	addr := strings.TrimPrefix(base, "http://")
	var held []net.Conn
	for range max {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		held = append(held, c)
	}
	// The held ones are idle connections (no request yet): they count.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	refusedOnce := func() *http.Response {
		resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(hello))
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	var resp *http.Response
	eventually(t, "the held connections to be counted", func() bool {
		resp = refusedOnce()
		return resp.StatusCode == http.StatusTooManyRequests
	})
	r := refusalOf(t, resp, http.StatusTooManyRequests)
	require.Equal(t, "too_many_connections", r.Error.Code)
	require.Contains(t, r.Error.Message, "too many connections from your address (at most 4 at once)")
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.True(t, resp.Close, "the refused connection is closed")

	// A WebSocket over the cap gets the same answer before any upgrade.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, wresp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws", nil)
	require.Error(t, err)
	require.Equal(t, http.StatusTooManyRequests, wresp.StatusCode)

	held[0].Close()
	eventually(t, "a place to free up", func() bool {
		resp = refusedOnce()
		return resp.StatusCode == http.StatusOK
	})
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "[DONE]", evs[len(evs)-1].Data)
	for _, c := range held {
		c.Close()
	}
	var refusedConns int64
	eventually(t, "the metrics to be served", func() bool {
		resp, err := client.Get(base + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		m := regexp.MustCompile(`(?m)^trickle_connections_refused_total (\d+)$`).FindStringSubmatch(string(b))
		require.NotNil(t, m)
		refusedConns, _ = strconv.ParseInt(m[1], 10, 64)
		return true
	})
	require.GreaterOrEqual(t, refusedConns, int64(2))
}

// A WebSocket that upgrades and never sends its request message is
// closed at the body timeout (1008, saying why), as a POST whose body
// never comes is answered 408: it holds the relay no longer.
func TestAWebSocketThatSendsNoRequestIsClosedAtTheBodyTimeout(t *testing.T) {
	_, base := start(t, relay.WithBodyTimeout(200*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws", nil)
	require.NoError(t, err)
	defer c.CloseNow()
	_, _, err = c.Read(ctx)
	var ce websocket.CloseError
	require.True(t, errors.As(err, &ce), "closed by the relay, not by the test's deadline: %v", err)
	require.Equal(t, websocket.StatusPolicyViolation, ce.Code)
	require.Equal(t, "relay: no request message within 200ms", ce.Reason)

	// One that sends it in time streams as usual.
	msgs, err := wsMessages(t, wsDial(t, base, "?answer=short&gap_ms=0", hello))
	require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err))
	require.NotEmpty(t, wsEvents(t, msgs))
}
