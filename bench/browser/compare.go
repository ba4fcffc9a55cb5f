package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// baseWidget is the comparison mode's other build (-base): its widget
// directory, served as renderer "trickle-base".
var baseWidget string

// buildBase builds rev's widget in a temporary git worktree and returns its
// directory, bench/results/.base/<commit>/widget; a commit built before is
// not built again.
func buildBase(rev string) (string, error) {
	out, err := exec.Command("git", "rev-parse", "--verify", rev+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse %s: %w", rev, err)
	}
	commit := strings.TrimSpace(string(out))
	dir, err := filepath.Abs(filepath.Join("bench/results/.base", commit, "widget"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "trickle.js")); err == nil {
		return dir, nil
	}
	tree, err := os.MkdirTemp("", "trickle-base-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tree)
	if b, err := exec.Command("git", "worktree", "add", "--detach", tree, commit).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git worktree add: %w: %s", err, b)
	}
	defer exec.Command("git", "worktree", "remove", "--force", tree).Run()
	fmt.Fprintf(os.Stderr, "building the widget of %s (%.12s) in %s\n", rev, commit, tree)
	build := exec.Command("go", "run", "./wasm/internal/build", "-go", "go", "-out", dir)
	build.Dir = tree
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("building the widget: %w", err)
	}
	return dir, nil
}

// spread is the median of v and its spread: (max − min) / median.
func spread(v []float64) (med, lo, hi, rel float64) {
	if len(v) == 0 {
		return 0, 0, 0, 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	lo, hi = s[0], s[len(s)-1]
	if med != 0 {
		rel = (hi - lo) / med
	}
	return med, lo, hi, rel
}

// printCompare prints the comparison mode's tables: per answer and
// renderer the median of each run's figures with their range and spread,
// then the ratios of the runs paired by repetition (the i-th run of one
// renderer against the i-th of the other: neighbours in time, so the
// machine's noise falls on both alike).
func printCompare(results []Result) {
	type key struct{ sample, renderer string }
	runs := map[key][]Result{}
	var samples, renderers []string
	for _, r := range results {
		k := key{r.Sample, r.Renderer}
		if len(runs[k]) == 0 {
			if !contains(samples, r.Sample) {
				samples = append(samples, r.Sample)
			}
			if !contains(renderers, r.Renderer) {
				renderers = append(renderers, r.Renderer)
			}
		}
		runs[k] = append(runs[k], r)
	}
	figures := []struct {
		name string
		f    func(Result) float64
	}{
		{"main-thread time (ms)", func(r Result) float64 { return r.MainThread }},
		{"script (ms)", func(r Result) float64 { return r.Script }},
		{"layouts", func(r Result) float64 { return float64(r.Layouts) }},
		{"style recalcs", func(r Result) float64 { return float64(r.StyleRecalcs) }},
		{"style+layout (ms)", func(r Result) float64 { return r.StyleLayout }},
		{"paint (ms)", func(r Result) float64 { return r.Paint }},
		{"style+layout growth (last fifth / first, ×100)", func(r Result) float64 { return 100 * r.LayoutGrowth }},
		{"forced layouts", func(r Result) float64 { return float64(r.ForcedLayouts) }},
		{"forced style recalcs", func(r Result) float64 { return float64(r.ForcedStyle) }},
		{"longest task (ms)", func(r Result) float64 { return r.LongestTask }},
		{"long tasks", func(r Result) float64 { return float64(r.LongTasks) }},
	}
	fmt.Println()
	fmt.Println("Comparison: median of the runs [min – max] (spread = (max − min) / median)")
	fmt.Println()
	fmt.Println("| answer | renderer | runs | figure | median | range | spread |")
	fmt.Println("| --- | --- | ---: | --- | ---: | --- | ---: |")
	for _, s := range samples {
		for _, r := range renderers {
			rs := runs[key{s, r}]
			for _, fig := range figures {
				v := make([]float64, len(rs))
				for i, x := range rs {
					v[i] = fig.f(x)
				}
				med, lo, hi, rel := spread(v)
				fmt.Printf("| %s | %s | %d | %s | %.0f | %.0f – %.0f | %.0f %% |\n", s, r, len(rs), fig.name, med, lo, hi, rel*100)
			}
		}
	}
	pairs := [][2]string{{"trickle", "smd"}, {"trickle-base", "smd"}, {"trickle", "trickle-base"}}
	fmt.Println()
	fmt.Println("Ratios of paired runs: median [min – max]")
	fmt.Println()
	fmt.Println("| answer | ratio | main-thread time | script | layouts | style recalcs | style+layout time | paint time |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, s := range samples {
		for _, p := range pairs {
			a, b := runs[key{s, p[0]}], runs[key{s, p[1]}]
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
				med, lo, hi, _ := spread(v)
				return fmt.Sprintf("%.2f× [%.2f – %.2f]", med, lo, hi)
			}
			fmt.Printf("| %s | %s / %s | %s | %s | %s | %s | %s | %s |\n", s, p[0], p[1],
				cell(figures[0].f), cell(figures[1].f), cell(figures[2].f), cell(figures[3].f), cell(figures[4].f), cell(figures[5].f))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// printWork prints the work counted per answer (medians) and per frame in
// which the answer's box changed.
func printWork(results []Result) {
	fmt.Println()
	fmt.Println("| answer | renderer | style recalcs (forced) | layouts (forced) | script | mutations | nodes touched | frames (changed) | per changed frame: recalcs | layouts | script |")
	fmt.Println("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range results {
		fmt.Printf("| %s | %s | %d (%d) | %d (%d) | %.0f ms | %d | %d | %d (%d) | %.2f | %.2f | %.2f ms |\n",
			r.Sample, r.Renderer, r.StyleRecalcs, r.ForcedStyle, r.Layouts, r.ForcedLayouts, r.Script, r.Mutations, r.NodesTouched,
			r.Frames, r.ChangedFrames, r.RecalcsPerChange, r.LayoutsPerChange, r.ScriptPerChangeMs)
	}
}
