// Package inline is the widget's inlining policy, shared by the build
// (wasm/internal/build) and the size report (wasm/internal/size), so that
// `make size` measures the .wasm that ships.
package inline

// HotPackages keep the compiler's inlining in the widget's build; every
// other package is compiled without it (-l), which makes the .wasm
// smaller brotli: inlined bodies are copies that compress worse than
// calls. Since 2026-12-06 there are none. Inlining in the runtime, the
// byte and string helpers, SSE, the dialects, the markdown parser,
// render, a11y, jsonx, the Session and the protocol (what runs per chunk
// or frame) cost 84 KB of the .wasm's brotli (7.3 %) and bought 1.3x less
// Go CPU per frame in the Web Worker on the 100 KB answer, 1.1x on the
// 20 KB one (wasm/element's BenchmarkSessionAnswer on Node: 171 against
// 224-234 µs a frame), off the page's thread; issue 34 asks for the
// bytes (docs/notes/widget-size.md, docs/PERFORMANCE.md). A package put
// back here gets its inlining back.
var HotPackages = []string{}

// Flags are go build's -gcflags: no inlining (-l) anywhere but in
// HotPackages (the last pattern a package matches wins).
func Flags() []string {
	flags := []string{"-gcflags=all=-l"}
	for _, p := range HotPackages {
		flags = append(flags, "-gcflags="+p+"=")
	}
	return flags
}
