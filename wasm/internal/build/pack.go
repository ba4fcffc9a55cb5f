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
// files unchanged resolves beside the module. Only highlight.js names the
// highlighting build's .wasm, so a bundle that never imports it ships one
// .wasm.

package main

import (
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

// packTypes are the files of wasm/web/types the package ships as they are.
var packTypes = []string{"trickle-answer.d.ts", "react.d.ts", "vue.d.ts", "custom-elements.json"}

// pack writes the package into dst (replacing what an earlier pack left
// there) from the widget built in widget and the sources in web; version
// is the package's version (the repository's VERSION file).
func pack(widget, web, dst, version string) error {
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
	files := map[string][]byte{}
	// trickle.js is the relay's one-file loader (highlighting included):
	// with it the package's folder is also a widget trickle serve --widget
	// serves, and a page can load that one file.
	for _, name := range []string{m.Loader, m.Wasm, m.WasmExec, m.Worker, m.CSS, m.HighlightWasm, m.HighlightCSS} {
		b, err := os.ReadFile(filepath.Join(widget, name))
		if err != nil {
			return fmt.Errorf("pack: the widget in %s lacks a file its manifest names: %w", widget, err)
		}
		files[name] = b
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
		External:    []string{mathConverter},
	}, "the package's entries")
	if err != nil {
		return nil, err
	}
	cssText, err := json.Marshal(css)
	if err != nil {
		return nil, err
	}
	values := map[string]string{
		`"__TRICKLE_CSS_TEXT__"`:     string(cssText),
		"__TRICKLE_WASM__":           "./" + m.Wasm,
		"__TRICKLE_WASM_EXEC__":      "./" + m.WasmExec,
		"__TRICKLE_WORKER__":         "./" + m.Worker,
		"__TRICKLE_CSS__":            "./" + m.CSS,
		"__TRICKLE_HIGHLIGHT_WASM__": "./" + m.HighlightWasm,
		"__TRICKLE_HIGHLIGHT_CSS__":  "./" + m.HighlightCSS,
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

// packageJSON is the package's manifest; files lists everything in it.
func packageJSON(version string, files []string) ([]byte, error) {
	type entry struct {
		Types   string `json:"types,omitempty"`
		Default string `json:"default,omitempty"`
	}
	p := struct {
		Name           string            `json:"name"`
		Version        string            `json:"version"`
		Description    string            `json:"description"`
		Keywords       []string          `json:"keywords"`
		Type           string            `json:"type"`
		Main           string            `json:"main"`
		Module         string            `json:"module"`
		Types          string            `json:"types"`
		Exports        map[string]any    `json:"exports"`
		Peers          map[string]string `json:"peerDependencies"`
		PeersMeta      map[string]any    `json:"peerDependenciesMeta"`
		CustomElements string            `json:"customElements"`
		Files          []string          `json:"files"`
		Repository     map[string]string `json:"repository"`
	}{
		Name:        "trickle-answer",
		Version:     version,
		Description: "<trickle-answer>: stream a language model's answer into any page, rendered as markdown while it is written and announced to screen readers sentence by sentence.",
		Keywords:    []string{"custom-element", "web-component", "llm", "streaming", "markdown", "sse", "accessibility", "webassembly"},
		Type:        "module",
		Main:        "./index.js",
		Module:      "./index.js",
		Types:       "./index.d.ts",
		Exports: map[string]any{
			".":                      entry{Types: "./index.d.ts", Default: "./index.js"},
			"./element":              entry{Types: "./element.d.ts", Default: "./element.js"},
			"./highlight":            entry{Types: "./highlight.d.ts", Default: "./highlight.js"},
			"./math":                 entry{Types: "./math.d.ts", Default: "./math.js"},
			"./react":                entry{Types: "./react.d.ts"},
			"./vue":                  entry{Types: "./vue.d.ts"},
			"./trickle.css":          "./trickle.css",
			"./custom-elements.json": "./custom-elements.json",
			"./package.json":         "./package.json",
		},
		Peers:          map[string]string{mathConverter: mathConverterRange},
		PeersMeta:      map[string]any{mathConverter: map[string]bool{"optional": true}},
		CustomElements: "custom-elements.json",
		Files:          files,
		Repository:     map[string]string{"type": "git", "url": "git+https://github.com/trickle-dev/trickle.git"},
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

const packReadme = "# trickle-answer\n\n" +
	"Two custom elements for a language model's answers in any page. `<trickle-answer>` streams\n" +
	"one answer: it reads the response (OpenAI, Anthropic, Gemini, Ollama, the AI SDK's UI\n" +
	"message stream or plain SSE/NDJSON), renders the markdown as it is written and announces\n" +
	"it to screen readers sentence by sentence. `<trickle-chat>` is a conversation: a thread of\n" +
	"turns (the reader's message and a `<trickle-answer>`) under a composer, that sends the\n" +
	"whole history each turn, runs the page's tools and hands the thread back to save. Their\n" +
	"work runs in Go compiled to WebAssembly, in a Web Worker.\n\n" +
	"```js\n" +
	"import \"trickle-answer\";            // defines <trickle-answer> and <trickle-chat> (harmless on a server)\n" +
	"// import \"trickle-answer/highlight\"; // the same, with syntax highlighting\n" +
	"// import \"trickle-answer/math\";      // the same, formulas as MathML (npm install temml)\n" +
	"// import { TrickleAnswer } from \"trickle-answer/element\"; // the class, not defined\n" +
	"```\n\n" +
	"## One answer: `<trickle-answer>`\n\n" +
	"```html\n" +
	"<trickle-answer endpoint=\"/api/chat\"></trickle-answer>\n" +
	"<script type=\"module\">\n" +
	"  import \"./node_modules/trickle-answer/index.js\";\n" +
	"  const answer = document.querySelector(\"trickle-answer\");\n" +
	"  answer.addEventListener(\"trickle-end\", (e) => console.log(e.detail.status));\n" +
	"  answer.ask(\"Explain SSE in one paragraph.\");\n" +
	"</script>\n" +
	"```\n\n" +
	"Attributes: `endpoint`, `transport` (`sse` or `websocket`), `ws-endpoint`, `dialect`,\n" +
	"`announce`, `speak`, `model`, `image-origins`, `show-metrics`, `highlight`, `worker`.\n" +
	"Methods: `ask(promptOrBody)`, `stream(url, init)`, `stop()`, `retry()`, `speak()`,\n" +
	"`stopSpeaking()`. Events: `trickle-start`, `trickle-first-token`, `trickle-end`,\n" +
	"`trickle-tool-call`, `trickle-usage`, `trickle-error`.\n\n" +
	"## A conversation: `<trickle-chat>`\n\n" +
	"```html\n" +
	"<trickle-chat endpoint=\"/api/chat\" image-origins=\"https://images.example\"></trickle-chat>\n" +
	"<script type=\"module\">\n" +
	"  import \"./node_modules/trickle-answer/index.js\";\n" +
	"  const chat = document.querySelector(\"trickle-chat\");\n" +
	"  chat.tools = { get_weather: async ({ location }) => ({ location, temperature: 18 }) };\n" +
	"  chat.messages = JSON.parse(localStorage.getItem(\"thread\") ?? \"[]\"); // shown at once, no request\n" +
	"  chat.addEventListener(\"trickle-chat-change\", (e) => localStorage.setItem(\"thread\", JSON.stringify(e.detail.messages)));\n" +
	"</script>\n" +
	"```\n\n" +
	"Its attributes are `<trickle-answer>`'s, every one, and `lang` and `dir`: each is handed\n" +
	"to every answer. `chat.messages` gets and sets the history (OpenAI-style messages);\n" +
	"`send(text)`, `regenerate()`, `edit(text)`, `stop()`, `busy`, `tools`, `headers` and\n" +
	"`strings`; `trickle-chat-change` fires after every turn, and each answer's events bubble\n" +
	"through the chat.\n\n" +
	"## Types\n\n" +
	"The types come with the package, for both elements (`TrickleAnswer`, `TrickleChat`, their\n" +
	"attributes and events). For JSX in React 19 add `import type {} from \"trickle-answer/react\"`\n" +
	"(`<trickle-answer>` and `<trickle-chat>`; events are `ontrickle-end`,\n" +
	"`ontrickle-chat-change` and the like), for Vue 3 templates\n" +
	"`import type {} from \"trickle-answer/vue\"` (`@trickle-end`, `@trickle-chat-change`).\n" +
	"With Vite, list the package in `optimizeDeps.exclude` so its assets stay beside its modules.\n"
