//go:build !js

package stream

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The ai-sdk and text recordings are what the AI SDK itself sends: the
// pinned ai package writes them with record.mjs, streamText over its own
// mock model answered by toUIMessageStreamResponse and
// toTextStreamResponse — ai@5 in testdata/aisdk, the current major (ai@7,
// with tool approvals) in testdata/aisdk7, each pinned by its
// package-lock.json. This test runs each script again and holds the
// committed files to what the package writes now: under CI=true always (it
// needs node and npm); elsewhere it skips only when node is missing.
func TestTheAISDKRecordingsAreWhatTheAIPackageSends(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("node is not installed (CI=true runs this)")
		}
		t.Fatal("node is needed to run testdata/aisdk/record.mjs")
	}
	for _, set := range []struct {
		dir    string
		bodies int
	}{{"aisdk", 6}, {"aisdk7", 2}} {
		t.Run(set.dir, func(t *testing.T) {
			checkAISDKRecordings(t, node, set.dir, set.bodies)
		})
	}
}

// checkAISDKRecordings runs testdata/<name>/record.mjs (installing its
// pinned packages first when they are not) and compares what it writes
// with the committed recordings.
func checkAISDKRecordings(t *testing.T, node, name string, bodies int) {
	dir := filepath.Join("testdata", name)
	installed := filepath.Join(dir, "node_modules", ".package-lock.json")
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	require.NoError(t, err)
	if st, err := os.Stat(installed); err != nil || st.ModTime().Before(lock.ModTime()) {
		npm, err := exec.LookPath("npm")
		require.NoError(t, err, "npm is needed to install %s's pinned packages", dir)
		runIn(t, dir, 5*time.Minute, npm, "ci", "--no-audit", "--no-fund")
	}

	out := t.TempDir()
	runIn(t, dir, 2*time.Minute, node, "record.mjs", out)

	var headers map[string]map[string]string
	b, err := os.ReadFile(filepath.Join(out, name, "headers.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &headers))
	require.Len(t, headers, bodies, "the script records %d bodies", bodies)
	committed, err := os.ReadFile(filepath.Join(dir, "headers.json"))
	require.NoError(t, err)
	require.Equal(t, string(committed), string(b), "%s/headers.json: run npm run record in %s", dir, dir)
	for file, h := range headers {
		want, err := os.ReadFile(filepath.Join(out, file))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("testdata", file))
		require.NoError(t, err, "the recording %s is not committed", file)
		require.Equal(t, string(want), string(got), "testdata/%s is not what the ai package sends: run npm run record in %s", file, dir)

		// Read with the headers the package sent, the recording is the
		// same answer as without them (its dialect told by its bytes
		// alone, as TestRecordingsGiveTheExpectedAnswer reads it).
		withHeaders := run(t, got, nil, WithResponse(ResponseOf(func(name string) string { return h[strings.ToLower(name)] })))
		alone := run(t, got, nil, recordingOptions(file, got)...)
		require.Equal(t, alone.Text, withHeaders.Text, file)
		require.Equal(t, alone.Status, withHeaders.Status, file)
		require.Equal(t, alone.Dialect, withHeaders.Dialect, file)
		require.Zero(t, alone.Skipped, "%s: every part is one the decoder knows: %v", file, alone.Problems)
	}
}

// runIn runs a command in dir, failing the test with its output.
func runIn(t *testing.T, dir string, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_fund=false", "npm_config_audit=false", "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v in %s:\n%s", name, args, dir, out)
}
