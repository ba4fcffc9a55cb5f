//go:build !(js && wasm)

// Package frameworks_test installs the npm package trickle-answer from the
// tarball make dist writes into a React 19 and a Vue 3 app (each built with
// Vite, with pinned dependencies), as a developer would: it type-checks
// each app, builds it, counts the .wasm files the build ships, renders the
// element on the server (Node, no DOM), and streams an answer in headless
// Chromium from a plain Node backend of the page's own (backend.mjs, no
// relay), receiving the end event through the framework's own event
// binding. A plain HTML page installs it the same way and uses it with no
// build step.
package frameworks_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
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

// installed holds the apps install has installed in this run.
var installed sync.Map

// install installs the app's pinned dependencies, then the package from
// the tarball (not saved: the tarball changes with every build), once a
// run.
func install(t *testing.T, app string) {
	t.Helper()
	if _, done := installed.Load(app); done {
		return
	}
	defer installed.Store(app, true)
	tgz := tarball(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed to install the apps' dependencies")
	}
	run(t, app, 8*time.Minute, "npm", "ci", "--no-audit", "--no-fund")
	run(t, app, 3*time.Minute, "npm", "install", "--no-save", "--no-audit", "--no-fund", tgz)
}

// answerText is what the backend streams.
const answerText = "## Installed from npm\n\nThe app's **own backend** streams this, with no relay:\n\n- a list\n- of two\n\nThe end.\n"

// nodeBackend is backend.mjs running: a plain Node server of the page's
// own (no relay) serving a folder and streaming answerText on POST
// /api/chat as OpenAI chat completion chunks.
type nodeBackend struct {
	url string

	mu   sync.Mutex
	gets []string // the paths it served, in order
}

// served returns the paths the backend has served so far.
func (b *nodeBackend) served() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.gets)
}

// backend starts backend.mjs on dir and ends it (by its PID) with the test.
func backend(t *testing.T, dir string) *nodeBackend {
	t.Helper()
	answer := filepath.Join(t.TempDir(), "answer.md")
	require.NoError(t, os.WriteFile(answer, []byte(answerText), 0o644))
	b := &nodeBackend{}
	b.url = browsertest.StartNode(t, ".", func(line string) {
		if p, ok := strings.CutPrefix(line, "GET "); ok {
			b.mu.Lock()
			b.gets = append(b.gets, p)
			b.mu.Unlock()
		}
	}, "backend.mjs", dir, answer)
	return b
}

// wasmFiles returns the base names of the .wasm files under dir.
func wasmFiles(t *testing.T, dir string) []string {
	t.Helper()
	var wasm []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".wasm") {
			wasm = append(wasm, filepath.Base(p))
		}
		return err
	}))
	return wasm
}

func TestTheFrameworkAppsTypeCheckBuildRenderOnTheServerAndStream(t *testing.T) {
	browsertest.Available(t)
	for _, app := range []struct {
		name, typecheck string
	}{
		{"react", "tsc"},
		{"vue", "vue-tsc"},
		{"plain", ""}, // a plain HTML page: no types, no build step
	} {
		t.Run(app.name, func(t *testing.T) {
			dir, err := filepath.Abs(app.name)
			require.NoError(t, err)
			install(t, dir)

			served := dir
			if app.typecheck != "" {
				run(t, dir, 3*time.Minute, "npx", "--no-install", app.typecheck, "--noEmit")

				served = t.TempDir()
				run(t, dir, 3*time.Minute, "npx", "--no-install", "vite", "build", "--outDir", served, "--emptyOutDir")
				wasm := wasmFiles(t, served)
				require.Len(t, wasm, 1, "an app that never imports trickle-answer/highlight ships one .wasm: %v", wasm)
				require.NotContains(t, wasm[0], "highlight")

				ssr := run(t, dir, time.Minute, "node", "ssr.mjs")
				require.Contains(t, ssr, `<trickle-answer endpoint="/api/chat"></trickle-answer>`, "the element renders on the server and the import throws nothing")
			}

			be := backend(t, served)
			ctx := browsertest.Timeout(t, browsertest.New(t), 90*time.Second)
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(be.url+"/")))
			status := browsertest.Eval[string](t, ctx, `(async () => {
				for (;;) {
					const s = document.getElementById("status")?.textContent;
					if (s) return s;
					await new Promise((r) => setTimeout(r, 25));
				}
			})()`)
			require.Equal(t, "complete", status, "the page's own binding received trickle-end")
			el := browsertest.Eval[map[string]string](t, ctx, `(() => { const a = document.querySelector("trickle-answer"); return { text: a.text, thread: a.metrics.thread, h2: a.querySelector("h2")?.textContent ?? "" }; })()`)
			require.Equal(t, answerText, el["text"])
			require.Equal(t, "Installed from npm", el["h2"], "the markdown is rendered")
			require.Equal(t, "worker", el["thread"], "the package's worker script starts a Web Worker")

			var wasm []string
			for _, p := range be.served() {
				if strings.HasSuffix(p, ".wasm") {
					wasm = append(wasm, path.Base(p))
				}
			}
			require.Len(t, wasm, 1, "the page fetched one .wasm: %v", be.served())
			require.NotContains(t, wasm[0], "highlight")

			if app.name == "react" {
				// React 19 binds an on… prop of a custom element to the event
				// named after "on" as written: onTrickleEnd listens for
				// "TrickleEnd". trickle-end reached every listener in one
				// dispatch before the status above was rendered, and the
				// camel-case one was not among them; a "TrickleEnd" event is.
				require.Equal(t, 0, browsertest.Eval[int](t, ctx, `window.camelCaseCalls ?? 0`), "onTrickleEnd is not called for trickle-end")
				require.Equal(t, 1, browsertest.Eval[int](t, ctx, `(() => { document.querySelector("trickle-answer").dispatchEvent(new CustomEvent("TrickleEnd")); return window.camelCaseCalls ?? 0; })()`),
					"onTrickleEnd listens for an event named TrickleEnd")
			}
		})
	}
}
