//go:build !(js && wasm)

package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

const diagramAnswer = "A flow:\n\n```mermaid\ngraph TD\n  A[Ask] --> B{Cached?}\n  B -->|yes| C[Answer]\n```\n\n" +
	"Some Go:\n\n```go\nfunc main() {}\n```\n\nA broken one:\n\n```mermaid\ngraph ???\n```\n\nDone.\n"

func TestAMermaidBlockGoesThroughThePagesDiagramHookOnceWhenItSettles(t *testing.T) {
	ctx := tab(t)
	browsertest.Eval[bool](t, ctx, `(() => {
		const a = document.getElementById("a");
		window.__calls = []; window.__pwned = 0; window.__errors = [];
		const err = console.error; console.error = (...args) => { window.__errors.push(args.map(String).join(" ")); err(...args); };
		// A mermaid-like renderer: asynchronous, SVG as a string, with a
		// script and a handler the sanitizer must drop; "???" is a syntax
		// error.
		a.diagram = async (lang, source) => {
			window.__calls.push([lang, source, a.status]);
			await new Promise((r) => setTimeout(r, 5));
			if (source.includes("???")) throw new Error("Parse error on line 1");
			const esc = source.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
			return '<svg viewBox="0 0 100 40" onload="window.__pwned++"><script>window.__pwned++</script><g class="node"><rect width="100" height="40"/><text x="4" y="20">' + esc + '</text></g></svg>';
		};
		return true;
	})()`)
	r := ask(t, ctx, map[string]string{"endpoint": textEndpoint(diagramAnswer, 3, 2)}, "diagram")
	require.Equal(t, "complete", r.Status)
	got := browsertest.Eval[map[string]any](t, ctx, `(async () => {
		const c = document.querySelector('#a [data-trickle="content"]');
		// The broken block's rejection arrives a few ms after the end.
		for (let i = 0; i < 100 && window.__errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
		const pres = [...c.querySelectorAll("pre")];
		return { calls: window.__calls, diagrams: c.querySelectorAll('[data-trickle="diagram"] > svg').length,
			text: c.querySelector('[data-trickle="diagram"] text')?.textContent ?? "",
			hidden: pres.map((p) => p.hidden), scripts: c.querySelectorAll("script").length,
			pwned: window.__pwned, errors: window.__errors };
	})()`)
	calls := got["calls"].([]any)
	require.Len(t, calls, 2, "called once per mermaid block, never for the Go block")
	require.Equal(t, []any{"mermaid", "graph TD\n  A[Ask] --> B{Cached?}\n  B -->|yes| C[Answer]\n", "streaming"}, calls[0],
		"the first block is drawn when it settles, while the answer still streams")
	require.EqualValues(t, 1, got["diagrams"])
	require.Contains(t, got["text"], "A[Ask] --> B{Cached?}")
	require.Equal(t, []any{true, false, false}, got["hidden"], "the drawn block is hidden; the Go block and the broken one stay code")
	require.EqualValues(t, 0, got["scripts"])
	require.EqualValues(t, 0, got["pwned"])
	require.Len(t, got["errors"], 1)
	require.Contains(t, got["errors"].([]any)[0], "diagram renderer failed on a mermaid block")
}

// A diagram derived from model output (a prompt injection's) can neither
// fetch from another origin (image-set in a style, a cursor), nor cover
// the page (position: fixed), nor clobber a page's global by its id.
func TestAHostileDiagramCanNeitherFetchNorCoverThePageNorClobberAGlobal(t *testing.T) {
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
	}))
	t.Cleanup(other.Close)
	ctx := tab(t)
	browsertest.Eval[bool](t, ctx, `(() => {
		const a = document.getElementById("a");
		const out = `+browsertest.JSString(other.URL)+`;
		window.appSettings = { safe: true };
		a.diagram = () => '<svg id="appSettings" viewBox="0 0 100 40" style="position: fixed; inset: 0; width: 100vw; height: 100vh; z-index: 99999">' +
			'<rect id="getElementById" width="100" height="40" style="cursor: image-set(url(' + out + '/cursor.png) 1x), auto; fill: -webkit-image-set(url(' + out + '/fill.png) 1x)"/>' +
			'<text x="4" y="20" style="position: fixed; top: 0">Click here</text></svg>';
		return true;
	})()`)
	r := ask(t, ctx, map[string]string{"endpoint": textEndpoint("A flow:\n\n```mermaid\ngraph TD\n  A --> B\n```\n\nDone.\n", 8, 2)}, "diagram")
	require.Equal(t, "complete", r.Status)
	// Hover the drawing, so a cursor image would be fetched.
	box := browsertest.Eval[map[string]float64](t, ctx, `(async () => {
		for (let i = 0; i < 100 && !document.querySelector('#a [data-trickle="diagram"] svg'); i++) await new Promise((r) => setTimeout(r, 20));
		const b = document.querySelector('#a [data-trickle="diagram"] rect').getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
	})()`)
	_, err := chromedp.Call(ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: box["x"], Y: box["y"]})
	require.NoError(t, err)
	got := browsertest.Eval[map[string]any](t, ctx, `(async () => {
		// Two frames after the hover, for the cursor and the fills to load if they could.
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		await fetch(location.href, { cache: "no-store" }); // a round trip the page's requests went before
		const fig = document.querySelector('#a [data-trickle="diagram"]').getBoundingClientRect();
		const svg = document.querySelector('#a [data-trickle="diagram"] svg').getBoundingClientRect();
		return { global: JSON.stringify(window.appSettings), byId: document.getElementById("appSettings") === null,
			inside: svg.top >= fig.top - 1 && svg.bottom <= fig.bottom + 1 && svg.left >= fig.left - 1 && svg.right <= fig.right + 1,
			covers: svg.left <= 0 && svg.top <= 0 && svg.right >= innerWidth && svg.bottom >= innerHeight, cursor: getComputedStyle(document.querySelector('#a [data-trickle="diagram"] rect')).cursor };
	})()`)
	require.Equal(t, `{"safe":true}`, got["global"], "the page's global is its own")
	require.Equal(t, true, got["byId"], "getElementById finds none of the diagram's ids")
	require.Equal(t, true, got["inside"], "the drawing stays inside its box")
	require.Equal(t, false, got["covers"], "the diagram does not cover the page")
	require.NotContains(t, got["cursor"], "image-set")
	require.Zero(t, hits.Load(), "nothing was fetched from the other origin")
}
