// Command size is `make size`: what the widget's .wasm is made of. It
// builds ./wasm/cmd/widget for js/wasm as the widget's build does
// (-trimpath, wasm/internal/inline's inlining), once stripped (-ldflags=-s -w, what ships) and once with
// its name section, and reports the shipped size and its brotli beside
// the floor (goldmark with GFM and the Go runtime alone, ./floor), then
// the code section's bytes per Go package, from the function names.
//
//	go run ./wasm/internal/size            # the report, as markdown
//	go run ./wasm/internal/size -wasm F    # the code of F by package (F must keep its name section)
//
// The data section (strings, type data, tables) is reported whole: Go's
// linker does not say which package a data segment belongs to.
package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/trickle-dev/trickle/wasm/internal/inline"
	"github.com/trickle-dev/trickle/wasm/internal/stdswap"
	"github.com/trickle-dev/trickle/wasm/internal/wasmdata"
)

func main() {
	wasm := flag.String("wasm", "", "report the code of this .wasm by package (it must keep its name section) instead of building")
	top := flag.Int("top", 25, "packages listed by name; the rest are summed")
	flag.Parse()
	if err := run(os.Stdout, *wasm, *top); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer, wasm string, top int) error {
	if wasm != "" {
		b, err := os.ReadFile(wasm)
		if err != nil {
			return err
		}
		m, err := parse(b)
		if err != nil {
			return err
		}
		pkgs, err := packages("./wasm/cmd/widget")
		if err != nil {
			return err
		}
		return byPackage(w, m, pkgs, top)
	}
	dir, err := os.MkdirTemp("", "trickle-size")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	builds := []struct{ name, pkg, out, ldflags string }{
		{"default widget, as shipped", "./wasm/cmd/widget", "widget.wasm", "-s -w"},
		{"floor: goldmark + GFM + the Go runtime", "./wasm/internal/size/floor", "floor.wasm", "-s -w"},
		{"", "./wasm/cmd/widget", "named.wasm", ""},
	}
	overlay, err := stdswap.Overlay("go", dir)
	if err != nil {
		return err
	}
	for _, b := range builds {
		cmd := exec.Command("go", buildArgs(b.ldflags, overlay, filepath.Join(dir, b.out), b.pkg)...)
		cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("size: go build %s: %w", b.pkg, err)
		}
	}
	fmt.Fprintf(w, "Widget size, %s, %s (go run ./wasm/internal/size)\n\n", time.Now().UTC().Format("2006-01-02"), commit())
	fmt.Fprintln(w, "| build | .wasm bytes | code | data | brotli (q11, 24-bit window) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
	for _, b := range builds[:2] {
		raw, err := os.ReadFile(filepath.Join(dir, b.out))
		if err != nil {
			return err
		}
		// The data segments merged as the widget build merges them.
		if raw, err = wasmdata.MergeSegments(raw, wasmdata.MaxGap); err != nil {
			return err
		}
		m, err := parse(raw)
		if err != nil {
			return err
		}
		br, err := brotliLen(raw)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", b.name, num(len(raw)), num(m.sections["code"]), num(m.sections["data"]), num(br))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "named.wasm"))
	if err != nil {
		return err
	}
	m, err := parse(raw)
	if err != nil {
		return err
	}
	pkgs, err := packages("./wasm/cmd/widget")
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	return byPackage(w, m, pkgs, top)
}

// buildArgs are go build's arguments for one of the report's builds: the
// widget build's (-trimpath, no VCS stamp, its inlining, regexp swapped
// by the overlay flag) with ldflags. The floor is built alike.
func buildArgs(ldflags, overlay, out, pkg string) []string {
	args := append([]string{"build", "-trimpath", "-buildvcs=false", "-ldflags=" + ldflags, overlay}, inline.Flags()...)
	return append(args, "-o", out, pkg)
}

// byPackage writes the code section's bytes by group and by package.
func byPackage(w io.Writer, m *module, pkgs map[string]string, top int) error {
	if len(m.names) == 0 {
		return fmt.Errorf("size: the .wasm has no function names (built with -ldflags=-s?)")
	}
	bytesOf := map[string]int{}
	total := 0
	for i, size := range m.code {
		bytesOf[packageOf(m.names[m.imported+i], pkgs)] += size
		total += size
	}
	groups := map[string]int{}
	for p, n := range bytesOf {
		groups[groupOf(p)] += n
	}
	fmt.Fprintln(w, "| group | code bytes | share |")
	fmt.Fprintln(w, "| --- | ---: | ---: |")
	for _, g := range sorted(groups) {
		fmt.Fprintf(w, "| %s | %s | %.1f %% |\n", g, num(groups[g]), 100*float64(groups[g])/float64(total))
	}
	fmt.Fprintf(w, "| all code | %s | |\n\n", num(total))
	fmt.Fprintln(w, "| package | code bytes | share |")
	fmt.Fprintln(w, "| --- | ---: | ---: |")
	rest, restN := 0, 0
	for i, p := range sorted(bytesOf) {
		if i >= top {
			rest += bytesOf[p]
			restN++
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %.1f %% |\n", p, num(bytesOf[p]), 100*float64(bytesOf[p])/float64(total))
	}
	if restN > 0 {
		fmt.Fprintf(w, "| %d more packages | %s | %.1f %% |\n", restN, num(rest), 100*float64(rest)/float64(total))
	}
	return nil
}

// packages maps the wasm name section's spelling of each package path the
// build links (every byte but letters, digits, '.' and '_' written as '_',
// as Go's linker writes names there) to the path.
func packages(pkg string) (map[string]string, error) {
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("size: go list -deps %s: %w", pkg, err)
	}
	m := map[string]string{}
	for _, p := range strings.Fields(string(out)) {
		m[mangle(p)] = p
	}
	return m, nil
}

func mangle(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// packageOf is the Go package a function's symbol belongs to, the
// longest package (by its name-section spelling, pkgs) the symbol starts
// with followed by a '.': "github.com_yuin_goldmark_parser.__blockParser_.Open"
// → "github.com/yuin/goldmark/parser". Type equality and hashing functions
// ("type_.eq.…") and names of no linked package are groups of their own.
func packageOf(sym string, pkgs map[string]string) string {
	switch {
	case sym == "":
		return "(unnamed)"
	case strings.HasPrefix(sym, "type_.") || strings.HasPrefix(sym, "type:"):
		return "(type equality and hashing)"
	}
	best := ""
	for i := 0; i < len(sym); i++ {
		if sym[i] != '.' {
			continue
		}
		if p, ok := pkgs[sym[:i]]; ok && len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return "(other)"
	}
	return best
}

// groupOf puts a package in one of the report's groups.
func groupOf(pkg string) string {
	first, _, _ := strings.Cut(pkg, "/")
	switch {
	case strings.HasPrefix(pkg, "("):
		return "Go runtime"
	case pkg == "runtime" || strings.HasPrefix(pkg, "runtime/") || strings.HasPrefix(pkg, "internal/") ||
		pkg == "sync" || strings.HasPrefix(pkg, "sync/") || pkg == "syscall" || pkg == "syscall/js":
		return "Go runtime"
	case strings.HasPrefix(pkg, "github.com/trickle-dev/trickle"):
		return "Trickle"
	case strings.HasPrefix(pkg, "github.com/yuin/goldmark"):
		return "goldmark"
	case pkg == "regexp" || pkg == "regexp/syntax":
		return "regexp"
	case pkg == "fmt":
		return "fmt"
	case pkg == "reflect" || strings.HasPrefix(pkg, "encoding/"):
		return "reflect and encoding"
	case !strings.Contains(first, "."):
		return "the rest of the standard library"
	default:
		return "other modules"
	}
}

// sorted is m's keys, largest value first.
func sorted(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return keys
}

func brotliLen(b []byte) (int, error) {
	var buf bytes.Buffer
	bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 11, LGWin: 24})
	if _, err := bw.Write(b); err != nil {
		return 0, err
	}
	if err := bw.Close(); err != nil {
		return 0, err
	}
	return buf.Len(), nil
}

// num writes n with thousands separators, as PERFORMANCE.md does.
func num(n int) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "no commit"
	}
	c := strings.TrimSpace(string(out))
	if st, _ := exec.Command("git", "status", "--porcelain").Output(); len(st) > 0 {
		c += " with uncommitted changes"
	}
	return c
}
