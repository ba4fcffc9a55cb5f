package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The relay's resident memory under the two attacks of issue 36, measured
// on a trickle serve of its own (this test binary run again as the relay,
// TestRSSRelayProcess) by its /proc/PID/status. docs/security.md has the
// figures; `go test -run TestRSS -v ./cmd/trickle` prints them.

// TestRSSRelayProcess is the relay of the RSS tests: it runs only when
// they start it (TRICKLE_RSS_RELAY holds its flags, one a line), and
// prints its address on stdout.
func TestRSSRelayProcess(t *testing.T) {
	args := os.Getenv("TRICKLE_RSS_RELAY")
	if args == "" {
		t.Skip("the relay process of the RSS tests")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }() // the parent closing stdin ends it
	code := serveContext(ctx, strings.Split(args, "\n"), io.Discard, io.Discard, func(addr string) {
		fmt.Printf("ADDR %s\n", addr)
	})
	os.Exit(code)
}

// rssRelay starts the relay process with flags and returns its address
// and a reader of its resident memory in bytes.
func rssRelay(t *testing.T, flags ...string) (string, func() int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRSSRelayProcess$")
	cmd.Env = append(os.Environ(), "TRICKLE_RSS_RELAY="+strings.Join(append([]string{"--addr", "127.0.0.1:0"}, flags...), "\n"))
	if os.Getenv("TRICKLE_RSS_STDERR") != "" {
		cmd.Stderr = os.Stderr
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the relay process did not start")
	addr := strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
	pid := cmd.Process.Pid
	return addr, func() int64 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		require.NoError(t, err)
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
				kb, err := strconv.ParseInt(f[1], 10, 64)
				require.NoError(t, err)
				return kb << 10
			}
		}
		t.Fatal("no VmRSS in /proc/PID/status")
		return 0
	}
}

// peak samples rss every 20 ms until stop is closed, and returns the
// highest sample.
func peak(rss func() int64, stop <-chan struct{}) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		high := rss()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				out <- max(high, rss())
				return
			case <-tick.C:
				high = max(high, rss())
			}
		}
	}()
	return out
}

// raiseNoFile raises this process's descriptor limit (its relay process
// inherits it) to at least n, or skips.
func raiseNoFile(t *testing.T, n uint64) {
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("the descriptor limit's hard cap is %d, under the %d this test needs", lim.Max, n)
	}
	old := lim
	lim.Cur = lim.Max
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// 1,200 WebSocket connections that each send the header of a frame
// declaring a megabyte, and nothing else, raise the relay's RSS by less
// than 50 MB (on the header's word they took 385 MB: issue 36).
func TestRSSOfWebSocketsSendingAFrameHeaderAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,200 connections")
	}
	const clients = 1200
	raiseNoFile(t, 2*clients+200)
	// No per-address cap (every client is 127.0.0.1) and a body timeout
	// longer than the test: what is measured is what a connection holds.
	addr, rss := rssRelay(t, "--max-conns-per-addr", "0", "--body-timeout", "2m")
	// A first stream warms the relay up (its pools, its goroutines).
	resp, err := http.Post("http://"+addr+"/v1/chat/completions?answer=short&ttft_ms=0&gap_ms=0", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	before := rss()

	stop := make(chan struct{})
	high := peak(rss, stop)
	header := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3, 4} // text, masked, 1 MiB declared
	conns := make([]net.Conn, 0, clients)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range clients {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		_, err = c.Write(header)
		require.NoError(t, err)
	}
	// The relay reads each header as it comes; give the last ones the
	// time a loaded machine takes, sampling all along.
	time.Sleep(2 * time.Second)
	close(stop)
	grew := <-high - before
	t.Logf("RSS before %d MB, %d header-only WebSockets added %.1f MB at most (%.1f KB a connection)",
		before>>20, clients, float64(grew)/(1<<20), float64(grew)/clients/1024)
	require.Less(t, grew, int64(50<<20))
}

// One upstream stream of 300 MB of legal events fails at the per-stream
// limit (--max-stream-bytes, 64 MiB) and the relay's RSS stays under
// 200 MB all along (it took 1.73 GB: issue 36).
func TestRSSOfA300MBUpstreamStream(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 300 MB")
	}
	const total = 300 << 20
	chunk := strings.Repeat("x", 60<<10)
	event := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + chunk + "\"},\"finish_reason\":null}]}\n\n"
	var sent sync.Map
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		n := 0
		for n < total {
			k, err := io.WriteString(w, event)
			n += k
			if err != nil {
				break
			}
		}
		sent.Store("bytes", n)
	}))
	defer up.Close()
	addr, rss := rssRelay(t, "--upstream", up.URL+"/v1/chat/completions", "--upstream-model", "m")
	before := rss()

	stop := make(chan struct{})
	high := peak(rss, stop)
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	close(stop)
	peakRSS := <-high
	tail := string(body[max(0, len(body)-600):])
	require.Contains(t, tail, "event: trickle.status")
	require.Contains(t, tail, "reached the limit of 67108864 bytes", "failed at --max-stream-bytes")
	t.Logf("RSS before %d MB, peak %d MB while a 300 MB upstream stream failed at the 64 MiB limit (the client got %d MB)",
		before>>20, peakRSS>>20, len(body)>>20)
	require.Less(t, peakRSS, int64(200<<20))
}
