package nginx_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/relaytest"
)

// findNginx returns the nginx binary, skipping the test when there is none
// — except under CI=true, where the test must run.
func findNginx(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nginx", "/usr/sbin/nginx"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("nginx not found; CI must run the nginx test (apt-get install -y nginx)")
	}
	t.Skip("nginx not found (apt-get install -y nginx); skipping the nginx test")
	return ""
}

// startNginx runs nginx in the foreground with deploy/nginx/trickle.conf,
// pointed at upstream (host:port) and listening on a free loopback port.
// Everything nginx writes lives in t.TempDir(). It returns the base URL.
func startNginx(t *testing.T, upstream string) string {
	t.Helper()
	example, err := os.ReadFile("trickle.conf")
	require.NoError(t, err)
	return startNginxSite(t, upstream, string(example))
}

// startNginxSite is startNginx with site, a server configuration in the
// form of trickle.conf (its upstream server 127.0.0.1:8080 and its listen
// 80 are replaced), in place of trickle.conf itself.
func startNginxSite(t *testing.T, upstream, site string) string {
	t.Helper()
	bin := findNginx(t)
	port := freePort(t)
	for old, new := range map[string]string{
		"server 127.0.0.1:8080;": "server " + upstream + ";",
		"listen 80;":             "listen 127.0.0.1:" + strconv.Itoa(port) + ";",
	} {
		require.Equalf(t, 1, strings.Count(site, old), "the site should contain %q exactly once", old)
		site = strings.Replace(site, old, new, 1)
	}

	prefix := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(prefix, "trickle.conf"), []byte(site), 0o644))
	user := ""
	if os.Geteuid() == 0 {
		// Workers would otherwise drop to "nobody" and could not write the
		// temp directories inside t.TempDir().
		user = "user root root;"
	}
	main := fmt.Sprintf(`
daemon off;
worker_processes 1;
%[2]s
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/trickle.conf;
}
`, prefix, user)
	conf := filepath.Join(prefix, "nginx.conf")
	require.NoError(t, os.WriteFile(conf, []byte(main), 0o644))

	errorLog := filepath.Join(prefix, "error.log")
	cmd := exec.Command(bin, "-p", prefix, "-c", conf, "-e", errorLog)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			logText, _ := os.ReadFile(errorLog)
			t.Fatalf("nginx exited at start (%v): %s\n%s", err, out.String(), logText)
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			logText, _ := os.ReadFile(errorLog)
			t.Fatalf("nginx did not listen on %s within 10 s: %s\n%s", addr, out.String(), logText)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// paced is an upstream that writes n OpenAI-style events, gap apart,
// flushing each one. With accel it marks the response
// `X-Accel-Buffering: no`, as the relay does.
func paced(n int, gap time.Duration, accel bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		if accel {
			w.Header().Set("X-Accel-Buffering", "no")
		}
		flusher := w.(http.Flusher)
		for i := range n {
			if i > 0 {
				time.Sleep(gap)
			}
			fmt.Fprintf(w, "id: s:%d\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%02d \"}}]}\n\n", i+1, i)
			flusher.Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		flusher.Flush()
	})
}

// arrivals posts to url and returns, for each SSE event of the response,
// how long after the request was sent its last byte arrived, and whether
// the response came gzip-compressed (Go's client undoes it transparently).
func arrivals(t *testing.T, url string) ([]time.Duration, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url,
		strings.NewReader(`{"model":"sim","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var times []time.Duration
	br := bufio.NewReader(resp.Body)
	inEvent := false
	for {
		line, err := br.ReadString('\n')
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if strings.TrimRight(line, "\r\n") == "" {
			if inEvent {
				times = append(times, time.Since(start))
			}
			inEvent = false
			continue
		}
		if !strings.HasPrefix(line, ":") {
			inEvent = true
		}
	}
	return times, resp.Uncompressed
}

// gaps returns the time between consecutive arrivals.
func gaps(times []time.Duration) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(times); i++ {
		out = append(out, times[i]-times[i-1])
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// The same nginx configuration (trickle.conf: buffering on, gzip for event
// streams) streams an upstream that sends X-Accel-Buffering: no one event
// at a time, compressed, and delivers one that does not in a single burst
// at the end: the header is what makes it stream. The second half is the
// control that shows this test can tell the two apart.
func TestNginxStreamsOnlyWhatTheUpstreamMarksUnbuffered(t *testing.T) {
	const n, gap = 12, 80 * time.Millisecond
	upstreamSpan := time.Duration(n) * gap // n-1 gaps plus [DONE] right after

	for _, tc := range []struct {
		name  string
		accel bool
	}{
		{"with X-Accel-Buffering: no, events arrive spread out like upstream sent them", true},
		{"without the header, nginx holds the events and delivers them in one burst", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := httptest.NewServer(paced(n, gap, tc.accel))
			t.Cleanup(upstream.Close)
			base := startNginx(t, strings.TrimPrefix(upstream.URL, "http://"))

			times, gzipped := arrivals(t, base+"/v1/chat/completions")
			require.Len(t, times, n+1, "every event and [DONE] should come through")
			require.True(t, gzipped, "trickle.conf compresses event streams")
			spread := times[len(times)-1] - times[0]
			t.Logf("first event after %v, spread %v, median gap %v (upstream gap %v)",
				times[0].Round(time.Millisecond), spread.Round(time.Millisecond), median(gaps(times)).Round(time.Millisecond), gap)

			if tc.accel {
				require.Less(t, times[0], upstreamSpan/2, "the first event should not wait for the rest")
				require.GreaterOrEqual(t, spread, upstreamSpan*6/10, "arrivals should span the upstream's timeline")
				require.GreaterOrEqual(t, median(gaps(times)), gap/2, "typical gap should match the upstream's")
			} else {
				require.GreaterOrEqual(t, times[0], upstreamSpan*6/10, "nginx should have held the first event back")
				require.Less(t, spread, gap/2, "everything should arrive at once")
			}
		})
	}
}

// startRelay runs Trickle's relay (simulated model) on loopback and
// returns its host:port.
func startRelay(t *testing.T) string {
	t.Helper()
	_, ts := relaytest.Start(t)
	return strings.TrimPrefix(ts.URL, "http://")
}

// The relay's own streams, behind trickle.conf, over both transports:
// events arrive spread out as the simulated model paces them, complete.
func TestRelayStreamsThroughNginxEventByEventOverSSEAndWebSocket(t *testing.T) {
	const gap = 60 * time.Millisecond
	base := startNginx(t, startRelay(t))
	// The short answer in 30-character tokens: about 20 events.
	query := "?answer=short&ttft_ms=0&jitter_ms=0&token_chars=30&gap_ms=" + strconv.Itoa(int(gap/time.Millisecond))

	check := func(t *testing.T, times []time.Duration) {
		t.Helper()
		require.Greater(t, len(times), 10)
		spread := times[len(times)-1] - times[0]
		t.Logf("%d events, spread %v, median gap %v (model gap %v)", len(times), spread.Round(time.Millisecond), median(gaps(times)).Round(time.Millisecond), gap)
		require.GreaterOrEqual(t, spread, time.Duration(len(times)-2)*gap*6/10, "arrivals should span the model's timeline")
		require.GreaterOrEqual(t, median(gaps(times)), gap/2, "typical gap should match the model's")
	}

	t.Run("SSE", func(t *testing.T) {
		times, gzipped := arrivals(t, base+"/v1/chat/completions"+query)
		require.True(t, gzipped, "trickle.conf compresses event streams")
		check(t, times)
	})

	t.Run("WebSocket", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws"+query, nil)
		require.NoError(t, err, "the Upgrade should pass through nginx")
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		defer conn.CloseNow()
		start := time.Now()
		require.NoError(t, conn.Write(ctx, websocket.MessageText,
			[]byte(`{"model":"sim","stream":true,"messages":[{"role":"user","content":"hi"}]}`)))
		var times []time.Duration
		for {
			_, msg, err := conn.Read(ctx)
			if err != nil {
				require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "the relay should close cleanly: %v", err)
				break
			}
			if strings.Contains(string(msg), "data:") {
				times = append(times, time.Since(start))
			}
			if strings.Contains(string(msg), "[DONE]") {
				break
			}
		}
		check(t, times)
	})
}

// A page served through nginx on a port other than 80 calls the API with
// an Origin that has that port: trickle.conf must forward Host with it, or
// the relay takes the page for another origin and refuses it (403).
func TestAPageServedThroughNginxOnAnyPortMayUseTheAPI(t *testing.T) {
	base := startNginx(t, startRelay(t))
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions?answer=short&ttft_ms=0&gap_ms=0",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {base}}})
	require.NoError(t, err, "the WebSocket of a same-origin page")
	conn.CloseNow()
}
