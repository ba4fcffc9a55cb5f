package rendertest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goldmarkModule is the goldmark module go.mod requires, where the go
// command cannot be asked (js/wasm on Node).
const goldmarkModule = "github.com/yuin/goldmark@v1.8.7"

// GoldmarkDir returns the directory of the goldmark module, whose _test
// directories hold the CommonMark spec examples and goldmark's own cases.
// Where the go command cannot run (js/wasm on Node) it looks where the go
// command would have: GOMODCACHE, else the first GOPATH entry's pkg/mod,
// else ~/go/pkg/mod.
func GoldmarkDir(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/goldmark").Output()
	if dir := strings.TrimSpace(string(out)); err == nil && dir != "" {
		return dir
	}
	if dir := os.Getenv("GOMODCACHE"); dir != "" {
		return filepath.Join(dir, goldmarkModule)
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		return filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod", goldmarkModule)
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "pkg", "mod", goldmarkModule)
}

// Example is one CommonMark spec example.
type Example struct {
	Markdown string `json:"markdown"`
	Example  int    `json:"example"` // its number in the spec
	Section  string `json:"section"`
}

// Spec returns the CommonMark spec examples (goldmark's _test/spec.json),
// failing t when they cannot be read or are fewer than the spec holds.
func Spec(t testing.TB) []Example {
	t.Helper()
	path := filepath.Join(GoldmarkDir(t), "_test", "spec.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("rendertest: the CommonMark spec examples ship inside the goldmark module: %v", err)
	}
	var ex []Example
	if err := json.Unmarshal(b, &ex); err != nil {
		t.Fatalf("rendertest: %s: %v", path, err)
	}
	if len(ex) < 600 {
		t.Fatalf("rendertest: %s holds %d examples; the CommonMark spec has more than 600", path, len(ex))
	}
	return ex
}

// GoldmarkCases returns the markdown of each case in one of goldmark's
// "//- - -//" test files, named relative to the module: "_test/extra.txt",
// "extension/_test/table.txt" (GFM tables), strikethrough, tasklist,
// linkify, footnote…
func GoldmarkCases(t testing.TB, file string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(GoldmarkDir(t), filepath.FromSlash(file)))
	if err != nil {
		t.Fatalf("rendertest: goldmark's cases: %v", err)
	}
	var cases []string
	for _, c := range strings.Split(string(b), "//= = = = = = = = = = = = = = = = = = = = = = = =//") {
		parts := strings.Split(c, "//- - - - - - - - -//")
		if len(parts) < 3 {
			continue
		}
		cases = append(cases, strings.TrimPrefix(parts[1], "\n"))
	}
	return cases
}
