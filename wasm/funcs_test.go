package wasm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The leak test (wasm/e2e) trusts the package's js.Func count: it is only
// true if every js.Func is made by newFunc and freed by releaseFunc.
func TestEveryJSFuncIsCounted(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if f == "funcs_js.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NotContains(t, string(src), "js.FuncOf(", "%s: make js.Funcs with newFunc", f)
		require.NotContains(t, string(src), ".Release()", "%s: free js.Funcs with releaseFunc", f)
	}
}
