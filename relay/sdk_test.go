package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/sim"
)

// sdkEnding is how testdata/sdk/sdk.mjs saw a stream end, through the
// official openai package.
type sdkEnding struct {
	Chunks int
	Text   string
	Threw  bool
	Error  *struct {
		Name, Code, Message string
		Status              int
	}
}

// sdkDir installs the openai package pinned in testdata/sdk when make
// test has not, and returns node and the folder.
func sdkDir(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("node is not installed (CI=true runs this)")
		}
		t.Fatal("node is needed to run the openai package")
	}
	dir = filepath.Join("testdata", "sdk")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		npm, err := exec.LookPath("npm")
		require.NoError(t, err, "npm is needed to install testdata/sdk's pinned openai package")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci in %s: %s", dir, out)
	}
	return node, dir
}

// openAISDK returns a function that reads one stream from base with the
// openai package (sdk.mjs), with query and, when stopAfter > 0, a DELETE
// of the stream after that many chunks.
func openAISDK(t *testing.T) func(base, query string, stopAfter int) sdkEnding {
	t.Helper()
	node, dir := sdkDir(t)
	return func(base, query string, stopAfter int) sdkEnding {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		args := []string{"sdk.mjs", base, query}
		if stopAfter > 0 {
			args = append(args, itoa(stopAfter))
		}
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "sdk.mjs: %s", stderr.String())
		var e sdkEnding
		require.NoError(t, json.Unmarshal(out, &e), "%s", out)
		return e
	}
}

// The official openai package reads a complete stream to its end, and
// raises on every other ending: stopped by DELETE, failed by the
// simulated model, failed upstream mid-answer, refused at the stream
// limit. Each error names what happened; none names the upstream.
func TestTheOpenAISDKRaisesOnEveryEndingButComplete(t *testing.T) {
	read := openAISDK(t)
	_, base := start(t)

	done := read(base, "answer=short", 0)
	require.False(t, done.Threw, "%+v", done.Error)
	short, ok := sim.Lookup("short")
	require.True(t, ok)
	require.Equal(t, short.Text, done.Text, "every chunk a completion chunk, the whole answer")

	stopped := read(base, "answer=sample-20k&gap_ms=5&ttft_ms=0&jitter_ms=0", 3)
	require.True(t, stopped.Threw, "a stopped stream does not end like a complete one")
	require.Equal(t, "stopped", stopped.Error.Code)
	require.Contains(t, stopped.Error.Message, "stopped by the client")
	require.GreaterOrEqual(t, stopped.Chunks, 3)

	failed := read(base, "answer=short&error_after=3", 0)
	require.True(t, failed.Threw)
	require.Equal(t, 3, failed.Chunks, "the chunks before the failure came")

	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("openai", "short")[:4], time.Millisecond) // then closes: no [DONE]
	})
	up := upstreamRelay(t, f, "openai")
	died := read(up, "", 0)
	require.True(t, died.Threw, "an upstream that dies mid-answer fails the SDK's stream")
	require.NotContains(t, died.Error.Message, f.url, "no upstream URL reaches the client")

	held := newFake(t, forever)
	one := upstreamRelay(t, held, "openai", relay.WithMaxStreams(1))
	resp := post(t, one+"/v1/chat/completions", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	refused := read(one, "", 0)
	require.True(t, refused.Threw)
	require.Equal(t, http.StatusTooManyRequests, refused.Error.Status)
	require.Equal(t, "RateLimitError", refused.Error.Name, "the SDK's own error for a 429")
}

// A stream whose generating relay dies, resumed on another relay of the
// fleet and read with the openai package's own stream parser: once the
// generator's lease lapses, the SDK raises with the relay's words.
func TestTheOpenAISDKRaisesWhenTheRelayGeneratingItsStreamDies(t *testing.T) {
	node, dir := sdkDir(t)
	r := startRedis(t)
	nodes := fleet(t, r, 2)
	a, b := nodes[0], nodes[1]
	resp, cancelA := openSSE(t, http.MethodPost, a.base+"/v1/chat/completions?dialect=openai&answer=sample-100k&gap_ms=5", hello, "")
	defer cancelA()
	id := resp.Header.Get("X-Trickle-Stream")
	first := readSSE(t, resp, 3, func() {})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "resume.mjs", b.base+"/v1/streams/"+id, first[2].LastEventID)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Wait()
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "resume.mjs: %s", stderr.String())
	require.Equal(t, "reading", lines.Text(), "the SDK reads the stream on the other relay")

	a.srv.Crash()
	require.True(t, lines.Scan(), "resume.mjs: %s", stderr.String())
	var e sdkEnding
	require.NoError(t, json.Unmarshal(lines.Bytes(), &e), "%s", lines.Text())
	require.True(t, e.Threw, "a lapsed lease does not end like a complete answer")
	require.Equal(t, "failed", e.Error.Code)
	require.Contains(t, e.Error.Message, "the relay generating this answer stopped")
	require.Positive(t, e.Chunks)
}

// A per-identity limit's refusal reaches SDK code as the SDK's own
// RateLimitError (status 429), with the relay's words for the limit and
// what to do.
func TestTheOpenAISDKRaisesARateLimitErrorWithTheRelaysMessageAtALimit(t *testing.T) {
	read := openAISDK(t)
	_, base := startMemory(t, relay.WithRateLimit(relay.Rate{N: 1, Per: time.Hour}))
	first := read(base, "answer=short", 0)
	require.False(t, first.Threw, "%+v", first.Error)
	over := read(base, "answer=short", 0)
	require.True(t, over.Threw, "a refused request raises")
	require.Equal(t, "RateLimitError", over.Error.Name)
	require.Equal(t, http.StatusTooManyRequests, over.Error.Status)
	require.Equal(t, "rate_limited", over.Error.Code)
	require.Contains(t, over.Error.Message, "too many requests: this client may send 1 request an hour; try again in")

	held := newFake(t, forever)
	one := limitedRelay(t, held, relay.WithMaxStreamsPerClient(1))
	resp := post(t, one+"/v1/chat/completions", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	defer resp.Body.Close()
	eventually(t, "the running generation's upstream request", func() bool { return held.requests.Load() == 1 })
	busy := read(one, "", 0)
	require.True(t, busy.Threw)
	require.Equal(t, "RateLimitError", busy.Error.Name)
	require.Equal(t, "too_many_streams", busy.Error.Code)
	require.Contains(t, busy.Error.Message, "wait for one to end or stop one")
	require.Equal(t, int32(1), held.requests.Load(), "the refused request reached no upstream")
}
