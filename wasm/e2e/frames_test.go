//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

// recordFrames makes the page snapshot the answer after every change (a
// MutationObserver on the content: its callback runs right after the
// widget's frame, before anything else can reach the element): the text so
// far and the DOM as a tree of nodes, the live tail's nodes in place of the
// tail element.
const recordFrames = `(() => {
	const a = document.getElementById("a");
	const content = a.querySelector('[data-trickle="content"]');
	window.__frames = [];
	const enc = (n) => n.nodeType === Node.TEXT_NODE ? "#text " + n.data
		: n.nodeType === Node.COMMENT_NODE ? "#comment " + n.data
		: [n.localName, [...n.attributes].map((at) => at.name + "=" + at.value).join(" "), ...[...n.childNodes].map(enc)];
	window.__encode = (nodes) => {
		const out = [];
		for (const n of nodes) {
			// Toolbars beside settled code blocks and tables are the
			// page's, not the answer's (reading_blocks_test.go).
			if (n.nodeType === 1 && (n.dataset.trickle === "code-toolbar" || n.dataset.trickle === "table-toolbar")) continue;
			const e = enc(n);
			// The tail element's first node follows the settled part's
			// last: two text nodes there are one in a one-shot parse.
			if (typeof e === "string" && typeof out[out.length - 1] === "string" && e.startsWith("#text ") && out[out.length - 1].startsWith("#text ")) {
				out[out.length - 1] += e.slice(6);
				continue;
			}
			out.push(e);
		}
		return JSON.stringify(out);
	};
	if (window.__frameObserver) window.__frameObserver.disconnect();
	window.__frameObserver = new MutationObserver(() => {
		const nodes = [...content.childNodes].flatMap((n) => n.dataset?.trickle === "tail" || n.dataset?.trickle === "settled" ? [...n.childNodes] : [n]);
		window.__frames.push({ text: a.text, dom: window.__encode(nodes) });
	});
	window.__frameObserver.observe(content, { childList: true, subtree: true, characterData: true });
	return true;
})()`

func TestEveryFrameShowsTheOneShotRenderOfTheTextSoFar(t *testing.T) {
	ctx := tab(t)
	require.True(t, browsertest.Eval[bool](t, ctx, recordFrames))
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&gap_ms=1"}, "frames")
	require.Equal(t, "complete", r.Status)

	texts := browsertest.Eval[[]string](t, ctx, `window.__frames.map((f) => f.text)`)
	require.Greater(t, len(texts), 20, "the answer took many frames")
	wants := make([]string, len(texts))
	for i, text := range texts {
		wants[i] = convert(t, text, element.RenderOptions(render.Policy{SameOrigin: server(t)})...)
	}
	// The browser parses each one-shot render and compares it, node for
	// node, with what the widget's patches left on screen.
	type mismatch struct {
		Frame int    `json:"frame"`
		Got   string `json:"got"`
		Want  string `json:"want"`
	}
	bad := browsertest.Eval[[]mismatch](t, ctx, `(() => {
		const wants = `+browsertest.JSString(toJSON(t, wants))+`;
		const bad = [];
		JSON.parse(wants).forEach((html, i) => {
			const tpl = document.createElement("template");
			tpl.innerHTML = html;
			const want = window.__encode(tpl.content.childNodes);
			const got = window.__frames[i].dom;
			if (got !== want && bad.length < 3) bad.push({ frame: i, got, want });
		});
		return bad;
	})()`)
	for _, m := range bad {
		t.Errorf("frame %d of %d:\n got %s\nwant %s", m.Frame, len(texts), m.Got, m.Want)
	}
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
