// Package inline is the widget's inlining policy, shared by the build
// (wasm/internal/build) and the size report (wasm/internal/size), so that
// `make size` measures the .wasm that ships.
package inline

// HotPackages run for every network chunk or frame (the runtime's
// allocation and maps, the byte and string helpers, SSE, the dialects, the
// markdown parser, render, a11y, the widget's Session, the protocol's
// frame encoder and inbox): the compiler's
// inlining stays on for them. Everything else (fmt, regexp, time, net/url,
// reflect, goldmark's extensions and renderer, the wasm glue...) runs
// rarely, and without inlining the widget is smaller brotli
// (docs/notes/widget-size.md).
var HotPackages = []string{
	"runtime", "internal/runtime/...", "strings", "bytes", "unicode/utf8",
	"github.com/trickle-dev/trickle/sse", "github.com/trickle-dev/trickle/stream",
	"github.com/trickle-dev/trickle/render", "github.com/trickle-dev/trickle/a11y",
	"github.com/trickle-dev/trickle/internal/jsonx", "github.com/trickle-dev/trickle/wasm/element", "github.com/trickle-dev/trickle/wasm/protocol",
	"github.com/yuin/goldmark/parser", "github.com/yuin/goldmark/text", "github.com/yuin/goldmark/util",
}

// Flags are go build's -gcflags: no inlining (-l) anywhere but in
// HotPackages (the last pattern a package matches wins).
func Flags() []string {
	flags := []string{"-gcflags=all=-l"}
	for _, p := range HotPackages {
		flags = append(flags, "-gcflags="+p+"=")
	}
	return flags
}
