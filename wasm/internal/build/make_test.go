package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// makeQ runs `make -q widget` in the repository (question mode: nothing
// is built, the exit code says whether the widget is up to date), with
// -W for files to treat as just changed.
func makeQ(t *testing.T, root string, changed ...string) bool {
	t.Helper()
	args := []string{"-q", "-C", root}
	for _, f := range changed {
		args = append(args, "-W", f)
	}
	err := exec.Command("make", append(args, "widget")...).Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return false
	}
	require.NoError(t, err, "make -q %v", args)
	return true
}

// `make run` rebuilds the widget only when one of its inputs changed: a
// second run starts from what is built. Asked without building anything
// (make -q, with -W to pretend a file just changed).
func TestMakeRebuildsTheWidgetOnlyWhenAnInputChanged(t *testing.T) {
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	if _, err := os.Stat(filepath.Join(root, "assets/widget/manifest.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the widget is not built: make test builds it before the tests")
		}
		t.Skip("the widget is not built (make widget)")
	}
	if !makeQ(t, root) {
		// make test builds before it tests: out of date there means the
		// rule's prerequisites miss something the build itself changes.
		if os.Getenv("CI") != "" {
			t.Fatal("make build ran before the tests, yet make -q widget says the widget is out of date")
		}
		t.Skip("the widget is out of date (an input changed since make widget)")
	}
	for _, in := range []string{
		"wasm/web/trickle.js", "wasm/web/merge.js", "wasm/web/trickle.css", // the loader, a module of it, the stylesheet
		"wasm/cmd/widget/main.go",                                  // the widget's main package
		"render/document.go", "a11y/announcer.go", "sse/parser.go", // pure packages it links
		"wasm/internal/build/main.go", // the build tool
		"go.sum",
	} {
		require.False(t, makeQ(t, root, in), "%s changed: the widget must be rebuilt", in)
	}
	for _, other := range []string{"relay/server.go", "README.md", "render/document_test.go", "cmd/trickle/main.go", "wasm/web/package.json"} {
		require.True(t, makeQ(t, root, other), "%s is no input of the widget", other)
	}
}
