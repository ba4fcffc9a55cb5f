//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// fenceCode is an open code fence's code: lines with characters HTML
// escapes, so that a cut may fall inside what the HTML writes as an
// entity.
func fenceCode(lines int) string {
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "const v%d = f(%d) < %d && g(\"é\") > 0; // %d\n", i, i, i*7, i)
	}
	return b.String()
}

// An open code fence whose lines arrive cut (7 characters a token, so most
// frames end inside a line, which goldmark draws with a line break until
// the next token continues it) grows in place in Chromium: from the frame
// it appears in until it settles, the code keeps one text node, the same
// node, changed only by character data (no node added or taken away under
// the <code>), so the browser never parses it again. A selection made in
// the code's first line while the fence grows still selects the same text
// 1 s later and after the answer's end, and the code shown is the fence's
// exactly. (About 2.4 s of stream: 393 tokens 6 ms apart.)
func TestAnOpenCodeFenceGoesOnInPlace(t *testing.T) {
	ctx := tab(t)
	code := fenceCode(60)
	text := "The code:\n\n```js\n" + code + "```\n\nThat is all.\n"
	raw := browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
		const tail = () => a.querySelector('[data-trickle="tail"]');
		const liveCode = () => tail()?.querySelector("pre > code");
		a.setAttribute("endpoint", `+browsertest.JSString(textEndpoint(text, 7, 6))+`);
		const done = a.ask("fence");
		const deadline = performance.now() + 20000;
		// The fence alone in the tail (the paragraph before it has settled:
		// the tail lost its first block, and was written anew once), its
		// first line whole (a line break before the node's last character).
		const firstLine = () => {
			const t = liveCode()?.firstChild;
			if (t?.nodeType !== 3) return false;
			const nl = t.data.indexOf("\n");
			return nl >= 0 && nl < t.data.length - 1;
		};
		while (!(tail()?.firstElementChild?.tagName === "PRE" && firstLine())) {
			if (performance.now() > deadline) throw new Error("no open fence alone in the tail within 20 s");
			await sleep(2);
		}
		const el = liveCode();
		const node = el.firstChild;
		const out = { frames: 0, shrank: 0, childList: 0, characterData: 0, oneNode: true, sameNode: true };
		new MutationObserver((records) => {
			for (const r of records) {
				if (r.type === "childList") out.childList++;
				if (r.type === "characterData") out.characterData++;
			}
		}).observe(el, { childList: true, characterData: true, subtree: true });
		// The selection: characters 6 to 20 of the first line.
		document.getSelection().setBaseAndExtent(node, 6, node, 20);
		out.want = document.getSelection().toString();
		let last = node.data;
		let selAt1s = null;
		const t0 = performance.now();
		while (el.isConnected && tail()?.contains(el)) {
			await new Promise((r) => requestAnimationFrame(r));
			if (!el.isConnected || !tail()?.contains(el)) break;
			if (el.childNodes.length !== 1) out.oneNode = false;
			if (el.firstChild !== node) out.sameNode = false;
			if (node.data !== last) {
				out.frames++;
				if (node.data.length < last.length) out.shrank++;
				last = node.data;
			}
			if (selAt1s === null && performance.now() - t0 >= 1000) selAt1s = document.getSelection().toString();
		}
		out.selAt1s = selAt1s;
		out.status = await done;
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		out.selAtEnd = document.getSelection().toString();
		const pres = a.querySelectorAll('[data-trickle="content"] pre > code');
		out.shown = pres.length === 1 ? pres[0].textContent : "codes: " + pres.length;
		return JSON.stringify(out);
	})()`)
	var r struct {
		Frames, Shrank, ChildList, CharacterData int
		OneNode, SameNode                        bool
		Want, SelAt1s, SelAtEnd, Status, Shown   string
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &r))
	t.Logf("%d frames changed the code, %d shrank it (a trim longer than the text after it), %d character data changes", r.Frames, r.Shrank, r.CharacterData)
	require.Equal(t, "complete", r.Status)
	require.Equal(t, code, r.Shown, "the code shown is the fence's")
	require.True(t, r.SameNode, "the growing code is the same text node in every frame")
	require.True(t, r.OneNode, "the growing code is one text node in every frame")
	require.Zero(t, r.ChildList, "no node was added to or taken from the code while it grew")
	require.GreaterOrEqual(t, r.Frames, 10, "the fence grew over many frames")
	require.Positive(t, r.CharacterData)
	require.Len(t, r.Want, 14)
	require.Equal(t, r.Want, r.SelAt1s, "the selection in the code 1 s later")
	require.Equal(t, r.Want, r.SelAtEnd, "the selection in the code after the end")
}
