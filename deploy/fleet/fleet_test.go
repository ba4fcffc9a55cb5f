package fleet_test

import (
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay/sim"
)

// need finds a program the test runs, skipping the test without it —
// except under CI=true, where the test must run.
func need(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Setenv("PATH", os.Getenv("PATH")+":"+dir)
			return
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found; CI must run the fleet test (apt-get install -y %s)", name, pkg)
	}
	t.Skipf("%s not found (apt-get install -y %s); skipping the fleet test", name, pkg)
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// fleetRun is run.sh started by the test.
type fleetRun struct {
	base   string // nginx
	dir    string // logs
	out    *syncBuilder
	exited <-chan error // run.sh's end
}

// syncBuilder is a strings.Builder the script's output is written to while
// the test reads it.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startFleet builds trickle and runs deploy/fleet/run.sh with free ports,
// until the end of the test (SIGTERM to the script, which stops what it
// started by PID).
func startFleet(t *testing.T) fleetRun {
	t.Helper()
	need(t, "redis-server", "redis-server")
	need(t, "nginx", "nginx")
	if _, err := fs.Stat(assets.Widget(), "trickle.js"); err != nil {
		t.Fatal("assets/widget has no trickle.js: run make widget, then rerun the test")
	}
	bin := filepath.Join(t.TempDir(), "trickle")
	build := exec.Command("go", "build", "-o", bin, "github.com/trickle-dev/trickle/cmd/trickle")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	ports := freePorts(t, 5)
	dir := t.TempDir()
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(),
		"BIN="+bin,
		"PORT="+strconv.Itoa(ports[0]),
		fmt.Sprintf("RELAY_PORTS=%d %d %d", ports[1], ports[2], ports[3]),
		"REDIS_PORT="+strconv.Itoa(ports[4]),
		// A quick simulated model; a short lease, though not so short that
		// a loaded machine's late renewal reads as a dead relay.
		"RELAY_ARGS=--sim-ttft 20ms --sim-gap 5ms --sim-jitter 0s --lease 3s --log-level info",
		"FLEET_DIR="+dir,
	)
	log := &syncBuilder{}
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if t.Failed() {
			// What each relay logged, for the failure.
			for i := 1; i <= 3; i++ {
				b, _ := os.ReadFile(filepath.Join(dir, "relay-"+strconv.Itoa(i)+".log"))
				if len(b) > 16<<10 {
					b = b[len(b)-16<<10:]
				}
				t.Logf("relay-%d's log (its end):\n%s", i, b)
			}
		}
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	base := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	deadline := time.Now().Add(20 * time.Second)
	for _, url := range []string{
		base + "/healthz",
		fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[1]),
		fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[2]),
		fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[3]),
	} {
		for {
			select {
			case err := <-exited:
				t.Fatalf("run.sh exited at start (%v):\n%s", err, log.String())
			default:
			}
			resp, err := http.Get(url)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not ready within 20 s (%v):\n%s", url, err, log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return fleetRun{base: base, dir: dir, out: log, exited: exited}
}

// instanceOf returns which relay's log has a line with msg and stream id
// (and extra, when not empty): "relay-1".."relay-3", or "" for none.
func (f fleetRun) instanceOf(t *testing.T, msg, id, extra string) string {
	t.Helper()
	re := regexp.MustCompile(`msg="` + regexp.QuoteMeta(msg) + `" stream=` + regexp.QuoteMeta(id) + `\b[^\n]*` + regexp.QuoteMeta(extra))
	for i := 1; i <= 3; i++ {
		b, err := os.ReadFile(filepath.Join(f.dir, "relay-"+strconv.Itoa(i)+".log"))
		require.NoError(t, err)
		if re.Match(b) {
			return "relay-" + strconv.Itoa(i)
		}
	}
	return ""
}

type answer struct {
	Status     string `json:"status"`
	Text       string `json:"text"`
	StreamID   string `json:"streamId"`
	Reconnects int    `json:"reconnects"`
	Notice     string `json:"notice"`
}

// The widget in Chromium streams through nginx round-robin over three
// relays. The relay cuts the connection after 12 events (drop_after); the
// widget resumes, and nginx sends the resume to the next relay. The answer
// must come out whole each time, and at least one resume must have been
// served by a relay that did not generate the stream (round-robin also
// counts the page's own requests, so the test asks until one does, at most
// ten times per transport).
func TestTheWidgetStreamsThroughTheFleetAndSurvivesAReconnectOnAnotherInstance(t *testing.T) {
	f := startFleet(t)
	want, ok := sim.Lookup("short")
	require.True(t, ok)
	ctx := browsertest.Timeout(t, browsertest.New(t), 3*time.Minute)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.base+"/examples/")))
	for _, transport := range []string{"sse", "websocket"} {
		crossed := false
		for attempt := 0; attempt < 10 && !crossed; attempt++ {
			a, err := chromedp.Run(ctx, chromedp.Evaluate[answer](`(async () => {
				const { ready } = await import("/trickle/trickle.js");
				await ready();
				await customElements.whenDefined("trickle-answer");
				document.getElementById("fleet")?.remove();
				const a = document.createElement("trickle-answer");
				a.id = "fleet";
				a.setAttribute("endpoint", "/v1/chat/completions?answer=short&drop_after=12");
				a.setAttribute("transport", `+strconv.Quote(transport)+`);
				document.body.append(a);
				const status = await a.ask("through the fleet");
				const notice = a.querySelector('[data-trickle="notice-text"]');
				return { status, text: a.text, streamId: a.streamId, reconnects: a.metrics.reconnects,
					notice: notice ? notice.textContent : "" };
			})()`, func(p *runtime.EvaluateParams) { chromedp.EvalAwaitPromise(p) }))
			require.NoError(t, err)
			require.Equal(t, "complete", a.Status, "%s: notice %q", transport, a.Notice)
			require.Equal(t, want.Text, a.Text, "%s: nothing lost, nothing twice", transport)
			require.GreaterOrEqual(t, a.Reconnects, 1, "%s: the connection was cut and resumed", transport)
			started := f.instanceOf(t, "stream started", a.StreamID, "")
			require.NotEmpty(t, started, "%s: a relay logged the start of %s", transport, a.StreamID)
			resumedElsewhere := f.instanceOf(t, "stream resumed", a.StreamID, "followed=true")
			t.Logf("%s attempt %d: stream %s started on %s, resumed by a relay following it: %q", transport, attempt+1, a.StreamID, started, resumedElsewhere)
			if resumedElsewhere != "" {
				require.NotEqual(t, started, resumedElsewhere)
				crossed = true
			}
		}
		require.True(t, crossed, "%s: no resume landed on another relay in ten answers", transport)
	}
}

// make fleet is the fleet this package tests: it builds, then runs
// run.sh (make -n prints the commands without running them).
func TestMakeFleetRunsTheFleetScript(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	cmd := exec.Command("make", "--no-print-directory", "-n", "fleet")
	cmd.Dir = filepath.Join("..", "..")
	// Run from make test, the environment carries the outer make's
	// MAKEFLAGS and MAKELEVEL: a fresh make, not a sub-make, is wanted.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") && !strings.HasPrefix(kv, "MFLAGS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Equal(t, "./deploy/fleet/run.sh", lines[len(lines)-1], "make fleet ends by running the fleet:\n%s", out)
	require.Contains(t, string(out), "go build -o bin/trickle ./cmd/trickle", "after building the relay")
}

// A relay that dies leaves the fleet serving: run.sh says which one went
// and keeps nginx, Redis and the other relays up, and every request
// through nginx is still answered (nginx passes the dead relay's share on).
func TestKillingOneRelayLeavesTheOthersServing(t *testing.T) {
	f := startFleet(t)
	b, err := os.ReadFile(filepath.Join(f.dir, "relay-2.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	p, err := os.FindProcess(pid)
	require.NoError(t, err)
	require.NoError(t, p.Signal(syscall.SIGKILL))
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(f.out.String(), "relay 2 (port") {
		select {
		case err := <-f.exited:
			t.Fatalf("run.sh stopped when one relay died (%v):\n%s", err, f.out.String())
		default:
		}
		require.True(t, time.Now().Before(deadline), "run.sh never said the relay exited:\n%s", f.out.String())
		time.Sleep(50 * time.Millisecond)
	}
	require.Contains(t, f.out.String(), "2 relays still serve")
	// Six requests: round-robin would have sent two to the dead relay.
	for i := range 6 {
		resp, err := http.Post(f.base+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"sim","messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err, "request %d", i)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "request %d through nginx", i)
	}
	select {
	case err := <-f.exited:
		t.Fatalf("run.sh exited (%v):\n%s", err, f.out.String())
	default:
	}
}
