// The npm package: `go run ./wasm/internal/build -out assets/widget -pack
// dist/trickle-answer` (the Makefile's `dist`) lays out the package
// trickle-answer from a widget already built in -out, without compiling Go
// again.
//
// Its entries are ES modules, split by esbuild so they share one chunk:
// index.js (defines <trickle-answer> in a browser, the default build only),
// element.js (the class, not defined) and highlight.js (registers the
// highlighting build, then defines the element) and math.js (index.js,
// and temml, which the page installs, for every formula). Every asset is found with
// new URL("./name", import.meta.url), which bundlers (Vite, webpack,
// esbuild) follow and copy, and which a static host or a CDN serving the
// files unchanged resolves beside the module.
//
// The highlighting build (12 MB of .wasm) is a package of its own,
// trickle-answer-highlight, laid out beside it (-pack's folder's sibling):
// its index.js names its .wasm and stylesheet, and trickle-answer's
// highlight-assets.js imports them from it. trickle-answer names it as an
// optional peer dependency of the same version, so installing
// trickle-answer unpacks the default build only; a page that imports
// trickle-answer/highlight installs both.

package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// packEntries are the modules of wasm/web that esbuild bundles as entries.
// highlight.js is not one: the package's highlight.js is written here, two
// imports (highlight-assets.js, then index.js), because esbuild's code
// splitting does not keep the order of an entry's imports, and the
// highlighting build must be registered before the element is defined
// (the page's elements connect at the definition and pick their build).
// As entries of their own, highlight-assets.js and index.js keep their
// bodies (the registration, the definition) in their own files.
// math.js (temml for every formula) imports temml, which the page
// installs: it stays an import for the page's bundler or import map.
var packEntries = []string{"index.js", "element.js", "highlight-assets.js", "math.js"}

// mathConverter is the npm package the math entry loads, and the versions
// it is known to work with (a peer dependency the page installs).
const mathConverter, mathConverterRange = "temml", "^0.13.5"

// packHighlight is the package's highlight.js.
const packHighlight = "import \"./highlight-assets.js\";\nexport * from \"./index.js\";\n"

// highlightPackage is the package of the highlighting build.
const highlightPackage = "trickle-answer-highlight"

// packHighlightAssets is the package's highlight-assets.js, as esbuild reads
// it in place of wasm/web/highlight-assets.js: the highlighting build's
// URLs come from its own package.
const packHighlightAssets = "import { useHighlightBuild } from \"./builds.js\";\n" +
	"import { HIGHLIGHT_WASM, HIGHLIGHT_CSS } from \"" + highlightPackage + "\";\n" +
	"export { HIGHLIGHT_WASM, HIGHLIGHT_CSS };\n" +
	"useHighlightBuild(HIGHLIGHT_WASM, HIGHLIGHT_CSS);\n"

// The package's metadata: who publishes it, under which terms, where it
// lives.
const (
	packRepository = "git+https://github.com/trickle-dev/trickle.git"
	packHomepage   = "https://github.com/trickle-dev/trickle#readme"
	packBugs       = "https://github.com/trickle-dev/trickle/issues"
	// packLicense is the SPDX identifier of the package's license. The
	// repository has no LICENSE file yet: UNLICENSED says no rights are
	// granted until its owner picks one (then name it here and ship the
	// file).
	packLicense = "UNLICENSED"
	// packNode is the Node the entries import under (server-side
	// rendering: they define nothing there).
	packNode = ">=18"
)

// packTypes are the files of wasm/web/types the package ships as they are.
var packTypes = []string{"trickle-answer.d.ts", "react.d.ts", "vue.d.ts", "custom-elements.json"}

// pack writes the package into dst (replacing what an earlier pack left
// there) from the widget built in widget and the sources in web; version
// is the package's version (the repository's VERSION file), changelog the
// repository's CHANGELOG.md, whose top entry must be that version.
func pack(widget, web, dst, version string, changelog []byte) error {
	mj, err := os.ReadFile(filepath.Join(widget, "manifest.json"))
	if err != nil {
		return fmt.Errorf("pack: no widget built in %s (run make build first): %w", widget, err)
	}
	var m Manifest
	if err := json.Unmarshal(mj, &m); err != nil {
		return fmt.Errorf("pack: %s/manifest.json: %w", widget, err)
	}
	version = strings.TrimSpace(version)
	if version == "" {
		return errors.New("pack: the version is empty")
	}
	if top := changelogVersion(changelog); top != version {
		return fmt.Errorf("pack: CHANGELOG.md's top entry is %q, not the version %s: add a \"## %s\" entry for what this release changes", top, version, version)
	}
	files := map[string][]byte{}
	// trickle.js is the relay's one-file loader (highlighting included):
	// with it the package's folder is also a widget trickle serve --widget
	// serves, and a page can load that one file.
	for _, name := range []string{m.Loader, m.Wasm, m.WasmExec, m.Worker, m.CSS} {
		b, err := os.ReadFile(filepath.Join(widget, name))
		if err != nil {
			return fmt.Errorf("pack: the widget in %s lacks a file its manifest names: %w", widget, err)
		}
		files[name] = b
	}
	hl, err := highlightFiles(widget, m, version)
	if err != nil {
		return err
	}
	// The stylesheet under a stable name too: the package's "./trickle.css"
	// export, for a page that links it itself.
	files["trickle.css"] = files[m.CSS]

	mods, err := packModules(web, m, string(files[m.CSS]))
	if err != nil {
		return err
	}
	for name, b := range mods {
		files[name] = b
	}
	for _, name := range packTypes {
		b, err := os.ReadFile(filepath.Join(web, "types", name))
		if err != nil {
			return fmt.Errorf("pack: types: %w", err)
		}
		files[name] = b
	}
	files["index.d.ts"] = []byte("export * from \"./trickle-answer.js\";\n")
	files["highlight.d.ts"] = []byte("export * from \"./trickle-answer.js\";\n")
	files["math.d.ts"] = []byte("export * from \"./trickle-answer.js\";\n")
	files["element.d.ts"] = []byte("export { TrickleAnswer } from \"./trickle-answer.js\";\nexport type * from \"./trickle-answer.js\";\n")
	files["README.md"] = []byte(packReadme)
	files["CHANGELOG.md"] = changelog
	hl["CHANGELOG.md"] = changelog

	names := make([]string, 0, len(files)+1)
	for name := range files {
		names = append(names, name)
	}
	names = append(names, "package.json")
	sort.Strings(names)
	pj, err := packageJSON(version, names)
	if err != nil {
		return err
	}
	files["package.json"] = pj
	if err := writePackage(dst, files); err != nil {
		return err
	}
	return writePackage(filepath.Join(filepath.Dir(dst), highlightPackage), hl)
}

// writePackage writes a package's files into dst, replacing what an
// earlier pack left there.
func writePackage(dst string, files map[string][]byte) error {
	stage := dst + ".tmp"
	if err := os.RemoveAll(stage); err != nil {
		return err
	}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return fmt.Errorf("pack: %w", err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(stage, name), b, 0o644); err != nil {
			return fmt.Errorf("pack: %w", err)
		}
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(stage, dst)
}

// packModules bundles the entries into ES modules with one shared chunk,
// fills the asset placeholders with "./name" URLs and the stylesheet's
// text, and minifies each file as the loader is.
func packModules(web string, m Manifest, css string) (map[string][]byte, error) {
	dir, err := filepath.Abs(web)
	if err != nil {
		return nil, err
	}
	var entries []string
	for _, e := range packEntries {
		entries = append(entries, filepath.Join(dir, e))
	}
	outdir := filepath.Join(dir, ".pack-out") // never written: Write is false
	outputs, err := esbuild(api.BuildOptions{
		EntryPoints: entries,
		Splitting:   true,
		Outdir:      outdir,
		EntryNames:  "[name]",
		ChunkNames:  "chunk-[hash]",
		External:    []string{mathConverter, highlightPackage},
		Plugins: []api.Plugin{{
			Name: "highlight-from-its-package",
			Setup: func(b api.PluginBuild) {
				own := filepath.Join(dir, "highlight-assets.js")
				b.OnLoad(api.OnLoadOptions{Filter: `highlight-assets\.js$`}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
					if a.Path != own {
						return api.OnLoadResult{}, nil
					}
					src := packHighlightAssets
					return api.OnLoadResult{Contents: &src, ResolveDir: dir, Loader: api.LoaderJS}, nil
				})
			},
		}},
	}, "the package's entries")
	if err != nil {
		return nil, err
	}
	cssText, err := json.Marshal(css)
	if err != nil {
		return nil, err
	}
	values := map[string]string{
		`"__TRICKLE_CSS_TEXT__"`: string(cssText),
		"__TRICKLE_WASM__":       "./" + m.Wasm,
		"__TRICKLE_WASM_EXEC__":  "./" + m.WasmExec,
		"__TRICKLE_WORKER__":     "./" + m.Worker,
		"__TRICKLE_CSS__":        "./" + m.CSS,
	}
	used := map[string]bool{}
	out := map[string][]byte{}
	for _, f := range outputs {
		name, err := filepath.Rel(outdir, f.Path)
		if err != nil || strings.Contains(name, string(filepath.Separator)) {
			return nil, fmt.Errorf("pack: esbuild wrote %s outside the package's folder", f.Path)
		}
		s := string(f.Contents)
		for k, v := range values {
			if strings.Contains(s, k) {
				used[k] = true
				s = strings.ReplaceAll(s, k, v)
			}
		}
		if i := strings.Index(s, "__TRICKLE_"); i >= 0 {
			return nil, fmt.Errorf("pack: %s has an unknown placeholder near %s", name, s[i:min(len(s), i+40)])
		}
		b, err := minify(name, []byte(s))
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	for k := range values {
		if !used[k] {
			return nil, fmt.Errorf("pack: no module has the placeholder %s", k)
		}
	}
	for _, e := range packEntries {
		if out[e] == nil {
			return nil, fmt.Errorf("pack: esbuild gave no %s", e)
		}
	}
	out["highlight.js"] = []byte(packHighlight)
	return out, nil
}

// entry is a conditional export: its types and its module.
type entry struct {
	Types   string `json:"types,omitempty"`
	Default string `json:"default,omitempty"`
}

// npmManifest is a package.json, in the order npm shows it.
type npmManifest struct {
	Name           string            `json:"name"`
	Version        string            `json:"version"`
	Description    string            `json:"description"`
	Keywords       []string          `json:"keywords"`
	Homepage       string            `json:"homepage"`
	Bugs           map[string]string `json:"bugs"`
	Repository     map[string]string `json:"repository"`
	License        string            `json:"license"`
	Type           string            `json:"type"`
	Main           string            `json:"main"`
	Module         string            `json:"module"`
	Types          string            `json:"types"`
	Exports        map[string]any    `json:"exports"`
	SideEffects    any               `json:"sideEffects"`
	Engines        map[string]string `json:"engines"`
	Peers          map[string]string `json:"peerDependencies,omitempty"`
	PeersMeta      map[string]any    `json:"peerDependenciesMeta,omitempty"`
	CustomElements string            `json:"customElements,omitempty"`
	Files          []string          `json:"files"`
}

// manifestOf is the metadata both packages share.
func manifestOf(name, version, description string, keywords, files []string) npmManifest {
	return npmManifest{
		Name:        name,
		Version:     version,
		Description: description,
		Keywords:    keywords,
		Homepage:    packHomepage,
		Bugs:        map[string]string{"url": packBugs},
		Repository:  map[string]string{"type": "git", "url": packRepository},
		License:     packLicense,
		Type:        "module",
		Engines:     map[string]string{"node": packNode},
		Files:       files,
	}
}

func encodeJSON(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// packSideEffects are the package's modules that do something when
// imported (define the elements, register the highlighting build, add the
// stylesheet): a bundler keeps them even when nothing of theirs is used.
// element.js and the types are free of side effects.
var packSideEffects = []string{"./index.js", "./highlight.js", "./highlight-assets.js", "./math.js", "./chunk-*.js", "./trickle.js", "./*.css"}

// packageJSON is the package's manifest; files lists everything in it.
func packageJSON(version string, files []string) ([]byte, error) {
	p := manifestOf("trickle-answer", version,
		"<trickle-answer> and <trickle-chat>: stream a language model's answer, or a whole conversation, into any page, rendered as markdown while it is written and announced to screen readers sentence by sentence.",
		[]string{"custom-element", "web-component", "llm", "chat", "streaming", "markdown", "sse", "openai", "accessibility", "screen-reader", "webassembly", "react", "vue"},
		files)
	p.Main, p.Module, p.Types = "./index.js", "./index.js", "./index.d.ts"
	p.Exports = map[string]any{
		".":                      entry{Types: "./index.d.ts", Default: "./index.js"},
		"./element":              entry{Types: "./element.d.ts", Default: "./element.js"},
		"./highlight":            entry{Types: "./highlight.d.ts", Default: "./highlight.js"},
		"./math":                 entry{Types: "./math.d.ts", Default: "./math.js"},
		"./react":                entry{Types: "./react.d.ts"},
		"./vue":                  entry{Types: "./vue.d.ts"},
		"./trickle.css":          "./trickle.css",
		"./custom-elements.json": "./custom-elements.json",
		"./package.json":         "./package.json",
	}
	p.SideEffects = packSideEffects
	// Both optional: a page installs temml for the math entry, and the
	// highlighting build (the same version) for the highlight entry.
	p.Peers = map[string]string{mathConverter: mathConverterRange, highlightPackage: version}
	p.PeersMeta = map[string]any{mathConverter: map[string]bool{"optional": true}, highlightPackage: map[string]bool{"optional": true}}
	p.CustomElements = "custom-elements.json"
	return encodeJSON(p)
}

// packReadme is the package's README (what a registry shows).
//
//go:embed package-readme.md
var packReadme string

// changelogVersion is the version the top entry of a changelog names: the
// first word of its first "## " heading, without brackets ("" when it has
// none).
func changelogVersion(changelog []byte) string {
	for _, line := range strings.Split(string(changelog), "\n") {
		if rest, ok := strings.CutPrefix(line, "## "); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return ""
			}
			return strings.Trim(f[0], "[]")
		}
	}
	return ""
}

// highlightFiles are the files of the package trickle-answer-highlight:
// the highlighting build's .wasm and stylesheet, unchanged, and an index.js
// that names them (new URL beside the module, which bundlers follow and
// copy, and a static host resolves).
func highlightFiles(widget string, m Manifest, version string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, name := range []string{m.HighlightWasm, m.HighlightCSS} {
		b, err := os.ReadFile(filepath.Join(widget, name))
		if err != nil {
			return nil, fmt.Errorf("pack: the widget in %s lacks a file its manifest names: %w", widget, err)
		}
		files[name] = b
	}
	files["index.js"] = []byte("// The highlighting build of <trickle-answer>: import \"trickle-answer/highlight\", which imports this.\n" +
		"export const HIGHLIGHT_WASM = new URL(\"./" + m.HighlightWasm + "\", import.meta.url);\n" +
		"export const HIGHLIGHT_CSS = new URL(\"./" + m.HighlightCSS + "\", import.meta.url);\n")
	files["index.d.ts"] = []byte("/** The highlighting build's WebAssembly, beside the module. */\nexport declare const HIGHLIGHT_WASM: URL;\n" +
		"/** The highlighting build's stylesheet, beside the module. */\nexport declare const HIGHLIGHT_CSS: URL;\n")
	files["README.md"] = []byte(highlightReadme)
	names := []string{"CHANGELOG.md", "package.json"}
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	p := manifestOf(highlightPackage, version,
		"The syntax-highlighting build of <trickle-answer> (Go and chroma compiled to WebAssembly): install it beside trickle-answer and import trickle-answer/highlight.",
		[]string{"trickle-answer", "syntax-highlighting", "webassembly", "custom-element"}, names)
	p.Main, p.Module, p.Types = "./index.js", "./index.js", "./index.d.ts"
	p.Exports = map[string]any{
		".":              entry{Types: "./index.d.ts", Default: "./index.js"},
		"./package.json": "./package.json",
	}
	p.SideEffects = false
	pj, err := encodeJSON(p)
	if err != nil {
		return nil, err
	}
	files["package.json"] = pj
	return files, nil
}

const highlightReadme = "# trickle-answer-highlight\n\n" +
	"The syntax-highlighting build of [`trickle-answer`](https://github.com/trickle-dev/trickle#readme)'s\n" +
	"`<trickle-answer>` and `<trickle-chat>`: the widget's Go side with chroma inside, compiled to\n" +
	"WebAssembly (about 12 MB, 3 MB compressed), and its stylesheet. It is a package of its own so\n" +
	"that installing `trickle-answer` does not unpack it for pages that never highlight.\n\n" +
	"```sh\nnpm install trickle-answer trickle-answer-highlight\n```\n\n" +
	"```js\nimport \"trickle-answer/highlight\"; // defines the elements; <trickle-answer highlight> colours settled code blocks\n```\n\n" +
	"Install the same version as `trickle-answer` (its optional peer dependency names it). With Vite,\n" +
	"list both packages in `optimizeDeps.exclude`.\n"
