package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/testlog"
)

func TestServeHelpExplainsEveryFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	code := serveContext(context.Background(), []string{"--help"}, &out, &errOut, nil)
	require.Equal(t, 0, code)
	help := errOut.String()
	for _, f := range []string{"addr", "heartbeat", "retry", "grace", "retention", "write-timeout", "max-streams",
		"max-body", "max-event", "max-events", "token-env", "upstream", "upstream-dialect", "upstream-key-env",
		"upstream-model", "first-token-timeout", "idle-timeout", "total-timeout", "upstream-retries", "sim-ttft",
		"sim-gap", "sim-jitter", "sim-token-chars", "shutdown-timeout", "log-format", "log-level", "allow-origin", "store", "lease", "write-path", "rate-limit", "max-streams-per-client", "tokens-per-day"} {
		require.Contains(t, help, "  -"+f+" ", "flag %s is documented", f)
	}
	require.Contains(t, help, "127.0.0.1:8080")
	require.Contains(t, help, "DELETE /v1/streams/{id}")
	require.Contains(t, help, "drop_after=N")
}

func TestServeRefusesBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		says string // the flag the message names
	}{
		{[]string{"--log-format", "xml"}, "--log-format"},
		{[]string{"--token-env", "TRICKLE_TEST_SURELY_UNSET"}, "--token-env"},
		{[]string{"--upstream", "http://127.0.0.1:1/v1/chat/completions", "--upstream-dialect", "cohere"}, "--upstream-dialect \"cohere\""},
		{[]string{"--upstream", "http://127.0.0.1:1/v1/chat/completions", "--idle-timeout", "-1s"}, "--idle-timeout -1s"},
		{[]string{"--heartbeat", "0s"}, "--heartbeat 0s"},
		{[]string{"--max-streams", "0"}, "--max-streams 0"},
		{[]string{"--sim-gap", "-1ms"}, "--sim-gap -1ms"},
		{[]string{"--store", "postgres://127.0.0.1/trickle"}, "--store"},
		{[]string{"--store", "redis://127.0.0.1:6379/notanumber"}, "--store"},
		{[]string{"--lease", "0s"}, "--lease 0s"},
		{[]string{"--write-path", "slow"}, "--write-path \"slow\""},
		{[]string{"--widget", "/nonexistent/trickle-widget"}, "--widget /nonexistent/trickle-widget"},
		{[]string{"--max-tokens", "0"}, "--max-tokens 0"},
		{[]string{"--max-input-chars", "-5"}, "--max-input-chars -5"},
		{[]string{"--models", ","}, "--models"},
		{[]string{"--rate-limit", "20/day"}, "--rate-limit \"20/day\""},
		{[]string{"--rate-limit", "0/min"}, "--rate-limit \"0/min\""},
		{[]string{"--max-streams-per-client", "0"}, "--max-streams-per-client 0"},
		{[]string{"--tokens-per-day", "-1"}, "--tokens-per-day -1"},
		{[]string{"stray"}, "stray"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := serveContext(context.Background(), c.args, &out, &errOut, nil)
		require.Equal(t, 2, code, "%v: %s", c.args, errOut.String())
		require.Contains(t, errOut.String(), c.says)
		require.NotContains(t, errOut.String(), "With", "%v: the message names the flag, not the library's option", c.args)
	}
}

func TestServeStreamsOnLoopbackAndShutsDownOnSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out, logs testlog.Buffer
	go func() {
		done <- serveContext(ctx, []string{"--addr", "127.0.0.1:0", "--sim-ttft", "1ms", "--sim-gap", "1ms", "--log-format", "json"},
			&out, &logs, func(addr string) { ready <- addr })
	}()
	addr := <-ready
	require.True(t, strings.HasPrefix(addr, "127.0.0.1:"))

	resp, err := http.Post("http://"+addr+"/v1/chat/completions?answer=short", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	require.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"))

	// A page of another origin is told the flag that allows it.
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Origin", "https://other.example")
	refused, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	msg, _ := io.ReadAll(refused.Body)
	refused.Body.Close()
	require.Equal(t, http.StatusForbidden, refused.StatusCode)
	require.Contains(t, string(msg), "start the relay with --allow-origin https://other.example")

	h, err := http.Get("http://" + addr + "/examples/")
	require.NoError(t, err)
	h.Body.Close()
	require.Equal(t, http.StatusOK, h.StatusCode, "the example pages are built in")

	cancel() // SIGTERM
	select {
	case code := <-done:
		require.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not shut down")
	}
	require.Contains(t, out.String(), "trickle relay on http://"+addr)
	require.Contains(t, logs.String(), `"msg":"stream started"`)
	require.Contains(t, logs.String(), `"msg":"relay drained"`)
}

// serveUntil runs trickle serve with args until the test ends and returns
// its address and its logs.
func serveUntil(t *testing.T, args ...string) (string, *testlog.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out, logs testlog.Buffer
	go func() {
		done <- serveContext(ctx, append([]string{"--addr", "127.0.0.1:0", "--log-format", "json"}, args...), &out, &logs, func(addr string) { ready <- addr })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not shut down")
		}
	})
	select {
	case addr := <-ready:
		return addr, &logs
	case code := <-done:
		t.Fatalf("serve exited with %d: %s", code, logs.String())
		return "", nil
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestServeServesTheWidgetOfAFolderWithWidget(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trickle.js"), []byte("export const fromTheFolder = 1;\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trickle.0123456789.wasm"), []byte("\x00asm"), 0o644))
	addr, _ := serveUntil(t, "--widget", dir)
	code, body := get(t, "http://"+addr+"/trickle/trickle.js")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "export const fromTheFolder = 1;\n", body)
	code, _ = get(t, "http://"+addr+"/trickle/trickle.0123456789.wasm")
	require.Equal(t, http.StatusOK, code)
}

func TestServeBuiltWithoutTheWidgetSaysSoOnceAndAnswers503(t *testing.T) {
	saved := builtinWidget
	builtinWidget = func() fs.FS { return fstest.MapFS{"README.md": {Data: []byte("built by make build")}} }
	t.Cleanup(func() { builtinWidget = saved })
	addr, logs := serveUntil(t)
	require.Equal(t, 1, strings.Count(logs.String(), noWidget), "one warning at start: %s", logs.String())
	require.Contains(t, noWidget, "make build")
	code, body := get(t, "http://"+addr+"/trickle/trickle.js")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, noWidget)
	code, _ = get(t, "http://"+addr+"/v1/chat/completions")
	require.NotEqual(t, http.StatusServiceUnavailable, code, "the API still works")
}

func TestServeLimitsEachClientWithTheFlags(t *testing.T) {
	addr, _ := serveUntil(t, "--sim-ttft", "1ms", "--sim-gap", "1ms", "--rate-limit", "1/h", "--max-streams-per-client", "2", "--tokens-per-day", "100000")
	ask := func() (*http.Response, string) {
		resp, err := http.Post("http://"+addr+"/v1/chat/completions?answer=short", "application/json",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(b)
	}
	first, _ := ask()
	require.Equal(t, http.StatusOK, first.StatusCode)
	over, body := ask()
	require.Equal(t, http.StatusTooManyRequests, over.StatusCode)
	require.NotEmpty(t, over.Header.Get("Retry-After"))
	require.Contains(t, body, `"code":"rate_limited"`)
	require.Contains(t, body, "1 request an hour")
}
