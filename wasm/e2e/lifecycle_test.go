//go:build !(js && wasm)

package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// stats are the widget's own counts (trickle.js's stats()): the Go side's
// elements, live js.Funcs (every one is made and released through one
// counted pair) and goroutines, and the page's elements.
type stats struct {
	Elements     int      `json:"elements"`
	Funcs        int      `json:"funcs"`
	Goroutines   int      `json:"goroutines"`
	PageElements int      `json:"pageElements"`
	Thread       string   `json:"thread"`
	Builds       []string `json:"builds"` // the widget's builds the page runs: "default", "highlight"
}

const readStats = `(async () => { const { stats } = await import("/trickle/trickle.js"); return await stats(); })()`

// Removing an element releases everything it held, on both sides, even
// with its answer streaming: 1,000 elements come and go, 20 of them in the
// middle of an answer over SSE or WebSocket, and the counts return to what
// they were; every answer's ask() settles as stopped.
func TestAThousandElementsAddedAndRemovedLeaveNothingBehind(t *testing.T) {
	ctx := tab(t)
	base := browsertest.Eval[stats](t, ctx, readStats)
	require.Equal(t, thread, base.Thread)
	require.Equal(t, 1, base.Elements, "the test page's element")

	browsertest.Eval[bool](t, ctx, `(() => {
		const box = document.createElement("div");
		box.id = "box";
		document.body.append(box);
		window.__asks = [];
		for (let i = 0; i < 1000; i++) {
			const el = document.createElement("trickle-answer");
			box.append(el);
			if (i < 20) {
				el.setAttribute("endpoint", "/v1/chat/completions?answer=sample-100k&gap_ms=5");
				// 100 KB at a token per 5 ms lasts minutes: no answer can end
				// on its own before the box is removed, however slow the machine.
				el.setAttribute("announce", "sentences");
				// Four over SSE (Chrome opens at most six HTTP/1.1
				// connections to one origin), sixteen over WebSocket.
				if (i % 5) el.setAttribute("transport", "websocket");
				window.__asks.push(el.ask("go"));
			}
		}
		return true;
	})()`)
	var progress []string
	for deadline := time.Now().Add(20 * time.Second); ; {
		progress = browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("#box trickle-answer")].slice(0, 20).map((el) => el.status + " " + el.text.length)`)
		all := true
		for _, p := range progress {
			var status string
			var n int
			_, err := fmt.Sscan(p, &status, &n)
			require.NoError(t, err)
			all = all && n > 100
		}
		if all {
			break
		}
		require.True(t, time.Now().Before(deadline), "every answer should be streaming: %q", progress)
		time.Sleep(50 * time.Millisecond)
	}
	mid := browsertest.Eval[stats](t, ctx, readStats)
	require.Equal(t, base.Elements+1000, mid.Elements)
	require.Equal(t, base.PageElements+1000, mid.PageElements)
	require.GreaterOrEqual(t, mid.Funcs, base.Funcs+20, "each streaming answer's connection holds js.Funcs: the count sees them")

	settled := browsertest.Eval[[]string](t, ctx, `(async () => {
		document.getElementById("box").remove();
		return await Promise.all(window.__asks);
	})()`)
	require.Len(t, settled, 20)
	for _, s := range settled {
		require.Equal(t, "stopped", s, "a removed element's answer stops, and its call settles")
	}
	var after stats
	require.Eventually(t, func() bool {
		after = browsertest.Eval[stats](t, ctx, readStats)
		return after.Elements == base.Elements && after.PageElements == base.PageElements &&
			after.Funcs == base.Funcs && after.Goroutines == base.Goroutines
	}, 15*time.Second, 100*time.Millisecond, "back to the baseline %+v", base)
	t.Logf("baseline %+v, with 1,000 elements %+v, after %+v", base, mid, after)

	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short"}, "still here")
	require.Equal(t, "complete", r.Status, "the page's own element lives on")
}
