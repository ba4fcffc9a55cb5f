package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/trickle-dev/trickle/relay"
)

// countingListener counts the bytes the server writes on each accepted
// connection: what a client receives on the wire, headers and framing
// included (above TCP).
type countingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*countingConn
}

type countingConn struct {
	net.Conn
	written atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &countingConn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, cc)
	l.mu.Unlock()
	return cc, nil
}

func (l *countingListener) total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, c := range l.conns {
		n += c.written.Load()
	}
	return n
}

// wireResult is one transport's bytes for one answer.
type wireResult struct {
	Transport string `json:"transport"`
	Events    int    `json:"events"`
	Payload   int    `json:"payload_bytes"` // the SSE event text itself
	Wire      int64  `json:"wire_bytes"`    // what the server wrote on the connection
}

// wire streams the relay's copy of sample over SSE and over WebSocket, each
// on its own relay and connection at the standard pace, and counts what
// reached the wire against the event text both carry.
func wire(sample string, rate float64, chars int) ([]wireResult, error) {
	gap := time.Duration(float64(time.Second) / rate)
	query := fmt.Sprintf("?answer=%s&ttft_ms=0&jitter_ms=0&gap_ms=%d&token_chars=%d", sample, gap.Milliseconds(), chars)
	body := `{"model":"sim","stream":true,"messages":[{"role":"user","content":"bench"}]}`

	serve := func() (*countingListener, string, func(), error) {
		srv, err := relay.New(relay.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			return nil, "", nil, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, "", nil, err
		}
		cl := &countingListener{Listener: ln}
		hs := &http.Server{Handler: srv.Handler()}
		go hs.Serve(cl)
		return cl, ln.Addr().String(), func() { _ = srv.Shutdown(context.Background()); hs.Close() }, nil
	}

	var out []wireResult
	// SSE: one POST on a fresh connection, read to the end.
	{
		cl, addr, stop, err := serve()
		if err != nil {
			return nil, err
		}
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
		resp, err := client.Post("http://"+addr+"/v1/chat/completions"+query, "application/json", strings.NewReader(body))
		if err != nil {
			stop()
			return nil, err
		}
		text, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		time.Sleep(100 * time.Millisecond) // let the server finish its last write
		stop()
		if err != nil {
			return nil, err
		}
		events := strings.Count(string(text), "\n\n")
		out = append(out, wireResult{Transport: "sse", Events: events, Payload: len(text), Wire: cl.total()})
	}
	// WebSocket: one connection, the request as the first message.
	{
		cl, addr, stop, err := serve()
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		conn, _, err := websocket.Dial(ctx, "ws://"+addr+"/v1/ws"+query, nil)
		if err != nil {
			cancel()
			stop()
			return nil, err
		}
		conn.SetReadLimit(1 << 20)
		res := wireResult{Transport: "websocket"}
		err = conn.Write(ctx, websocket.MessageText, []byte(body))
		for err == nil {
			var msg []byte
			_, msg, err = conn.Read(ctx)
			if err == nil {
				res.Events++
				res.Payload += len(msg)
			}
		}
		cancel()
		time.Sleep(100 * time.Millisecond)
		stop()
		if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			return nil, fmt.Errorf("websocket: %w", err)
		}
		res.Wire = cl.total()
		out = append(out, res)
	}
	return out, nil
}
