//go:build !(js && wasm)

package e2e_test

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
)

// The build's manifest names the hashed assets; the relay must serve them
// precompressed, typed and cacheable forever, and the loader fresh.
func TestTheRelayServesTheBuiltWidgetPrecompressedAndCacheable(t *testing.T) {
	raw, err := fs.ReadFile(assets.Widget(), "manifest.json")
	if err != nil {
		t.Fatal("assets/widget has no manifest.json: run make widget")
	}
	var m struct {
		Wasm     string `json:"wasm"`
		WasmExec string `json:"wasm_exec"`
		CSS      string `json:"css"`
	}
	require.NoError(t, json.Unmarshal(raw, &m))
	base := server(t)

	get := func(name, enc string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, base+"/trickle/"+name, nil)
		require.NoError(t, err)
		req.Header.Set("Accept-Encoding", enc)
		resp, err := http.DefaultTransport.RoundTrip(req) // no transparent gzip
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		require.Equal(t, http.StatusOK, resp.StatusCode, name)
		return resp
	}

	resp := get(m.Wasm, "gzip, deflate, br")
	require.Equal(t, "application/wasm", resp.Header.Get("Content-Type"))
	require.Equal(t, "br", resp.Header.Get("Content-Encoding"))
	require.Contains(t, resp.Header.Get("Cache-Control"), "immutable")
	body, err := io.ReadAll(brotli.NewReader(resp.Body))
	require.NoError(t, err)
	want, err := fs.ReadFile(assets.Widget(), m.Wasm)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, body), "the .br copy decompresses to the .wasm")
	require.Equal(t, []byte("\x00asm"), body[:4])

	require.Equal(t, "gzip", get(m.Wasm, "gzip").Header.Get("Content-Encoding"))
	require.Contains(t, get(m.WasmExec, "br").Header.Get("Cache-Control"), "immutable")
	require.Contains(t, get(m.CSS, "br").Header.Get("Content-Type"), "text/css")

	loader := get("trickle.js", "identity")
	require.Contains(t, loader.Header.Get("Cache-Control"), "no-cache", "the loader's name is stable, so it is revalidated")
	js, err := io.ReadAll(loader.Body)
	require.NoError(t, err)
	for _, name := range []string{m.Wasm, m.WasmExec, m.CSS} {
		require.Contains(t, string(js), `"`+name+`"`, "the loader points at the hashed name")
	}
}
