package relay_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/sse"
)

// Thousands of clients that give up mid-stream (over SSE and WebSocket)
// leave nothing behind: every generation is cancelled after the grace
// period, and TestMain's goleak check finds no goroutine left over.
func TestThousandsOfAbortedStreamsLeaveNoGoroutineBehind(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	_, base := start(t, relay.WithGrace(20*time.Millisecond))
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	q := "/v1/chat/completions?answer=sample-100k&gap_ms=2"

	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%5 == 4 {
				c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws?answer=sample-100k&gap_ms=2", &websocket.DialOptions{HTTPClient: client})
				if err != nil {
					errs <- err
					return
				}
				defer c.CloseNow()
				if err := c.Write(ctx, websocket.MessageText, []byte(hello)); err != nil {
					errs <- err
					return
				}
				if _, _, err := c.Read(ctx); err != nil {
					errs <- err
				}
				return // CloseNow: the client vanishes
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+q, strings.NewReader(hello))
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				errs <- fmt.Errorf("POST answered %s: %s", resp.Status, b)
				return
			}
			dec, err := sse.NewDecoder(resp.Body)
			if err == nil {
				_, err = dec.Next()
			}
			if err != nil {
				errs <- err
			}
			// cancel: the client vanishes mid-answer
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	eventually(t, "every generation to be cancelled", func() bool {
		resp := get(t, base+"/metrics")
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			k, err := resp.Body.Read(buf)
			b.Write(buf[:k])
			if err != nil {
				break
			}
		}
		return strings.Contains(b.String(), "trickle_streams_active 0\n") &&
			strings.Contains(b.String(), "trickle_connections_active 0\n")
	})
}

// A reader waiting for the next event holds no goroutine: an idle stream
// costs one goroutine, the one that notices the client hanging up (SSE) or
// reads its messages (WebSocket), which is what keeps ten thousand idle
// streams small.
func TestAnIdleStreamHoldsOneGoroutine(t *testing.T) {
	const n = 200
	_, base := start(t)
	addr := strings.TrimPrefix(base, "http://")
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`
	for _, transport := range []string{"sse", "websocket"} {
		before := settledGoroutines()
		var conns []net.Conn
		for range n {
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			conns = append(conns, c)
			if transport == "sse" {
				fmt.Fprintf(c, "POST /v1/chat/completions?ttft_ms=600000 HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			} else {
				fmt.Fprintf(c, "GET /v1/ws?ttft_ms=600000 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
					"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
				// A masked text frame (mask 0) with the request.
				c.Write(append([]byte{0x81, 0x80 | byte(len(body)), 0, 0, 0, 0}, body...))
			}
			// The prelude names the stream: it is being served.
			buf := make([]byte, 4096)
			var got []byte
			for !strings.Contains(string(got), ": trickle stream ") {
				k, err := c.Read(buf)
				require.NoError(t, err, transport)
				got = append(got, buf[:k]...)
			}
		}
		eventually(t, "the handlers to return", func() bool { return runtime.NumGoroutine()-before <= n+n/10 })
		held := runtime.NumGoroutine() - before
		t.Logf("%s: %d goroutines for %d idle streams", transport, held, n)
		require.GreaterOrEqual(t, held, n*9/10, "%s: the streams are being served", transport)
		for _, c := range conns {
			c.Close()
		}
		eventually(t, "the streams' goroutines to end", func() bool { return runtime.NumGoroutine() <= before+n/10 })
	}
}

// settledGoroutines waits (up to 2 s) for the goroutine count to stop
// changing — earlier tests' connections winding down — and returns it.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return m
		}
		n = m
	}
	return n
}
