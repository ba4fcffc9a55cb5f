//go:build !(js && wasm)

package e2e_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

var (
	packOnce sync.Once
	packDir  string
	packErr  error
)

// npmPackage lays out the npm package from the built widget, as make dist
// does, once for the test binary.
func npmPackage(t *testing.T) string {
	t.Helper()
	packOnce.Do(func() {
		dir, err := os.MkdirTemp("", "trickle-package-")
		if err != nil {
			packErr = err
			return
		}
		packDir = filepath.Join(dir, "trickle-answer")
		cmd := exec.Command("go", "run", "./wasm/internal/build", "-out", "assets/widget", "-pack", packDir, "-version-file", "VERSION")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			packErr = fmt.Errorf("packing the widget: %v\n%s", err, out)
		}
	})
	require.NoError(t, packErr)
	return packDir
}

// packageAnswer is what the plain backend streams.
const packageAnswer = "## From the package\n\nA page that installed **trickle-answer** streams from its own backend:\n\n1. no relay\n2. no build step\n\n```sh\nnpm install trickle-answer\n```\n\nDone.\n"

const packagePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>a page with the package</title></head>
<body>
<trickle-answer id="a" endpoint="/api/chat"__WORKER__></trickle-answer>
<script type="module">
import { TrickleAnswer, ready } from "/node_modules/trickle-answer/index.js";
window.__defined = customElements.get("trickle-answer") === TrickleAnswer;
const el = document.getElementById("a");
window.__ends = [];
el.addEventListener("trickle-end", (e) => window.__ends.push(e.detail.status));
window.__asked = el.ask("Tell me about the package.");
window.__ready = ready;
</script>
</body></html>`

// A page that installed the package serves its files from any static host,
// unchanged, and streams from a backend of its own: the element is defined
// by the package's entry, finds its assets beside the module, and renders
// the answer as the one-shot render of its text.
func TestAPagePackageFromAStaticHostStreamsFromItsOwnBackend(t *testing.T) {
	dir := npmPackage(t)
	mux := http.NewServeMux()
	var mu sync.Mutex
	var fetched []string
	files := http.StripPrefix("/node_modules/trickle-answer/", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("/node_modules/trickle-answer/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched = append(fetched, r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	})
	mux.HandleFunc("/api/chat", browsertest.OpenAIAnswer(packageAnswer, 7))
	page := strings.Replace(packagePage, "__WORKER__", map[bool]string{true: ` worker="off"`}[thread == "main"], 1)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := browserTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `(async () => { while (!window.__asked) await new Promise((r) => setTimeout(r, 20)); return await window.__asked; })()`))
	require.True(t, browsertest.Eval[bool](t, ctx, `window.__defined`), "the entry defines <trickle-answer> as the class it exports")
	require.Equal(t, []string{"complete"}, browsertest.Eval[[]string](t, ctx, `window.__ends`), "trickle-end fired once, through addEventListener")
	require.Equal(t, packageAnswer, browsertest.Eval[string](t, ctx, `document.getElementById("a").text`))
	require.Equal(t, thread, browsertest.Eval[string](t, ctx, `document.getElementById("a").metrics.thread`))

	want := convert(t, packageAnswer, element.RenderOptions(render.Policy{SameOrigin: srv.URL})...)
	got := browsertest.Eval[[]string](t, ctx, `(() => {
		const t = document.createElement("template");
		t.innerHTML = `+browsertest.JSString(want)+`;
		const c = document.querySelector('#a [data-trickle="content"]').cloneNode(true);
		for (const b of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) b.remove();
		for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
		return [t.innerHTML, c.innerHTML];
	})()`)
	require.Equal(t, got[0], got[1], "the streamed DOM equals the one-shot render of the text")
	mu.Lock()
	defer mu.Unlock()
	var wasm []string
	for _, p := range fetched {
		if strings.HasSuffix(p, ".wasm") {
			wasm = append(wasm, p)
		}
	}
	require.Len(t, wasm, 1, "one .wasm, the default build, fetched from beside the module: %v", fetched)
	require.NotContains(t, wasm[0], "highlight")
}

// npm runs npm in dir with a user config of its own (nothing of the
// machine's ~/.npmrc) and returns what it printed.
func npm(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is needed to publish and install the packages")
	}
	cfg := filepath.Join(t.TempDir(), "npmrc")
	require.NoError(t, os.WriteFile(cfg, nil, 0o644))
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_userconfig="+cfg, "npm_config_cache="+filepath.Join(t.TempDir(), "cache"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// unreachableRegistry is a loopback address nothing listens on: npm
// publish --dry-run asks the registry whether the version exists (a GET of
// the package), and goes on without an answer.
func unreachableRegistry(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// Both packages publish clean: npm publish --dry-run prints no warning
// (a field npm would correct, a file it refuses, a missing README) and no
// error. The registry is an unreachable loopback address with a
// placeholder token, so nothing leaves the machine and npm does not warn
// that no one is logged in.
func TestThePackagesPublishWithoutAWarning(t *testing.T) {
	if thread == "main" {
		t.Skip("the packages are the same whichever thread Go runs on: checked in the worker run")
	}
	dir := npmPackage(t)
	version, err := os.ReadFile(filepath.Join("..", "..", "VERSION"))
	require.NoError(t, err)
	registry := unreachableRegistry(t)
	for _, pkg := range []string{dir, filepath.Join(filepath.Dir(dir), "trickle-answer-highlight")} {
		out := npm(t, pkg, "publish", "--dry-run", "--registry", "http://"+registry+"/", "--//"+registry+"/:_authToken=dry-run-only")
		for _, line := range strings.Split(out, "\n") {
			require.False(t, strings.HasPrefix(line, "npm warn") || strings.HasPrefix(line, "npm error") || strings.HasPrefix(line, "npm ERR"),
				"npm publish --dry-run in %s: %s\n%s", pkg, line, out)
		}
		require.Contains(t, out, "+ "+filepath.Base(pkg)+"@"+strings.TrimSpace(string(version)))
	}
}

// treeSize is the bytes of the files under dir.
func treeSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	}))
	return n
}

// Installing trickle-answer into an empty project unpacks at most 10 MB:
// the default build, not the highlighting one, which is its own package
// (an optional peer). Installed beside it, the highlight entry finds it.
func TestInstallingThePackageUnpacksTheDefaultBuildOnly(t *testing.T) {
	if thread == "main" {
		t.Skip("the packages are the same whichever thread Go runs on: checked in the worker run")
	}
	dir := npmPackage(t)
	tarballs := t.TempDir()
	for _, pkg := range []string{"trickle-answer", "trickle-answer-highlight"} {
		npm(t, filepath.Dir(dir), "pack", "--silent", "--pack-destination", tarballs, "./"+pkg)
	}
	tgz := func(name string) string {
		m, err := filepath.Glob(filepath.Join(tarballs, name+"-[0-9]*.tgz"))
		require.NoError(t, err)
		require.Len(t, m, 1, name)
		return m[0]
	}

	app := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name":"app","private":true}`), 0o644))
	npm(t, app, "install", "--offline", tgz("trickle-answer"))
	size := treeSize(t, filepath.Join(app, "node_modules"))
	t.Logf("npm install trickle-answer unpacked %d bytes", size)
	require.LessOrEqual(t, size, int64(10_000_000), "the default entry's install unpacks at most 10 MB")
	require.NoDirExists(t, filepath.Join(app, "node_modules", "trickle-answer-highlight"), "the highlighting build is installed only when asked for")
	wasm, err := filepath.Glob(filepath.Join(app, "node_modules", "trickle-answer", "*.wasm"))
	require.NoError(t, err)
	require.Len(t, wasm, 1)
	require.NotContains(t, filepath.Base(wasm[0]), "highlight")

	npm(t, app, "install", "--offline", tgz("trickle-answer"), tgz("trickle-answer-highlight"))
	hl, err := filepath.Glob(filepath.Join(app, "node_modules", "trickle-answer-highlight", "trickle-highlight.*.wasm"))
	require.NoError(t, err)
	require.Len(t, hl, 1, "installed beside it, the highlighting package brings its build")
	node, err := exec.LookPath("node")
	require.NoError(t, err, "node is needed to import the highlight entry")
	imp := exec.Command(node, "--input-type=module", "-e",
		`const m = await import("trickle-answer/highlight"); const h = await import("trickle-answer-highlight"); console.log(Object.keys(m).sort().join(","), h.HIGHLIGHT_WASM.pathname.split("/").pop())`)
	imp.Dir = app
	out, err := imp.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "TrickleAnswer,TrickleChat,ready,stats "+filepath.Base(hl[0])+"\n", string(out))
}

const highlightPackagePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>a page with the highlight entry</title>
<script type="importmap">{"imports": {"trickle-answer-highlight": "/node_modules/trickle-answer-highlight/index.js"}}</script>
</head>
<body>
<trickle-answer id="a" endpoint="/api/chat" highlight__WORKER__></trickle-answer>
<script type="module">
import { stats } from "/node_modules/trickle-answer/highlight.js";
window.__asked = document.getElementById("a").ask("Show me some Go.");
window.__stats = stats;
</script>
</body></html>`

// A page that imports trickle-answer/highlight, with trickle-answer-highlight
// installed beside it (a static host; an import map names the package, as
// a bundler would resolve it), runs the highlighting build from that
// package: its code blocks are coloured, and the one .wasm fetched is the
// highlighting build's, from trickle-answer-highlight's folder.
func TestThePackagesHighlightEntryRunsTheBuildOfItsOwnPackage(t *testing.T) {
	dir := npmPackage(t)
	modules := filepath.Dir(dir)
	mux := http.NewServeMux()
	var mu sync.Mutex
	var fetched []string
	files := http.StripPrefix("/node_modules/", http.FileServer(http.Dir(modules)))
	mux.HandleFunc("/node_modules/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetched = append(fetched, r.URL.Path)
		mu.Unlock()
		files.ServeHTTP(w, r)
	})
	answer := "Some Go:\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\nDone.\n"
	mux.HandleFunc("/api/chat", browsertest.OpenAIAnswer(answer, 7))
	page := strings.Replace(highlightPackagePage, "__WORKER__", map[bool]string{true: ` worker="off"`}[thread == "main"], 1)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := browserTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `(async () => { while (!window.__asked) await new Promise((r) => setTimeout(r, 20)); return await window.__asked; })()`))
	require.Equal(t, []string{"highlight"}, browsertest.Eval[[]string](t, ctx, `(async () => (await window.__stats()).builds)()`), "the page runs the highlighting build")
	require.True(t, browsertest.Eval[bool](t, ctx, `!!document.querySelector('#a [data-trickle="content"] pre span[class]')`), "the settled Go block is coloured")
	mu.Lock()
	defer mu.Unlock()
	var wasm []string
	for _, p := range fetched {
		if strings.HasSuffix(p, ".wasm") {
			wasm = append(wasm, p)
		}
	}
	require.Len(t, wasm, 1, "one .wasm: %v", fetched)
	require.True(t, strings.HasPrefix(wasm[0], "/node_modules/trickle-answer-highlight/trickle-highlight."), "the highlighting build, from its own package: %s", wasm[0])
}
