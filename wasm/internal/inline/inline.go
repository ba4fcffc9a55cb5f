// Package inline is the widget's inlining policy, shared by the build
// (wasm/internal/build) and the size report (wasm/internal/size), so that
// `make size` measures the .wasm that ships.
package inline

// HotPackages keep the compiler's inlining in the widget's build; every
// other package is compiled without it (-l), which makes the .wasm
// smaller brotli: inlined bodies are copies that compress worse than
// calls. Since 2026-12-06 only the runtime keeps it (allocation, write
// barriers, the scheduler: what every other package calls). Inlining in
// the rest of what runs per chunk or frame (strings, bytes, SSE, the
// dialects, the markdown parser, render, a11y, jsonx, the Session, the
// protocol) cost 48 KB of brotli for 1.13x less Go CPU in the Web Worker
// on the 100 KB answer and none measurable on the 20 KB one
// (wasm/element's BenchmarkSessionAnswer on Node); the runtime's own
// inlining buys back what no inlining at all costs there (1.35x) for
// 36 KB (docs/PERFORMANCE.md, "The inlining"). A package put back here
// gets its inlining back.
var HotPackages = []string{"runtime"}

// Flags are go build's -gcflags: no inlining (-l) anywhere but in
// HotPackages (the last pattern a package matches wins).
func Flags() []string {
	flags := []string{"-gcflags=all=-l"}
	for _, p := range HotPackages {
		flags = append(flags, "-gcflags="+p+"=")
	}
	return flags
}
