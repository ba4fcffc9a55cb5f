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
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
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

// lockstep is an OpenAI-style streaming upstream that sends each event
// only once the client has read the one before it (the client says so on
// arrived), or once wait has passed without that: whatever sits between
// the two (nginx, the relay) must pass each event on before the next one
// exists. Events the client had not read when the wait ran out are held.
// No clock decides the outcome: on a loaded machine the waits are only
// longer.
type lockstep struct {
	n       int
	wait    time.Duration
	accel   bool     // send X-Accel-Buffering: no
	arrived chan int // the client's word: token i arrived
	mu      sync.Mutex
	held    []int
	sentAll atomic.Bool // every token was sent ([DONE] comes next)
}

func newLockstep(n int, wait time.Duration, accel bool) *lockstep {
	return &lockstep{n: n, wait: wait, accel: accel, arrived: make(chan int, 4*n+8)}
}

func (l *lockstep) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if l.accel {
		w.Header().Set("X-Accel-Buffering", "no")
	}
	flusher := w.(http.Flusher)
	for i := range l.n {
		fmt.Fprintf(w, "id: s:%d\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok%02d \"}}]}\n\n", i+1, i)
		flusher.Flush()
		if !l.await(r.Context(), i) {
			l.mu.Lock()
			l.held = append(l.held, i)
			l.mu.Unlock()
		}
	}
	l.sentAll.Store(true)
	fmt.Fprint(w, "data: [DONE]\n\n")
	flusher.Flush()
}

// await waits for the client to have read token i.
func (l *lockstep) await(ctx context.Context, i int) bool {
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	for {
		select {
		case k := <-l.arrived:
			if k >= i {
				return true
			}
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// heldBack is the tokens the client had not read when the upstream gave
// up waiting for them.
func (l *lockstep) heldBack() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.held...)
}

var tokenRE = regexp.MustCompile(`tok(\d\d) `)

// reading is what a client read of a lockstep upstream's tokens.
type reading struct {
	tokens      []int // in the order they arrived
	afterAll    bool  // the first token arrived after the upstream had sent every one
	compressed  bool  // the response came gzip-compressed
	sawAnything bool
}

// read notes the tokens in one piece of the response and tells the
// upstream each new one arrived.
func (rd *reading) read(l *lockstep, piece string) {
	for _, m := range tokenRE.FindAllStringSubmatch(piece, -1) {
		k, _ := strconv.Atoi(m[1])
		if !rd.sawAnything {
			rd.sawAnything = true
			rd.afterAll = l.sentAll.Load()
		}
		rd.tokens = append(rd.tokens, k)
		select {
		case l.arrived <- k:
		default:
		}
	}
}

// readSSE posts to url and reads the event stream to its end, telling l
// of each token as its event arrives.
func readSSE(t *testing.T, url string, l *lockstep) reading {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url,
		strings.NewReader(`{"model":"sim","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	rd := reading{compressed: resp.Uncompressed}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if strings.HasPrefix(line, "data:") {
			rd.read(l, line)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
	}
	return rd
}

// requireInLockstep requires every token, in order, each read before the
// upstream sent the next.
func requireInLockstep(t *testing.T, rd reading, l *lockstep) {
	t.Helper()
	want := make([]int, l.n)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, rd.tokens, "every token, once, in order")
	require.Empty(t, l.heldBack(), "tokens the client had not read when the upstream had waited %v for them: something between buffers the stream", l.wait)
	require.False(t, rd.afterAll, "the first token came only after the upstream had sent them all")
}

// The same nginx configuration (trickle.conf: buffering on, gzip for event
// streams) streams an upstream that sends X-Accel-Buffering: no one event
// at a time, compressed (each event reaches the client before the
// upstream writes the next), and delivers one that does not in a single
// burst at the end: the header is what makes it stream. The second half
// is the control that shows this test can tell the two apart.
func TestNginxStreamsOnlyWhatTheUpstreamMarksUnbuffered(t *testing.T) {
	const n = 12
	t.Run("with X-Accel-Buffering: no, each event reaches the client before the next is sent", func(t *testing.T) {
		l := newLockstep(n, 20*time.Second, true)
		upstream := httptest.NewServer(l)
		t.Cleanup(upstream.Close)
		base := startNginx(t, strings.TrimPrefix(upstream.URL, "http://"))
		rd := readSSE(t, base+"/v1/chat/completions", l)
		require.True(t, rd.compressed, "trickle.conf compresses event streams")
		requireInLockstep(t, rd, l)
	})
	t.Run("without the header, nginx holds the events and delivers them at the end", func(t *testing.T) {
		// A short wait: the upstream goes on without the client's word.
		l := newLockstep(n, 150*time.Millisecond, false)
		upstream := httptest.NewServer(l)
		t.Cleanup(upstream.Close)
		base := startNginx(t, strings.TrimPrefix(upstream.URL, "http://"))
		rd := readSSE(t, base+"/v1/chat/completions", l)
		require.Len(t, rd.tokens, n, "every token came through")
		require.True(t, rd.afterAll, "nginx held the first event until the upstream had sent every one")
		require.Len(t, l.heldBack(), n, "no event reached the client while the upstream waited for it")
	})
}

// startRelay runs Trickle's relay (simulated model) on loopback and
// returns its host:port.
func startRelay(t *testing.T) string {
	t.Helper()
	_, ts := relaytest.Start(t)
	return strings.TrimPrefix(ts.URL, "http://")
}

// The relay's streams, behind trickle.conf, over both transports: each
// event the model (a lockstep upstream) sends reaches the client, through
// the relay and nginx, before the model sends the next; complete.
func TestRelayStreamsThroughNginxEventByEventOverSSEAndWebSocket(t *testing.T) {
	const n = 16
	// One upstream per transport: a lockstep upstream serves one stream.
	start := func(t *testing.T) (string, *lockstep) {
		l := newLockstep(n, 20*time.Second, false)
		upstream := httptest.NewServer(l)
		t.Cleanup(upstream.Close)
		_, ts := relaytest.Start(t, relay.WithUpstream(relay.Upstream{URL: upstream.URL + "/v1/chat/completions", Dialect: "openai", Key: "upstream-key"}))
		return startNginx(t, strings.TrimPrefix(ts.URL, "http://")), l
	}

	t.Run("SSE", func(t *testing.T) {
		base, l := start(t)
		rd := readSSE(t, base+"/v1/chat/completions", l)
		require.True(t, rd.compressed, "trickle.conf compresses event streams")
		requireInLockstep(t, rd, l)
	})

	t.Run("WebSocket", func(t *testing.T) {
		base, l := start(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/ws", nil)
		require.NoError(t, err, "the Upgrade should pass through nginx")
		require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
		defer conn.CloseNow()
		require.NoError(t, conn.Write(ctx, websocket.MessageText,
			[]byte(`{"model":"sim","stream":true,"messages":[{"role":"user","content":"hi"}]}`)))
		var rd reading
		for {
			_, msg, err := conn.Read(ctx)
			if err != nil {
				require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "the relay should close cleanly: %v", err)
				break
			}
			rd.read(l, string(msg))
			if strings.Contains(string(msg), "[DONE]") {
				break
			}
		}
		requireInLockstep(t, rd, l)
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
