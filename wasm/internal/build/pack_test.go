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

const fakeChangelog = "# Changelog\n\n## 1.2.3 (unreleased)\n\n- A change.\n\n## 1.2.2\n\n- An older one.\n"

type packageManifest struct {
	Name, Version, Type, Types, CustomElements string
	Exports                                    map[string]json.RawMessage
	Files                                      []string
}

func packed(t *testing.T) (string, Manifest, packageManifest) {
	t.Helper()
	widget, m := fakeWidget(t)
	// In a node_modules folder, as npm installs them: the highlighting
	// package is laid out beside, where trickle-answer's modules find it.
	dst := filepath.Join(t.TempDir(), "node_modules", "trickle-answer")
	require.NoError(t, pack(widget, "../../web", dst, "1.2.3\n", []byte(fakeChangelog)))
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
	for _, name := range []string{m.Loader, m.Wasm, m.WasmExec, m.Worker} {
		b, err := os.ReadFile(filepath.Join(dst, name))
		require.NoError(t, err)
		require.Equal(t, "content of "+name, string(b), "%s is the build's file, unchanged", name)
	}
	// The highlighting build is the other package's, beside it.
	hl := filepath.Join(filepath.Dir(dst), highlightPackage)
	for _, name := range []string{m.HighlightWasm, m.HighlightCSS} {
		require.NoFileExists(t, filepath.Join(dst, name), "trickle-answer does not carry the highlighting build")
		b, err := os.ReadFile(filepath.Join(hl, name))
		require.NoError(t, err)
		require.Equal(t, "content of "+name, string(b), "%s is the build's file, unchanged", name)
	}
	raw, err := os.ReadFile(filepath.Join(hl, "package.json"))
	require.NoError(t, err)
	var hp packageManifest
	require.NoError(t, json.Unmarshal(raw, &hp))
	require.Equal(t, highlightPackage, hp.Name)
	require.Equal(t, "1.2.3", hp.Version, "both packages have one version")
	entries, err = os.ReadDir(hl)
	require.NoError(t, err)
	have = nil
	for _, e := range entries {
		have = append(have, e.Name())
	}
	sort.Strings(have)
	require.Equal(t, have, hp.Files, "the highlighting package's files lists exactly what its folder holds")
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
	staticImport = regexp.MustCompile(`(?:import|export)\s*(?:[\w*{}\s,]*from\s*)?"(\./[^"]+|` + highlightPackage + `)"`)
	assetURL     = regexp.MustCompile(`new URL\("\./([^"]+)",\s*import\.meta\.url\)`)
)

// reached is every module an entry imports, itself included, and every
// asset those modules name with new URL(…, import.meta.url): what a
// bundler that follows them ships. An import of the highlighting package
// is followed into its folder, beside dir, as a bundler resolves it in
// node_modules; its modules and assets are named from dir
// (../trickle-answer-highlight/…).
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
			if m[1] == highlightPackage {
				walk(filepath.Join("..", highlightPackage, "index.js"))
				continue
			}
			walk(filepath.Join(filepath.Dir(name), m[1]))
		}
		for _, m := range assetURL.FindAllStringSubmatch(string(b), -1) {
			assets = append(assets, filepath.Join(filepath.Dir(name), m[1]))
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
	hl := func(name string) string { return filepath.Join("..", highlightPackage, name) }
	require.Equal(t, sortedCopy([]string{hl(m.HighlightCSS), hl(m.HighlightWasm), m.Worker, m.CSS, m.Wasm, m.WasmExec}), assets,
		"the highlight entry reaches the highlighting build in its own package")
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
	err := pack(t.TempDir(), "../../web", filepath.Join(t.TempDir(), "p"), "1.0.0", []byte("## 1.0.0\n"))
	require.ErrorContains(t, err, "make build")
}

// The changelog's top entry is the version make dist packs, so a release
// says what it changes.
func TestTheChangelogsTopEntryIsTheVersion(t *testing.T) {
	v, err := os.ReadFile("../../../VERSION")
	require.NoError(t, err)
	c, err := os.ReadFile("../../../CHANGELOG.md")
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(v)), changelogVersion(c), "CHANGELOG.md's top entry names the version in VERSION")
}

func TestPackingRefusesAVersionTheChangelogDoesNotName(t *testing.T) {
	widget, _ := fakeWidget(t)
	for _, changes := range []string{"", "# Changelog\n", "## 1.2.2\n\n## 1.2.3\n"} {
		err := pack(widget, "../../web", filepath.Join(t.TempDir(), "trickle-answer"), "1.2.3\n", []byte(changes))
		require.ErrorContains(t, err, `add a "## 1.2.3" entry`, "%q", changes)
	}
	require.Equal(t, "1.2.3", changelogVersion([]byte("# C\n\n## [1.2.3] - 2026-12-06\n")))
}

// Everything a registry page and a bundler read: where it comes from, its
// terms, what runs it, which modules have side effects, and the optional
// peers of the optional entries (the highlighting build at the package's
// own version).
func TestThePackageJSONSaysWhatAPublishedPackageShould(t *testing.T) {
	dst, _, _ := packed(t)
	for _, dir := range []string{dst, filepath.Join(filepath.Dir(dst), highlightPackage)} {
		raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
		require.NoError(t, err)
		var p map[string]any
		require.NoError(t, json.Unmarshal(raw, &p))
		for _, field := range []string{"description", "keywords", "homepage", "bugs", "repository", "license", "engines", "exports", "types", "files"} {
			require.NotEmpty(t, p[field], "%s's package.json has %s", dir, field)
		}
		require.Contains(t, p, "sideEffects", dir) // false for the highlighting package: it only names its files
		require.Contains(t, p["files"], "README.md")
		require.Contains(t, p["files"], "CHANGELOG.md")
		c, err := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
		require.NoError(t, err)
		require.Equal(t, fakeChangelog, string(c))
	}
	raw, err := os.ReadFile(filepath.Join(dst, "package.json"))
	require.NoError(t, err)
	var p struct {
		SideEffects []string                     `json:"sideEffects"`
		Peers       map[string]string            `json:"peerDependencies"`
		PeersMeta   map[string]map[string]bool   `json:"peerDependenciesMeta"`
		Exports     map[string]map[string]string `json:"exports"`
	}
	_ = json.Unmarshal(raw, &p) // exports has strings too: the entries are what matters here
	require.Equal(t, "1.2.3", p.Peers[highlightPackage], "the highlighting build is the package's own version")
	require.True(t, p.PeersMeta[highlightPackage]["optional"])
	require.True(t, p.PeersMeta[mathConverter]["optional"])
	// The modules that define or register something are side effects; the
	// class alone is not.
	for _, mod := range []string{"./index.js", "./highlight.js", "./highlight-assets.js", "./math.js"} {
		require.Contains(t, p.SideEffects, mod)
	}
	require.NotContains(t, p.SideEffects, "./element.js")
	entries, err := os.ReadDir(dst)
	require.NoError(t, err)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "chunk-") {
			ok, err := filepath.Match(strings.TrimPrefix(packSideEffects[4], "./"), e.Name())
			require.NoError(t, err)
			require.True(t, ok, "the shared chunk %s is listed among the side effects", e.Name())
		}
	}
}

// The package's README (what a registry shows) says what a user needs:
// installing, both elements, the backend's side, CSP, bundlers,
// frameworks, every entry, and building it from source with the Go
// go.mod names.
func TestThePackageReadmeSaysWhatAUserNeeds(t *testing.T) {
	dst, _, p := packed(t)
	b, err := os.ReadFile(filepath.Join(dst, "README.md"))
	require.NoError(t, err)
	readme := string(b)
	for _, heading := range []string{"## Install", "## A chat", "## One answer", "## What your backend must send", "## Content-Security-Policy",
		"## Bundlers", "## Frameworks", "## The optional entries", "## Build it yourself"} {
		require.Contains(t, readme, "\n"+heading+"\n")
	}
	for _, s := range []string{"<trickle-chat", "<trickle-answer", "npm install trickle-answer\n", "text/event-stream", "trickle-answer-highlight", "worker-src", "wasm-unsafe-eval", "optimizeDeps.exclude"} {
		require.Contains(t, readme, s)
	}
	for sub := range p.Exports {
		if sub == "./package.json" || sub == "./custom-elements.json" {
			continue
		}
		require.Contains(t, readme, "trickle-answer"+strings.TrimPrefix(sub, "."), "the README names the entry %s", sub)
	}
	mod, err := os.ReadFile("../../../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	require.NotNil(t, m)
	_, build, ok := strings.Cut(readme, "## Build it yourself")
	require.True(t, ok)
	require.Contains(t, build, "Requires Go "+string(m[1]), "building from source names go.mod's Go")
	_, use, _ := strings.Cut(readme, "## Install")
	use, _, _ = strings.Cut(use, "## Build it yourself")
	require.NotRegexp(t, `\bGo \d|\bgo (run|build|install)\b|make (build|dist)`, use, "using the package needs no Go")
}
