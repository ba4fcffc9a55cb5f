package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeWidget writes a widget folder as build leaves it (a manifest and the
// files it names), each file with its own content, and returns the folder
// and its manifest.
func fakeWidget(t *testing.T) (string, Manifest) {
	t.Helper()
	dir := t.TempDir()
	m := Manifest{
		Loader: "trickle.js", Wasm: "trickle.0000000001.wasm", WasmExec: "wasm_exec.0000000002.js",
		Worker: "trickle-worker.0000000003.js", CSS: "trickle.0000000004.css",
		HighlightWasm: "trickle-highlight.0000000005.wasm", HighlightCSS: "trickle-highlight.0000000006.css",
	}
	for _, name := range []string{m.Loader, m.Wasm, m.WasmExec, m.Worker, m.HighlightWasm, m.HighlightCSS} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("content of "+name), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, m.CSS), []byte("trickle-answer{display:block}"), 0o644))
	mj, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), mj, 0o644))
	return dir, m
}

type packageManifest struct {
	Name, Version, Type, Types, CustomElements string
	Exports                                    map[string]json.RawMessage
	Files                                      []string
}

func packed(t *testing.T) (string, Manifest, packageManifest) {
	t.Helper()
	widget, m := fakeWidget(t)
	dst := filepath.Join(t.TempDir(), "trickle-answer")
	require.NoError(t, pack(widget, "../../web", dst, "1.2.3\n"))
	raw, err := os.ReadFile(filepath.Join(dst, "package.json"))
	require.NoError(t, err)
	var p packageManifest
	require.NoError(t, json.Unmarshal(raw, &p))
	return dst, m, p
}

func TestThePackageHoldsTheBuildsOwnFilesAndListsEveryFileItHas(t *testing.T) {
	dst, m, p := packed(t)
	require.Equal(t, "trickle-answer", p.Name)
	require.Equal(t, "1.2.3", p.Version)
	require.Equal(t, "module", p.Type)
	entries, err := os.ReadDir(dst)
	require.NoError(t, err)
	var have []string
	for _, e := range entries {
		have = append(have, e.Name())
	}
	sort.Strings(have)
	require.Equal(t, have, p.Files, "files lists exactly what the folder holds")
	for _, name := range []string{m.Loader, m.Wasm, m.WasmExec, m.Worker, m.HighlightWasm, m.HighlightCSS} {
		b, err := os.ReadFile(filepath.Join(dst, name))
		require.NoError(t, err)
		require.Equal(t, "content of "+name, string(b), "%s is the build's file, unchanged", name)
	}
	css, err := os.ReadFile(filepath.Join(dst, "trickle.css"))
	require.NoError(t, err)
	require.Equal(t, "trickle-answer{display:block}", string(css))
	for _, name := range packTypes {
		want, err := os.ReadFile(filepath.Join("../../web/types", name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(dst, name))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

func TestEveryExportAndTheManifestsPointAtFilesOfThePackage(t *testing.T) {
	dst, _, p := packed(t)
	require.FileExists(t, filepath.Join(dst, p.Types))
	require.FileExists(t, filepath.Join(dst, p.CustomElements))
	for _, sub := range []string{".", "./element", "./highlight", "./react", "./vue", "./trickle.css"} {
		require.Contains(t, p.Exports, sub)
	}
	for sub, raw := range p.Exports {
		var target string
		if json.Unmarshal(raw, &target) != nil {
			var cond map[string]string
			require.NoError(t, json.Unmarshal(raw, &cond), sub)
			require.NotEmpty(t, cond["types"], "%s has types", sub)
			for _, v := range cond {
				require.FileExists(t, filepath.Join(dst, v), sub)
			}
			continue
		}
		require.FileExists(t, filepath.Join(dst, target), sub)
	}
}

var (
	staticImport = regexp.MustCompile(`(?:import|export)\s*(?:[\w*{}\s,]*from\s*)?"(\./[^"]+)"`)
	assetURL     = regexp.MustCompile(`new URL\("\./([^"]+)",\s*import\.meta\.url\)`)
)

// reached is every module an entry imports, itself included, and every
// asset those modules name with new URL(…, import.meta.url): what a
// bundler that follows them ships.
func reached(t *testing.T, dir, entry string) (mods, assets []string) {
	t.Helper()
	seen := map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		mods = append(mods, name)
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		for _, m := range staticImport.FindAllStringSubmatch(string(b), -1) {
			walk(strings.TrimPrefix(m[1], "./"))
		}
		for _, m := range assetURL.FindAllStringSubmatch(string(b), -1) {
			assets = append(assets, m[1])
		}
	}
	walk(entry)
	sort.Strings(assets)
	return mods, slices.Compact(assets)
}

func TestAPageThatNeverImportsHighlightReachesOneWasm(t *testing.T) {
	dst, m, _ := packed(t)
	for _, entry := range []string{"index.js", "element.js"} {
		mods, assets := reached(t, dst, entry)
		require.NotContains(t, mods, "highlight-assets.js", entry)
		require.Equal(t, sortedCopy([]string{m.Worker, m.CSS, m.Wasm, m.WasmExec}), assets, "%s reaches the default build's assets only", entry)
	}
	_, assets := reached(t, dst, "highlight.js")
	require.Equal(t, sortedCopy([]string{m.HighlightCSS, m.HighlightWasm, m.Worker, m.CSS, m.Wasm, m.WasmExec}), assets)
	for _, name := range []string{"index.js", "element.js", "highlight.js", "highlight-assets.js"} {
		b, err := os.ReadFile(filepath.Join(dst, name))
		require.NoError(t, err)
		require.NotContains(t, string(b), "__TRICKLE_", name)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// The highlighting build must be registered before the element is defined:
// the page's elements connect at the definition and pick their build then.
func TestTheHighlightEntryRegistersItsBuildBeforeTheElementIsDefined(t *testing.T) {
	dst, _, _ := packed(t)
	b, err := os.ReadFile(filepath.Join(dst, "highlight.js"))
	require.NoError(t, err)
	imports := staticImport.FindAllStringSubmatch(string(b), -1)
	require.Len(t, imports, 2)
	require.Equal(t, "./highlight-assets.js", imports[0][1], "the registration is imported first")
	require.Equal(t, "./index.js", imports[1][1])
	reg, err := os.ReadFile(filepath.Join(dst, "highlight-assets.js"))
	require.NoError(t, err)
	require.Contains(t, string(reg), "useHighlightBuild(")
	mods, _ := reached(t, dst, "highlight-assets.js")
	for _, mod := range mods {
		src, err := os.ReadFile(filepath.Join(dst, mod))
		require.NoError(t, err)
		require.NotContains(t, string(src), "customElements.define", "%s runs before index.js and must not define the element", mod)
	}
}

// Importing the package during server-side rendering (Node: no document,
// no HTMLElement, no customElements) throws nothing and defines nothing.
func TestImportingThePackageOnAServerThrowsNothing(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is needed to import the package")
		}
		t.Skip("node not installed")
	}
	dst, _, _ := packed(t)
	script := `
const dir = process.argv[1];
const got = {};
for (const entry of ["index.js", "element.js", "highlight.js", "math.js"]) {
  const mod = await import("file://" + dir + "/" + entry);
  got[entry] = Object.keys(mod).sort();
}
got.defined = typeof customElements;
console.log(JSON.stringify(got));
`
	out, err := exec.Command(node, "--input-type=module", "-e", script, dst).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got map[string]any
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	require.Equal(t, []any{"TrickleAnswer", "TrickleChat", "ready", "stats"}, got["index.js"])
	require.Equal(t, []any{"TrickleAnswer"}, got["element.js"])
	require.Equal(t, []any{"TrickleAnswer", "TrickleChat", "ready", "stats"}, got["highlight.js"])
	require.Equal(t, []any{"TrickleAnswer", "TrickleChat", "ready", "stats"}, got["math.js"])
	require.Equal(t, "undefined", got["defined"])
}

func TestTheVersionFileIsAVersion(t *testing.T) {
	v, err := os.ReadFile("../../../VERSION")
	require.NoError(t, err)
	require.Regexp(t, `^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?\n$`, string(v), "VERSION holds one semantic version and a newline")
}

func TestPackingWithoutABuiltWidgetSaysToBuildIt(t *testing.T) {
	err := pack(t.TempDir(), "../../web", filepath.Join(t.TempDir(), "p"), "1.0.0")
	require.ErrorContains(t, err, "make build")
}
