package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// reactPeers are the renderers that run in React (page/react-peers.js):
// Streamdown and TanStack Markdown.
var reactPeers = []string{"streamdown", "tanstack"}

// bundleReactPeers bundles dir/page/react-peers.js with what it imports
// from dir/node_modules (React's production build, Streamdown, TanStack
// Markdown) into one ES module, with esbuild as the widget's build uses it.
func bundleReactPeers(dir string) ([]byte, error) {
	for _, pkg := range []string{"react", "react-dom", "streamdown", "@tanstack/markdown"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			return nil, fmt.Errorf("the React peers are not installed: run npm ci in %s (run.sh does it): %w", dir, err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := api.Build(api.BuildOptions{
		EntryPoints:   []string{filepath.Join(abs, "page", "react-peers.js")},
		AbsWorkingDir: abs,
		Outfile:       "react-peers.bundle.js",
		Bundle:        true,
		Write:         false,
		Format:        api.FormatESModule,
		Platform:      api.PlatformBrowser,
		Target:        api.ES2022,
		// React's production build, as a page ships it.
		Define:            map[string]string{"process.env.NODE_ENV": `"production"`},
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		LogLevel:          api.LogLevelSilent,
	})
	if len(r.Errors) > 0 {
		msgs := api.FormatMessages(r.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return nil, fmt.Errorf("bundling the React peers: %s", strings.Join(msgs, ""))
	}
	for _, f := range r.OutputFiles {
		if strings.HasSuffix(f.Path, ".js") {
			return f.Contents, nil
		}
	}
	return nil, fmt.Errorf("bundling the React peers: esbuild wrote no script")
}

// fenceHead is what comes before the code in the open-code-fence answers.
const fenceHead = "# Generated configuration\n\n```ts\n"

// fenceAnswer is an open-code-fence case of TanStack Markdown's published
// streaming benchmark: one heading, then a TypeScript fence that never
// closes, kib KiB in all (ASCII, so characters and bytes agree), its last
// line cut short. It returns the answer and the code the fence holds.
func fenceAnswer(kib int) (answer, code string) {
	n := kib * 1024
	var b strings.Builder
	b.WriteString(fenceHead)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "const route%d: Route = { path: '/api/%d', enabled: true }\n", i, i)
	}
	answer = b.String()[:n]
	return answer, answer[len(fenceHead):]
}

// codeCheck says whether a renderer showed the open fence's code at the
// end of the stream: the text of the page's last <pre><code> against the
// code the answer's fence holds, trailing white space aside (a renderer
// may add a newline). It returns "ok" or what is wrong.
func codeCheck(want string, got *string) string {
	if got == nil {
		return "failed: no <pre><code> on the page"
	}
	w, g := strings.TrimRight(want, " \t\n"), strings.TrimRight(*got, " \t\n")
	if w == g {
		return "ok"
	}
	i := 0
	for i < min(len(w), len(g)) && w[i] == g[i] {
		i++
	}
	return fmt.Sprintf("failed: %d of %d characters of code shown, the first difference at character %d", len(g), len(w), i)
}

// printPeers prints the ratios of each widget (trickle, trickle-off,
// trickle-base) to each markdown peer in the run (smd, streamdown,
// tanstack, marked): main-thread time and the work counted, per answer.
// Runs are paired by repetition (the i-th run of one against the i-th of
// the other, neighbours in time); with more than one run a cell is the
// median ratio and its range.
func printPeers(results []Result) {
	type key struct{ sample, renderer string }
	runs := map[key][]Result{}
	var samples, widgets, peers []string
	for _, r := range results {
		k := key{r.Sample, r.Renderer}
		if !contains(samples, r.Sample) {
			samples = append(samples, r.Sample)
		}
		switch {
		case strings.HasPrefix(r.Renderer, "trickle"):
			if !contains(widgets, r.Renderer) {
				widgets = append(widgets, r.Renderer)
			}
		case r.Renderer != "text":
			if !contains(peers, r.Renderer) {
				peers = append(peers, r.Renderer)
			}
		}
		runs[k] = append(runs[k], r)
	}
	if len(widgets) == 0 || len(peers) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("The widget against each peer: ratios of paired runs (widget / peer; below 1 the widget does less), median [min – max] over the runs")
	fmt.Println()
	fmt.Println("| answer | widget / peer | main-thread time | layouts | style recalcs | nodes touched | script | longest task (widget, peer) |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, s := range samples {
		for _, w := range widgets {
			for _, p := range peers {
				a, b := runs[key{s, w}], runs[key{s, p}]
				n := min(len(a), len(b))
				if n == 0 {
					continue
				}
				cell := func(f func(Result) float64) string {
					v := make([]float64, 0, n)
					for i := 0; i < n; i++ {
						if d := f(b[i]); d > 0 {
							v = append(v, f(a[i])/d)
						}
					}
					if len(v) == 0 {
						return "–"
					}
					med, lo, hi, _ := spread(v)
					if len(v) == 1 {
						return fmt.Sprintf("%.2f×", med)
					}
					return fmt.Sprintf("%.2f× [%.2f – %.2f]", med, lo, hi)
				}
				longest := func(rs []Result) float64 {
					v := make([]float64, len(rs))
					for i, r := range rs {
						v[i] = r.LongestTask
					}
					med, _, _, _ := spread(v)
					return med
				}
				fmt.Printf("| %s | %s / %s | %s | %s | %s | %s | %s | %.1f ms, %.1f ms |\n", s, w, p,
					cell(func(r Result) float64 { return r.MainThread }),
					cell(func(r Result) float64 { return float64(r.Layouts) }),
					cell(func(r Result) float64 { return float64(r.StyleRecalcs) }),
					cell(func(r Result) float64 { return float64(r.NodesTouched) }),
					cell(func(r Result) float64 { return r.Script }),
					longest(a), longest(b))
			}
		}
	}
	var checked []Result
	for _, r := range results {
		if r.CodeCheck != "" {
			checked = append(checked, r)
		}
	}
	if len(checked) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("Open code fences: the code shown at the end of the stream against the fence's (every run)")
	fmt.Println()
	fmt.Println("| answer | renderer | code shown |")
	fmt.Println("| --- | --- | --- |")
	seen := map[string]bool{}
	for _, r := range checked {
		k := r.Sample + "/" + r.Renderer + "/" + r.CodeCheck
		if seen[k] {
			continue
		}
		seen[k] = true
		fmt.Printf("| %s | %s | %s |\n", r.Sample, r.Renderer, r.CodeCheck)
	}
}
