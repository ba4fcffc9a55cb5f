//go:build !(js && wasm)

package e2e_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// goMemory is the memory part of stats(): Go's heap in use, the bytes Go
// took from its WebAssembly memory, that memory's size and the collections.
type goMemory struct {
	HeapInuse  int64 `json:"heapInuse"`
	GoSys      int64 `json:"goSys"`
	WasmMemory int64 `json:"wasmMemory"`
	NumGC      int   `json:"numGC"`
}

// Go returns its heap when the page is idle: the widget collects no
// garbage while answers stream (element.GCPacer: no proportional pacing,
// a memory limit far above what a 20 KB answer allocates), and once the
// last answer has ended and the browser reports idle time it collects, so
// stats() shows one more collection after the answer and Go's heap in use
// back under the WebAssembly memory it grew (which never shrinks), for the
// next answer to reuse.
func TestGoCollectsItsHeapWhenThePageIsIdleAfterAnAnswer(t *testing.T) {
	ctx := tab(t)
	base := browsertest.Eval[goMemory](t, ctx, readStats)
	require.Positive(t, base.WasmMemory, "stats() reports the size of Go's WebAssembly memory")
	require.Positive(t, base.HeapInuse)

	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k"}, "go")
	require.Equal(t, "complete", r.Status)
	var idle goMemory
	require.Eventually(t, func() bool {
		idle = browsertest.Eval[goMemory](t, ctx, readStats)
		return idle.NumGC > base.NumGC
	}, 60*time.Second, 100*time.Millisecond, "a collection after the answer, at idle time (before: %+v)", base)
	require.GreaterOrEqual(t, idle.WasmMemory, base.WasmMemory, "WebAssembly memory never shrinks")
	require.Less(t, idle.HeapInuse, idle.WasmMemory)
	require.LessOrEqual(t, idle.GoSys, idle.WasmMemory, "Go's memory lies in its WebAssembly memory")
	t.Logf("before the answer %+v, after it at idle %+v", base, idle)
}

// A stored answer shown at once (el.markdown; a restored <trickle-chat>
// shows every turn so) renders as much as a streamed one, with no answer
// ending after it: Go collects at idle time after it too.
func TestGoCollectsItsHeapWhenThePageIsIdleAfterAStoredAnswerIsShown(t *testing.T) {
	ctx := tab(t)
	base := browsertest.Eval[goMemory](t, ctx, readStats)
	browsertest.Eval[bool](t, ctx, `(() => {
		const el = document.createElement("trickle-answer");
		let md = "";
		for (let i = 0; i < 300; i++) md += "## Part " + i + "\n\nSome *text* with \x60code\x60 and a [link](https://example.com/" + i + ").\n\n- one\n- two\n\n| a | b |\n| - | - |\n| " + i + " | x |\n\n";
		document.body.append(el);
		el.markdown = md;
		return true;
	})()`)
	var idle goMemory
	require.Eventually(t, func() bool {
		idle = browsertest.Eval[goMemory](t, ctx, readStats)
		return idle.NumGC > base.NumGC
	}, 60*time.Second, 100*time.Millisecond, "a collection after the shown answer, at idle time (before: %+v)", base)
	t.Logf("before %+v, after the shown answer at idle %+v", base, idle)
}
