//go:build !js

package stream

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The ag-ui recordings are what the AG-UI TypeScript SDK itself writes: the
// pinned @ag-ui/core and @ag-ui/encoder (testdata/agui/package-lock.json)
// check each event against the SDK's own schema and encode it with the
// EventEncoder AG-UI backends answer with (record.mjs). This test runs the
// script again and holds the committed files to what the packages write
// now: under CI=true always (it needs node and npm); elsewhere it skips
// only when node is missing.
func TestTheAGUIRecordingsAreWhatTheAGUISDKWrites(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("node is not installed (CI=true runs this)")
		}
		t.Fatal("node is needed to run testdata/agui/record.mjs")
	}
	dir := filepath.Join("testdata", "agui")
	installed := filepath.Join(dir, "node_modules", ".package-lock.json")
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	require.NoError(t, err)
	if st, err := os.Stat(installed); err != nil || st.ModTime().Before(lock.ModTime()) {
		npm, err := exec.LookPath("npm")
		require.NoError(t, err, "npm is needed to install testdata/agui's pinned packages")
		runIn(t, dir, 5*time.Minute, npm, "ci", "--no-audit", "--no-fund")
	}

	out := t.TempDir()
	runIn(t, dir, 2*time.Minute, node, "record.mjs", out)

	var headers map[string]map[string]string
	b, err := os.ReadFile(filepath.Join(out, "agui", "headers.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &headers))
	require.Len(t, headers, 5, "the script records five bodies")
	committed, err := os.ReadFile(filepath.Join(dir, "headers.json"))
	require.NoError(t, err)
	require.Equal(t, string(committed), string(b), "testdata/agui/headers.json: run npm run record in testdata/agui")
	for file, h := range headers {
		want, err := os.ReadFile(filepath.Join(out, file))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("testdata", file))
		require.NoError(t, err, "the recording %s is not committed", file)
		require.Equal(t, string(want), string(got), "testdata/%s is not what the AG-UI SDK writes: run npm run record in testdata/agui", file)

		// Read with the content type the encoder gives, the recording is
		// the same answer as with its dialect told by its bytes alone.
		withType := run(t, got, nil, WithContentType(h["content-type"]))
		alone := run(t, got, nil)
		require.Equal(t, DialectAGUI, alone.Dialect, file)
		require.Equal(t, alone, withType, file)
		require.Zero(t, alone.Skipped, "%s: %v", file, alone.Problems)
	}
}
