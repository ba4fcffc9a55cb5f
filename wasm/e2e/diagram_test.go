//go:build !(js && wasm)

package e2e_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/browsertest"
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
