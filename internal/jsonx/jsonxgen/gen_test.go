package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The packages whose readers are generated, each with its file.
var generated = map[string]string{"../../../stream": "readers_gen.go"}

// TestTheGeneratedReadersAreNotStale fails when a struct's tags changed
// and go generate was not run.
func TestTheGeneratedReadersAreNotStale(t *testing.T) {
	for dir, out := range generated {
		want, err := Generate(dir, out)
		require.NoError(t, err)
		have, err := os.ReadFile(filepath.Join(dir, out))
		require.NoError(t, err)
		if string(want) != string(have) {
			w, h := strings.Split(string(want), "\n"), strings.Split(string(have), "\n")
			for i := range min(len(w), len(h)) {
				if w[i] != h[i] {
					t.Fatalf("%s is stale: run go generate in %s (line %d is %q, the tags make it %q)", out, dir, i+1, h[i], w[i])
				}
			}
			t.Fatalf("%s is stale: run go generate in %s (%d lines, the tags make %d)", out, dir, len(h), len(w))
		}
	}
}

func TestAFieldItCannotReadIsAnErrorNamingIt(t *testing.T) {
	_, err := Generate("testdata/unsupported", "readers_gen.go")
	require.ErrorContains(t, err, "root.Extra")
}

func TestAPackageWithoutRootsIsAnError(t *testing.T) {
	_, err := Generate("testdata", "readers_gen.go")
	require.ErrorContains(t, err, "//jsonx:reader")
}
