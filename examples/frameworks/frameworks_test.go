//go:build !(js && wasm)

// Package frameworks_test installs the npm package trickle-answer from the
// tarball make dist writes into a React 19 and a Vue 3 app (each built with
// Vite, with pinned dependencies), as a developer would: it type-checks
// each app, builds it, counts the .wasm files the build ships, renders the
// element on the server (Node, no DOM), and streams an answer in headless
// Chromium from a plain backend of the page's own (no relay), receiving
// the end event through the framework's own event binding.
package frameworks_test

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/browsertest"
)

// tarball is make dist's output.
func tarball(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "dist", "trickle-answer.tgz"))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: make test runs make dist first", p)
		}
		t.Skipf("%s is missing: run make dist", p)
	}
	return p
}

// run runs a command in dir and fails the test with its output if it fails.
func run(t *testing.T, dir string, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "npm_config_fund=false", "npm_config_audit=false", "npm_config_update_notifier=false")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s in %s:\n%s", name, strings.Join(args, " "), dir, out)
	return string(out)
}

// install installs the app's pinned dependencies, then the package from
// the tarball (not saved: the tarball changes with every build).
func install(t *testing.T, app string) {
	t.Helper()
	tgz := tarball(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed to install the apps' dependencies")
	}
	run(t, app, 8*time.Minute, "npm", "ci", "--no-audit", "--no-fund")
	run(t, app, 3*time.Minute, "npm", "install", "--no-save", "--no-audit", "--no-fund", tgz)
}

// answerText is what the backend streams.
const answerText = "## Installed from npm\n\nThe app's **own backend** streams this, with no relay:\n\n- a list\n- of two\n\nThe end.\n"

// backend serves the built app and streams answerText on POST /api/chat as
// OpenAI chat completion chunks.
func backend(t *testing.T, built string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(built)))
	mux.HandleFunc("POST /api/chat", browsertest.OpenAIAnswer(answerText, 5))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTheFrameworkAppsTypeCheckBuildRenderOnTheServerAndStream(t *testing.T) {
	browsertest.Available(t)
	for _, app := range []struct {
		name, typecheck string
	}{
		{"react", "tsc"},
		{"vue", "vue-tsc"},
	} {
		t.Run(app.name, func(t *testing.T) {
			dir, err := filepath.Abs(app.name)
			require.NoError(t, err)
			install(t, dir)
			run(t, dir, 3*time.Minute, "npx", "--no-install", app.typecheck, "--noEmit")

			out := t.TempDir()
			run(t, dir, 3*time.Minute, "npx", "--no-install", "vite", "build", "--outDir", out, "--emptyOutDir")
			var wasm []string
			require.NoError(t, filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".wasm") {
					wasm = append(wasm, filepath.Base(p))
				}
				return err
			}))
			require.Len(t, wasm, 1, "an app that never imports trickle-answer/highlight ships one .wasm: %v", wasm)
			require.NotContains(t, wasm[0], "highlight")

			ssr := run(t, dir, time.Minute, "node", "ssr.mjs")
			require.Contains(t, ssr, `<trickle-answer endpoint="/api/chat"></trickle-answer>`, "the element renders on the server and the import throws nothing")

			base := backend(t, out)
			ctx := browsertest.Timeout(t, browsertest.New(t), 90*time.Second)
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(base+"/")))
			status := browsertest.Eval[string](t, ctx, `(async () => {
				for (;;) {
					const s = document.getElementById("status")?.textContent;
					if (s) return s;
					await new Promise((r) => setTimeout(r, 25));
				}
			})()`)
			require.Equal(t, "complete", status, "the framework's own binding received trickle-end")
			el := browsertest.Eval[map[string]string](t, ctx, `(() => { const a = document.querySelector("trickle-answer"); return { text: a.text, thread: a.metrics.thread, h2: a.querySelector("h2")?.textContent ?? "" }; })()`)
			require.Equal(t, answerText, el["text"])
			require.Equal(t, "Installed from npm", el["h2"], "the markdown is rendered")
			require.Equal(t, "worker", el["thread"], "the bundled worker script starts a Web Worker")
		})
	}
}
