//go:build !(js && wasm)

package e2e_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// mathEntryPage imports the package's math entry; the import map is how a
// page without a bundler finds temml, which it installed beside the
// package (a bundler resolves the bare import from node_modules itself).
const mathEntryPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>math from the package</title>
<script type="importmap">{"imports": {"temml": "/node_modules/temml/dist/temml.mjs"}}</script></head>
<body>
<trickle-answer id="a" endpoint="/api/plain"__WORKER__></trickle-answer>
<script type="module">
import { ready } from "/node_modules/trickle-answer/math.js";
window.__ready = ready();
</script>
</body></html>`

// The package's math entry renders every formula as MathML with temml,
// which the page installed, loaded the first time an answer has a formula
// and not before: the 20 KB sample's formula, render's math answer
// (inline and display, beside prices that stay text), no page converter.
func TestTheMathEntryRendersFormulasWithTemmlLoadedOnlyWhenAnAnswerHasMath(t *testing.T) {
	temml := filepath.Join("testdata", "math", "node_modules", "temml")
	if _, err := os.Stat(temml); err != nil {
		t.Fatalf("temml is not installed: make test runs npm ci in wasm/e2e/testdata/math (%v)", err)
	}
	dir := npmPackage(t)
	answers := mathAnswers(t)
	sample, mixed := answers["sample-20k"][0], answers["math"][0]

	var mu sync.Mutex
	var fetched []string
	logged := func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			fetched = append(fetched, r.URL.Path)
			mu.Unlock()
			h.ServeHTTP(w, r)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/node_modules/trickle-answer/", logged(http.StripPrefix("/node_modules/trickle-answer/", http.FileServer(http.Dir(dir)))))
	mux.Handle("/node_modules/temml/", logged(http.StripPrefix("/node_modules/temml/", http.FileServer(http.Dir(temml)))))
	mux.HandleFunc("/api/plain", browsertest.OpenAIAnswer("No formulas here, only prices: $750 and $300.\n", 9))
	mux.HandleFunc("/api/sample", browsertest.OpenAIAnswer(sample, 64))
	mux.HandleFunc("/api/mixed", browsertest.OpenAIAnswer(mixed, 7))
	page := strings.Replace(mathEntryPage, "__WORKER__", map[bool]string{true: ` worker="off"`}[thread == "main"], 1)
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	temmlFetched := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range fetched {
			if strings.HasPrefix(p, "/node_modules/temml/") {
				return true
			}
		}
		return false
	}

	ctx := browserTab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")))
	askAt := func(endpoint string) map[string]any {
		return browsertest.Eval[map[string]any](t, ctx, `(async () => {
			while (!window.__ready) await new Promise((r) => setTimeout(r, 20));
			await window.__ready;
			const a = document.getElementById("a");
			a.setAttribute("endpoint", `+browsertest.JSString(endpoint)+`);
			const status = await a.ask("math?");
			const c = a.querySelector('[data-trickle="content"]');
			const spans = () => [...c.querySelectorAll("[data-trickle-math]")];
			const t0 = performance.now();
			while (spans().some((s) => !s.querySelector("math")) && performance.now() - t0 < 15000) await new Promise((r) => setTimeout(r, 20));
			return { status, formulas: spans().length, maths: c.querySelectorAll("math").length,
				display: c.querySelectorAll('math[display="block"]').length,
				text: c.textContent, prose: (() => { const k = c.cloneNode(true);
					for (const x of k.querySelectorAll("pre, code, [data-trickle=code-toolbar]")) x.remove();
					return k.textContent; })(), tex: spans().filter((s) => !s.querySelector("math")).map((s) => s.textContent),
				mi: c.querySelectorAll("math mi, math mo, math mn").length };
		})()`)
	}

	plain := askAt("/api/plain")
	require.Equal(t, "complete", plain["status"])
	require.Contains(t, plain["text"], "$750 and $300", "prices are not math")
	require.Zero(t, plain["maths"])
	require.False(t, temmlFetched(), "an answer without math loads no converter")

	got := askAt("/api/sample")
	require.Equal(t, "complete", got["status"])
	require.True(t, temmlFetched(), "the first formula loads temml")
	require.Positive(t, got["formulas"])
	require.Equal(t, got["formulas"], got["maths"], "each formula of the 20 KB sample is a <math> element: %v", got["tex"])
	require.Positive(t, got["display"])
	require.Positive(t, got["mi"], "temml's MathML, not a converter's text")

	got = askAt("/api/mixed")
	require.Equal(t, "complete", got["status"])
	require.Greater(t, got["formulas"], 3.0)
	require.Equal(t, got["formulas"], got["maths"], "formulas left as TeX: %v", got["tex"])
	require.Contains(t, got["text"], "An unclosed $$x^2 stays text", "an unclosed formula stays its source")
	require.Equal(t, 1, strings.Count(got["prose"].(string), "$$"), "no other raw delimiter outside code")
}
