// Command build compiles the <trickle-answer> widget into a folder the relay
// serves (the Makefile's `widget` target):
//
//	go run ./wasm/internal/build -out assets/widget
//
// It builds ./wasm/cmd/widget for GOOS=js GOARCH=wasm (-trimpath, -s -w,
// inlining only in the packages that run per chunk or frame),
// copies wasm_exec.js from the same toolchain (a wasm_exec.js from another Go
// version fails at run time), gives the .wasm, wasm_exec.js, the worker
// script (trickle-worker.js: where Go runs) and the stylesheet
// content-hashed names, bundles wasm/web/trickle.js and the ES modules it
// imports into trickle.js (the loader, the only stable name) pointing at them and holding the stylesheet's text (the page applies it
// from there; the file is the fallback for a policy that refuses inline
// styles), minifies every script and the stylesheet (esbuild: white space,
// comments and syntax; names kept), writes .br and .gz siblings of every
// asset, and a manifest.json with the names and sizes.
//
// It also builds the highlighting variant: the same package with the build
// tag trickle_highlight (which links render/highlight, chroma and its
// lexers), and its stylesheet (render/highlight.CSS). The loader fetches
// those only for a page with a <trickle-answer highlight>, so the default
// widget does not carry chroma. It removes what an earlier build
// left in the folder, except README.md.
//
// It never touches files outside -out, and never leaves a half-written
// folder: everything is staged in a temporary directory first.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/evanw/esbuild/pkg/api"

	"github.com/trickle-dev/trickle/render/highlight"
	"github.com/trickle-dev/trickle/wasm/internal/inline"
	"github.com/trickle-dev/trickle/wasm/internal/stdswap"
	"github.com/trickle-dev/trickle/wasm/internal/wasmdata"
)

// Manifest describes one build; the relay's tests and the size report read
// it.
type Manifest struct {
	Loader   string `json:"loader"`
	Wasm     string `json:"wasm"`
	WasmExec string `json:"wasm_exec"`
	// Worker is trickle-worker.js: where the widget's Go side runs (a Web
	// Worker, or the page's main thread as the fallback).
	Worker string `json:"worker"`
	CSS    string `json:"css"`
	// HighlightWasm and HighlightCSS are the highlighting variant's .wasm
	// (in place of Wasm) and its extra stylesheet.
	HighlightWasm string           `json:"highlight_wasm"`
	HighlightCSS  string           `json:"highlight_css"`
	Go            string           `json:"go"`
	Sizes         map[string]Sizes `json:"sizes"`
	// CSSInline says the loader carries the stylesheet's text: a page
	// loads the CSS file only when its policy refuses inline styles.
	CSSInline bool `json:"css_inline"`
	// Total is the sum over the loader, the worker script, wasm_exec.js
	// and the .wasm: what a first visit downloads (the stylesheet comes
	// inside the loader).
	Total Sizes `json:"total"`
	// HighlightTotal is the same for a page that highlights: the variant's
	// .wasm in place of the default one, plus its stylesheet.
	HighlightTotal Sizes `json:"highlight_total"`
}

// goTool is the go command that builds the .wasm and names the GOROOT
// whose wasm_exec.js goes with it (-go).
var goTool = "go"

// HighlightTag is the build tag of the highlighting variant.
const HighlightTag = "trickle_highlight"

// Sizes are the byte counts of one asset, raw and compressed.
type Sizes struct {
	Raw    int `json:"raw"`
	Gzip   int `json:"gzip"`
	Brotli int `json:"brotli"`
}

func main() {
	out := flag.String("out", "assets/widget", "output folder (embedded by package assets)")
	pkg := flag.String("pkg", "./wasm/cmd/widget", "the widget's main package")
	web := flag.String("web", "wasm/web", "folder holding trickle.js and trickle.css")
	flag.StringVar(&goTool, "go", "go", "the go command to build with (the Makefile's $(GO)); wasm_exec.js comes from its GOROOT")
	packTo := flag.String("pack", "", "lay out the npm package in this folder from the widget already built in -out (no Go build)")
	versionFile := flag.String("version-file", "VERSION", "the package's version (with -pack)")
	changelogFile := flag.String("changelog", "CHANGELOG.md", "the changelog, whose top entry is the version (with -pack)")
	flag.Parse()
	if *packTo != "" {
		v, err := os.ReadFile(*versionFile)
		var changes []byte
		if err == nil {
			changes, err = os.ReadFile(*changelogFile)
		}
		if err == nil {
			err = pack(*out, *web, *packTo, string(v), changes)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("package: %s\n", *packTo)
		return
	}
	m, err := build(*out, *pkg, *web)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("widget: %s (%d bytes, %d brotli), whole widget %d bytes brotli, %d gzip -> %s\n",
		m.Wasm, m.Sizes[m.Wasm].Raw, m.Sizes[m.Wasm].Brotli, m.Total.Brotli, m.Total.Gzip, *out)
	fmt.Printf("highlighting variant: %s (%d bytes, %d brotli), whole widget %d bytes brotli, %d gzip\n",
		m.HighlightWasm, m.Sizes[m.HighlightWasm].Raw, m.Sizes[m.HighlightWasm].Brotli, m.HighlightTotal.Brotli, m.HighlightTotal.Gzip)
}

func build(out, pkg, web string) (*Manifest, error) {
	stage, err := os.MkdirTemp("", "trickle-widget-")
	if err != nil {
		return nil, fmt.Errorf("build: staging folder: %w", err)
	}
	defer os.RemoveAll(stage)

	goVersion, err := goEnv("GOVERSION")
	if err != nil {
		return nil, err
	}
	goroot, err := goEnv("GOROOT")
	if err != nil {
		return nil, err
	}

	files := map[string][]byte{}
	m := &Manifest{Go: goVersion, Sizes: map[string]Sizes{}, CSSInline: true}

	wasm, err := goBuild(stage, pkg, "")
	if err != nil {
		return nil, err
	}
	m.Wasm = hashed("trickle", ".wasm", wasm)
	files[m.Wasm] = wasm

	hlWasm, err := goBuild(stage, pkg, HighlightTag)
	if err != nil {
		return nil, err
	}
	m.HighlightWasm = hashed("trickle-highlight", ".wasm", hlWasm)
	files[m.HighlightWasm] = hlWasm
	hlCSS, err := highlight.CSS()
	if err != nil {
		return nil, fmt.Errorf("build: highlighting stylesheet: %w", err)
	}
	m.HighlightCSS = hashed("trickle-highlight", ".css", []byte(hlCSS))
	files[m.HighlightCSS] = []byte(hlCSS)

	// Go 1.24 moved wasm_exec.js from misc/wasm to lib/wasm.
	var execJS []byte
	for _, dir := range []string{"lib/wasm", "misc/wasm"} {
		if execJS, err = os.ReadFile(filepath.Join(goroot, dir, "wasm_exec.js")); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("build: wasm_exec.js not found in GOROOT %s: %w", goroot, err)
	}
	if execJS, err = minify("wasm_exec.js", execJS); err != nil {
		return nil, err
	}
	m.WasmExec = hashed("wasm_exec", ".js", execJS)
	files[m.WasmExec] = execJS

	css, err := os.ReadFile(filepath.Join(web, "trickle.css"))
	if err != nil {
		return nil, fmt.Errorf("build: stylesheet: %w", err)
	}
	if css, err = minify("trickle.css", css); err != nil {
		return nil, err
	}
	m.CSS = hashed("trickle", ".css", css)
	files[m.CSS] = css

	workerJS, err := bundleWorker(filepath.Join(web, "trickle-worker.js"))
	if err != nil {
		return nil, err
	}
	if workerJS, err = minify("trickle-worker.js", workerJS); err != nil {
		return nil, err
	}
	m.Worker = hashed("trickle-worker", ".js", workerJS)
	files[m.Worker] = workerJS

	loader, err := bundle(filepath.Join(web, "trickle.js"))
	if err != nil {
		return nil, err
	}
	// The stylesheet travels inside the loader too: the page applies it
	// from there, without a second request (the file is the fallback).
	cssText, err := json.Marshal(string(css))
	if err != nil {
		return nil, err
	}
	loader, err = fillLoader(loader, map[string]string{
		`"__TRICKLE_CSS_TEXT__"`:     string(cssText),
		"__TRICKLE_WASM__":           m.Wasm,
		"__TRICKLE_WASM_EXEC__":      m.WasmExec,
		"__TRICKLE_WORKER__":         m.Worker,
		"__TRICKLE_CSS__":            m.CSS,
		"__TRICKLE_HIGHLIGHT_WASM__": m.HighlightWasm,
		"__TRICKLE_HIGHLIGHT_CSS__":  m.HighlightCSS,
	})
	if err != nil {
		return nil, err
	}
	if loader, err = minify("trickle.js", loader); err != nil {
		return nil, err
	}
	m.Loader = "trickle.js"
	files[m.Loader] = loader

	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := files[name]
		gz, err := gzipBytes(data)
		if err != nil {
			return nil, fmt.Errorf("build: gzip %s: %w", name, err)
		}
		br, err := brotliBytes(data)
		if err != nil {
			return nil, fmt.Errorf("build: brotli %s: %w", name, err)
		}
		for n, b := range map[string][]byte{name: data, name + ".gz": gz, name + ".br": br} {
			if err := os.WriteFile(filepath.Join(stage, n), b, 0o644); err != nil {
				return nil, err
			}
		}
		s := Sizes{Raw: len(data), Gzip: len(gz), Brotli: len(br)}
		m.Sizes[name] = s
		if name == m.CSS {
			continue // inside the loader; the file is a fallback
		}
		if name != m.HighlightWasm && name != m.HighlightCSS {
			m.Total.add(s)
		}
		if name != m.Wasm {
			m.HighlightTotal.add(s)
		}
	}
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage, "manifest.json"), append(mj, '\n'), 0o644); err != nil {
		return nil, err
	}
	return m, publish(stage, out)
}

func (s *Sizes) add(o Sizes) {
	s.Raw += o.Raw
	s.Gzip += o.Gzip
	s.Brotli += o.Brotli
}

// goBuild compiles pkg for js/wasm with the given build tags ("" for none)
// and returns the .wasm (built in dir, then removed from it).
func goBuild(dir, pkg, tags string) ([]byte, error) {
	raw := filepath.Join(dir, "widget.wasm")
	// -buildvcs=false: the .wasm must not embed the commit, so the same
	// sources give the same content-hashed names on any machine and commit.
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w"}
	args = append(args, inline.Flags()...)
	args = append(args, "-o", raw)
	if tags != "" {
		args = append(args, "-tags", tags)
	} else {
		// The default widget: regexp is internal/relite (stdswap).
		swap, err := os.MkdirTemp(dir, "stdswap")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(swap)
		overlay, err := stdswap.Overlay(goTool, swap)
		if err != nil {
			return nil, err
		}
		args = append(args, overlay)
	}
	cmd := exec.Command(goTool, append(args, pkg)...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("build: go build -tags %q %s for js/wasm: %w", tags, pkg, err)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		return nil, err
	}
	// The linker's 100,000 data segments written as a few (wasmdata):
	// the same memory, about 100 KB less brotli.
	data, err = wasmdata.MergeSegments(data, wasmdata.MaxGap)
	if err != nil {
		return nil, fmt.Errorf("build: the .wasm's data section: %w", err)
	}
	return data, os.Remove(raw)
}

// publish replaces the build output in out with the staged files, keeping
// README.md (committed; the rest is generated). New files are written
// first and stale ones removed after, so a concurrent reader (go:embed in
// another build) never finds the folder without a widget.
func publish(stage, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("build: output folder: %w", err)
	}
	staged, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	fresh := map[string]bool{"README.md": true}
	for _, e := range staged {
		data, err := os.ReadFile(filepath.Join(stage, e.Name()))
		if err != nil {
			return err
		}
		tmp := filepath.Join(out, "."+e.Name()+".tmp")
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return fmt.Errorf("build: writing %s: %w", e.Name(), err)
		}
		if err := os.Rename(tmp, filepath.Join(out, e.Name())); err != nil {
			return fmt.Errorf("build: writing %s: %w", e.Name(), err)
		}
		fresh[e.Name()] = true
	}
	old, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	for _, e := range old {
		if fresh[e.Name()] || e.IsDir() {
			continue
		}
		if err := os.Remove(filepath.Join(out, e.Name())); err != nil {
			return fmt.Errorf("build: removing the previous %s: %w", e.Name(), err)
		}
	}
	return nil
}

// hashed names an asset after its content so it can be cached forever:
// trickle.3f9a1c2b7d.wasm.
func hashed(base, ext string, data []byte) string {
	sum := sha256.Sum256(data)
	return base + "." + hex.EncodeToString(sum[:5]) + ext
}

// fillLoader substitutes the hashed names into the loader and fails when a
// placeholder is missing, so a renamed placeholder cannot ship a loader that
// fetches "__TRICKLE_WASM__".
func fillLoader(src []byte, names map[string]string) ([]byte, error) {
	s := string(src)
	for k, v := range names {
		if !strings.Contains(s, k) {
			return nil, fmt.Errorf("build: loader has no placeholder %s", k)
		}
		s = strings.ReplaceAll(s, k, v)
	}
	if i := strings.Index(s, "__TRICKLE_"); i >= 0 {
		return nil, errors.New("build: loader has an unknown placeholder near " + s[i:min(len(s), i+40)])
	}
	return []byte(s), nil
}

// bundle joins the loader's entry and the ES modules it imports into one
// module (esbuild; dynamic imports of URLs stay as they are). It does not
// minify: the placeholders are filled first, then minify shortens the
// whole, as it would one file.
func bundle(entry string) ([]byte, error) {
	abs, err := filepath.Abs(entry)
	if err != nil {
		return nil, fmt.Errorf("build: loader: %w", err)
	}
	out, err := esbuild(api.BuildOptions{EntryPoints: []string{abs}}, entry)
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, fmt.Errorf("build: bundling %s gave %d files, want 1", entry, len(out))
	}
	return out[0].Contents, nil
}

// bundleWorker joins the worker script and what it imports (the
// contract's constants) into one classic script (an IIFE): a Web Worker
// made from its URL, importScripts in a blob: worker and import() on the
// main thread all run it. Minified afterwards, as the loader is.
func bundleWorker(entry string) ([]byte, error) {
	abs, err := filepath.Abs(entry)
	if err != nil {
		return nil, fmt.Errorf("build: worker script: %w", err)
	}
	r := api.Build(api.BuildOptions{
		EntryPoints: []string{abs}, Bundle: true, Write: false, LogLevel: api.LogLevelSilent,
		Format: api.FormatIIFE, Platform: api.PlatformBrowser, Target: api.ESNext,
	})
	if len(r.Errors) > 0 {
		msgs := api.FormatMessages(r.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return nil, fmt.Errorf("build: bundling %s: %s", entry, strings.Join(msgs, ""))
	}
	if len(r.OutputFiles) != 1 {
		return nil, fmt.Errorf("build: bundling %s gave %d files, want 1", entry, len(r.OutputFiles))
	}
	return r.OutputFiles[0].Contents, nil
}

// esbuild bundles as every output of the build is bundled: ES modules for
// browsers, no syntax lowered (the source is what browsers run), nothing
// written to disk; what names what is bundled, for the error.
func esbuild(o api.BuildOptions, what string) ([]api.OutputFile, error) {
	o.Bundle, o.Write, o.LogLevel = true, false, api.LogLevelSilent
	o.Format, o.Platform, o.Target = api.FormatESModule, api.PlatformBrowser, api.ESNext
	r := api.Build(o)
	if len(r.Errors) > 0 {
		msgs := api.FormatMessages(r.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return nil, fmt.Errorf("build: bundling %s: %s", what, strings.Join(msgs, ""))
	}
	return r.OutputFiles, nil
}

// minify removes the comments and white space of a script or stylesheet
// and shortens its syntax (esbuild), keeping every name, so that the
// browser's console and stack traces still read as the source.
func minify(name string, src []byte) ([]byte, error) {
	loader := api.LoaderJS
	if strings.HasSuffix(name, ".css") {
		loader = api.LoaderCSS
	}
	r := api.Transform(string(src), api.TransformOptions{
		Loader:           loader,
		Sourcefile:       name,
		Target:           api.ESNext, // no syntax lowering: the source is what browsers run
		MinifyWhitespace: true,
		MinifySyntax:     true,
		LegalComments:    api.LegalCommentsInline,
	})
	if len(r.Errors) > 0 {
		msgs := api.FormatMessages(r.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return nil, fmt.Errorf("build: minifying %s: %s", name, strings.Join(msgs, ""))
	}
	return r.Code, nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func brotliBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 11, LGWin: 24})
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func goEnv(key string) (string, error) {
	out, err := exec.Command(goTool, "env", key).Output()
	if err != nil {
		return "", fmt.Errorf("build: %s env %s: %w", goTool, key, err)
	}
	return strings.TrimSpace(string(out)), nil
}
