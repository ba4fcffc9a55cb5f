// Package stdswap puts Trickle's small stand-ins in place of standard
// library packages in the default widget's build, through go build's
// -overlay: regexp becomes internal/relite (issue 34, "Lighter"), which
// takes regexp/syntax and unicode's category and script tables out of the
// .wasm. Only goldmark calls regexp in that build, with patterns relite
// matches as the standard library does (internal/relite's tests read
// goldmark's patterns from its source and hold every match to regexp's).
// The highlighting build keeps the standard library's regexp: chroma's
// lexers use all of its syntax.
//
// It never changes a file on disk: the overlay maps the standard
// library's file names to copies it writes in a directory of its own.
package stdswap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Relite is the package that stands in for regexp.
const Relite = "github.com/trickle-dev/trickle/internal/relite"

// Overlay writes, in dir, the stand-ins and the overlay file that puts
// them in place, and returns go build's flag ("-overlay=…"). goTool is the
// go command (its GOROOT is the one replaced).
func Overlay(goTool, dir string) (string, error) {
	goroot, err := output(goTool, "env", "GOROOT")
	if err != nil {
		return "", err
	}
	src, err := output(goTool, "list", "-f", "{{.Dir}}", Relite)
	if err != nil {
		return "", err
	}
	std := filepath.Join(goroot, "src", "regexp")
	replace := map[string]string{}
	// Every file of the standard library's regexp goes…
	old, err := filepath.Glob(filepath.Join(std, "*.go"))
	if err != nil {
		return "", err
	}
	for _, f := range old {
		if !strings.HasSuffix(f, "_test.go") {
			replace[f] = ""
		}
	}
	// …and relite's take their place, as package regexp.
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil {
		return "", err
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		b, ok := asRegexp(b)
		if !ok {
			return "", fmt.Errorf("stdswap: %s has no line \"package relite\"", f)
		}
		name := "relite_" + filepath.Base(f)
		out := filepath.Join(dir, name)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return "", err
		}
		replace[filepath.Join(std, name)] = out
		n++
	}
	if n == 0 {
		return "", fmt.Errorf("stdswap: no Go files in %s", src)
	}
	j, err := json.MarshalIndent(map[string]any{"Replace": replace}, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(path, j, 0o644); err != nil {
		return "", err
	}
	return "-overlay=" + path, nil
}

// asRegexp renames the package in one of relite's files.
func asRegexp(b []byte) ([]byte, bool) {
	const from, to = "\npackage relite\n", "\npackage regexp\n"
	if bytes.HasPrefix(b, []byte(from[1:])) {
		return append([]byte(to[1:]), b[len(from)-1:]...), true
	}
	i := bytes.Index(b, []byte(from))
	if i < 0 {
		return nil, false
	}
	return append(append(append([]byte{}, b[:i]...), to...), b[i+len(from):]...), true
}

func output(goTool string, args ...string) (string, error) {
	cmd := exec.Command(goTool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("stdswap: go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
