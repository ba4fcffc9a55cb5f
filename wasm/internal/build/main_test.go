package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/wasm/internal/inline"
	"github.com/trickle-dev/trickle/wasm/internal/stdswap"
)

func TestHashedNamesChangeWithTheContentOnly(t *testing.T) {
	a := hashed("trickle", ".wasm", []byte("one"))
	require.Equal(t, a, hashed("trickle", ".wasm", []byte("one")))
	require.NotEqual(t, a, hashed("trickle", ".wasm", []byte("two")))
	require.Regexp(t, `^trickle\.[0-9a-f]{10}\.wasm$`, a)
}

func TestTheLoaderGetsEveryHashedName(t *testing.T) {
	src := []byte(`new URL("__TRICKLE_WASM__"); new URL("__TRICKLE_CSS__")`)
	out, err := fillLoader(src, map[string]string{"__TRICKLE_WASM__": "a.1.wasm", "__TRICKLE_CSS__": "b.2.css"})
	require.NoError(t, err)
	require.Equal(t, `new URL("a.1.wasm"); new URL("b.2.css")`, string(out))
}

func TestALoaderMissingAPlaceholderIsAnError(t *testing.T) {
	_, err := fillLoader([]byte(`"__TRICKLE_WASM__"`), map[string]string{"__TRICKLE_WASM__": "a", "__TRICKLE_CSS__": "b"})
	require.ErrorContains(t, err, "__TRICKLE_CSS__")
}

func TestALoaderWithAnUnknownPlaceholderIsAnError(t *testing.T) {
	_, err := fillLoader([]byte(`"__TRICKLE_WASM__" "__TRICKLE_FONT__"`), map[string]string{"__TRICKLE_WASM__": "a"})
	require.ErrorContains(t, err, "__TRICKLE_FONT__")
}

func TestPublishReplacesTheOldBuildButKeepsTheReadme(t *testing.T) {
	out, stage := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"README.md": "keep", "trickle.old.wasm": "stale", "trickle.js": "old"} {
		require.NoError(t, os.WriteFile(filepath.Join(out, name), []byte(body), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(stage, "trickle.js"), []byte("new"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(stage, "trickle.new.wasm"), []byte("fresh"), 0o644))
	require.NoError(t, publish(stage, out))

	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"README.md", "trickle.js", "trickle.new.wasm"}, names)
	js, err := os.ReadFile(filepath.Join(out, "trickle.js"))
	require.NoError(t, err)
	require.Equal(t, "new", string(js))
}

func TestCompressedCopiesRoundTrip(t *testing.T) {
	data := []byte("<trickle-answer> streams </trickle-answer> streams streams streams")
	gz, err := gzipBytes(data)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	back, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, data, back)

	br, err := brotliBytes(data)
	require.NoError(t, err)
	back, err = io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
	require.NoError(t, err)
	require.Equal(t, data, back)
}

// deps lists the packages the widget links for js/wasm with the given tags.
func deps(t *testing.T, tags string) string {
	t.Helper()
	args := []string{"list", "-deps"}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "../../cmd/widget")...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

func TestOnlyTheHighlightingVariantLinksChroma(t *testing.T) {
	plain, hl := deps(t, ""), deps(t, HighlightTag)
	require.NotContains(t, plain, "github.com/alecthomas/chroma", "the default widget must not carry chroma")
	require.NotContains(t, plain, "github.com/trickle-dev/trickle/render/highlight")
	require.Contains(t, hl, "github.com/alecthomas/chroma/v2/lexers")
	require.Contains(t, hl, "github.com/trickle-dev/trickle/render/highlight")
}

// Packages the widget was freed of, each for its size
// (docs/notes/widget-size.md): a new import that brings one back is caught
// here.
func TestTheDefaultWidgetLinksNoneOfTheHeavyPackagesItDropped(t *testing.T) {
	plain := deps(t, "")
	for _, p := range []string{"encoding/json", "mime", "encoding/base64", "text/template", "html/template", "math/big", "html"} {
		require.NotContains(t, strings.Fields(plain), p)
	}
}

// Functions the widget was freed of though their package stays linked,
// each for its size (docs/notes/widget-size.md): time's formatting (the
// widget keeps time.Now) is linked again as soon as a time.Time is
// reachable from a type that becomes an interface value, fmt calling
// String through one; the runtime's select, by a select of two channels;
// strings.ToValidUTF8, by a call (element.toValidUTF8 does its work);
// strings and bytes' IndexAny and LastIndexAny (internal/anyof does theirs);
// sort.SliceStable (render's sortMarkers); net/url's parser, resolver and
// writer, and net/netip's address parser behind it (internal/weburl); the
// equality functions of structs nothing compares; fmt.Errorf, with the
// integer sort it links (internal/errtext wraps); strings.Fields,
// strings.Replace, the TrimSpaces, the ASCII Trims and LastIndex (internal/stdlite's
// stand-ins; a11y's Unicode cutsets keep strings.TrimRight).
// The linker's -dumpdep lists every function it
// keeps, and a new interface value or generic instantiation that brings
// one back is caught here.
func TestTheDefaultWidgetLinksNoneOfTheHeavyFunctionsItDropped(t *testing.T) {
	if testing.Short() {
		t.Skip("links the widget")
	}
	overlay, err := stdswap.Overlay("go", t.TempDir())
	require.NoError(t, err)
	args := append([]string{"build", "-trimpath", "-ldflags=-dumpdep", overlay}, inline.Flags()...)
	cmd := exec.Command("go", append(args, "-o", filepath.Join(t.TempDir(), "widget.wasm"), "../../cmd/widget")...)
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	var deps bytes.Buffer
	cmd.Stderr = &deps
	require.NoError(t, cmd.Run(), deps.String())
	kept := map[string]bool{}
	for _, line := range strings.Split(deps.String(), "\n") {
		if _, to, ok := strings.Cut(line, " -> "); ok {
			to, _, _ = strings.Cut(to, " <")
			kept[to] = true
		}
	}
	require.True(t, kept["time.Now"], "the dependency dump lists what the widget links")
	// regexp is internal/relite (stdswap): goldmark's patterns compile
	// with it, and the standard library's parser is not linked.
	require.True(t, kept["regexp.MustCompile"], "goldmark compiles its patterns")
	require.True(t, kept["regexp.(*parser).alternation"], "regexp is relite")
	for f := range kept {
		require.False(t, strings.HasPrefix(f, "regexp/syntax."), "the default widget links %s", f)
	}
	// No equality function of a struct nothing compares (each begins
	// with an incomparable field): none of an unexported type of
	// Trickle's but those built with positional literals, and none of
	// these exported ones.
	const trickle = "type:.eq.github.com/trickle-dev/trickle/"
	for f := range kept {
		name, ok := strings.CutPrefix(f, trickle)
		if !ok {
			continue
		}
		_, typ, _ := strings.Cut(name, ".")
		if typ != "" && typ[0] >= 'a' && typ[0] <= 'z' && typ != "keyed" && typ != "openElement" {
			t.Errorf("the default widget links %s: begin the struct with an incomparable field", f)
		}
	}
	for _, typ := range []string{"wasm/element.Strings", "wasm/element.Early", "wasm/element.StoredCall", "wasm/element.Pacer", "internal/weburl.URL", "internal/jsonx.Reader"} {
		require.False(t, kept[trickle+typ], "the default widget links %s", trickle+typ)
	}
	for _, f := range []string{"time.Time.String", "time.Time.GoString", "time.Time.Format", "time.Time.appendFormat", "runtime.selectgo", "strings.ToValidUTF8", "strings.IndexAny", "bytes.IndexAny", "bytes.LastIndexAny", "sort.SliceStable", "net/url.Parse", "net/url.(*URL).ResolveReference", "net/url.(*URL).String", "net/url.PathEscape", "net/url.QueryUnescape", "net/url.(*URL).Hostname", "net/netip.ParseAddr", "fmt.Errorf", "strings.Fields", "strings.Replace", "strings.ReplaceAll", "strings.TrimSpace", "bytes.TrimSpace", "strings.Trim", "strings.TrimLeft", "bytes.Trim", "bytes.TrimLeft", "bytes.TrimRight", "strings.LastIndex", "bytes.LastIndex"} {
		require.False(t, kept[f], "the default widget links %s", f)
	}
}

// The shipped scripts stay valid JavaScript once minified (node parses
// them), keep their names (stack traces and the console read as the
// source) and lose their comments.
func TestMinifiedScriptsStillParseAndKeepTheirNames(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is needed to check the minified scripts")
		}
		t.Skip("node not installed")
	}
	goroot, err := goEnv("GOROOT")
	require.NoError(t, err)
	for _, tc := range []struct {
		path, ext string
		names     []string
	}{
		{"../../web/trickle.js", ".mjs", []string{"Host=class", "function patchTail", "function mergePatch", "Answer=class", "function sanitizeSpans", "TrickleAnswer=class", "customElements.define", "export"}},
		{"../../web/trickle-worker.js", ".js", []string{"class Inbox", "__trickleStart", "__trickleBoot"}},
		{filepath.Join(goroot, "lib/wasm/wasm_exec.js"), ".js", []string{"globalThis.Go", "importObject"}},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			src, err := os.ReadFile(tc.path)
			require.NoError(t, err)
			switch {
			case tc.ext == ".mjs":
				// The loader's entry: its modules bundled into one.
				src, err = bundle(tc.path)
				require.NoError(t, err)
			case filepath.Base(tc.path) == "trickle-worker.js":
				// The worker, with the contract it imports, as one classic script.
				src, err = bundleWorker(tc.path)
				require.NoError(t, err)
				require.NotRegexp(t, `(?m)^\s*(import|export)\s`, string(src), "the worker is a classic script")
			}
			out, err := minify(filepath.Base(tc.path), src)
			require.NoError(t, err)
			require.Less(t, len(out), len(src)*3/4, "minified")
			for _, n := range tc.names {
				require.Contains(t, string(out), n)
			}
			require.NotContains(t, string(out), "\n//", "comments are gone")
			f := filepath.Join(t.TempDir(), "script"+tc.ext)
			require.NoError(t, os.WriteFile(f, out, 0o644))
			msg, err := exec.Command(node, "--check", f).CombinedOutput()
			require.NoError(t, err, "node --check: %s", msg)
		})
	}
}

func TestMinifyingBrokenCodeSaysWhichFile(t *testing.T) {
	_, err := minify("trickle.js", []byte("function ( {"))
	require.ErrorContains(t, err, "trickle.js")
}

// Every module under wasm/web (but the worker, its own script) is part of
// the loader: a module nothing imports is dead code, and an import left
// unbundled would make the page fetch a file the build never writes.
func TestTheLoaderBundlesEveryModuleAndImportsNothing(t *testing.T) {
	out, err := bundle("../../web/trickle.js")
	require.NoError(t, err)
	files, err := filepath.Glob("../../web/*.js")
	require.NoError(t, err)
	for _, f := range files {
		name := filepath.Base(f)
		// The worker; the entries (imports, no code of their own); the
		// package's math entry (temml, from the page's npm packages).
		if name == "trickle-worker.js" || name == "trickle.js" || name == "highlight.js" || name == "math.js" {
			continue
		}
		require.Regexp(t, `(?m)^// .*\bweb/`+regexp.QuoteMeta(name)+`$`, string(out), "%s is not in the bundle", name)
	}
	require.NotRegexp(t, `(?m)^import\s`, string(out), "a static import left in the loader")
	require.Contains(t, string(out), "import.meta.url", "assets resolve against the loader's URL")
}

func TestBundlingAMissingModuleSaysWhich(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "trickle.js"), []byte(`import "./gone.js";`), 0o644))
	_, err := bundle(filepath.Join(dir, "trickle.js"))
	require.ErrorContains(t, err, "gone.js")
}
