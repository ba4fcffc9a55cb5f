//go:build !(js && wasm)

package e2e_test

import (
	"fmt"
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

	"github.com/trickle-dev/trickle/internal/browsertest"
	"github.com/trickle-dev/trickle/internal/widget"
	"github.com/trickle-dev/trickle/render"
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

	want := convert(t, packageAnswer, widget.RenderOptions(render.Policy{SameOrigin: srv.URL})...)
	got := browsertest.Eval[[]string](t, ctx, `(() => {
		const t = document.createElement("template");
		t.innerHTML = `+browsertest.JSString(want)+`;
		const c = document.querySelector('#a [data-trickle="content"]').cloneNode(true);
		for (const b of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) b.remove();
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
