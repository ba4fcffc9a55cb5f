//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// A long answer's settled blocks sit in groups (patch.js, GROUP_BLOCKS
// blocks each), and nothing a reader does notices: a selection from the
// first word to the last holds every heading between, in order, and
// copying it puts that text on the clipboard; find in page, from the
// answer's end, finds a word of the first group and selects it there; and
// a screen reader meets every heading, those scrolled far off included,
// in the answer's order. The last holds the groups to what they are:
// with content-visibility: auto, Chromium (156) leaves a skipped group out
// of the accessibility tree, and the test fails.
func TestSettledGroupsKeepSelectionCopyFindAndReadingOrder(t *testing.T) {
	ctx := tab(t)
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: server(t)})
		require.NoError(t, err, name)
	}
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&gap_ms=1"}, "groups")
	require.Equal(t, "complete", r.Status)
	groups := browsertest.Eval[int](t, ctx, `document.querySelectorAll('#a [data-trickle="content"] > [data-trickle="settled"]').length`)
	require.GreaterOrEqual(t, groups, 3, "a 20 KB answer settles into several groups")
	headings := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#a [data-trickle="settled"] :is(h1,h2,h3,h4)')].map((h) => h.textContent)`)
	require.GreaterOrEqual(t, len(headings), 3)
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => { const g = document.querySelector('#a [data-trickle="settled"]').getBoundingClientRect(); return g.bottom < 0 || g.top > innerHeight || g.bottom < document.getElementById("a").getBoundingClientRect().top; })()`),
		"the first group is out of view (the answer followed its end)")

	// A selection from the answer's first word to its last, across every
	// group.
	selected := browsertest.Eval[string](t, ctx, `(() => {
		const c = document.querySelector('#a [data-trickle="content"]');
		const w = document.createTreeWalker(c, NodeFilter.SHOW_TEXT, { acceptNode: (n) => n.parentElement.closest('[data-trickle$="toolbar"]') || !n.data.trim() ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT });
		const first = w.nextNode();
		let last = first;
		for (let n = first; n; n = w.nextNode()) last = n;
		document.getSelection().setBaseAndExtent(first, 0, last, last.data.length);
		return document.getSelection().toString();
	})()`)
	at := 0
	for _, h := range headings {
		i := strings.Index(selected[at:], h)
		require.GreaterOrEqual(t, i, 0, "the selection holds %q, after the headings before it", h)
		at += i + len(h)
	}
	// Ctrl+C, as a reader copies.
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		_, err := chromedp.Call(ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Modifiers: 2, Key: "c", Code: "KeyC", WindowsVirtualKeyCode: 67, Commands: []string{"copy"}})
		require.NoError(t, err)
	}
	require.Equal(t, selected, browsertest.Eval[string](t, ctx, `navigator.clipboard.readText()`), "the clipboard holds the selection")

	// Find in page, from the end: a word only the first group has.
	word := browsertest.Eval[string](t, ctx, `(() => {
		document.getSelection().removeAllRanges();
		const first = document.querySelector('#a [data-trickle="settled"]');
		const rest = document.body.textContent.replace(first.textContent, "");
		return first.textContent.split(/[^A-Za-z]+/).find((w) => w.length >= 7 && !rest.includes(w)) ?? "";
	})()`)
	require.NotEmpty(t, word, "the first group has a word of its own")
	require.True(t, browsertest.Eval[bool](t, ctx, `window.find(`+browsertest.JSString(word)+`, true, true, true)`), "find in page finds %q", word)
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => { const s = document.getSelection(); return s.toString() === `+browsertest.JSString(word)+` && document.querySelector('#a [data-trickle="settled"]').contains(s.anchorNode); })()`),
		"the word found is selected in the first group")

	// The accessibility tree, with the answer scrolled to its end again.
	browsertest.Eval[bool](t, ctx, `(() => { document.getSelection().removeAllRanges(); const a = document.getElementById("a"); a.scrollTop = a.scrollHeight; return true; })()`)
	_, err := chromedp.Call(ctx, accessibility.Enable, cdp.Empty{})
	require.NoError(t, err)
	tree, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	require.NoError(t, err)
	ours := map[string]bool{}
	for _, h := range headings {
		ours[h] = true
	}
	var ax []string
	for _, n := range tree.Nodes {
		if n.Ignored || n.Role == nil || n.Name == nil || string(n.Role.Value) != `"heading"` {
			continue
		}
		var name string
		require.NoError(t, json.Unmarshal([]byte(n.Name.Value), &name))
		if ours[name] {
			ax = append(ax, name)
		}
	}
	require.Equal(t, headings, ax, "a screen reader meets every heading, in order")
}

// announcerKeep is answer.js's ANNOUNCER_KEEP.
const announcerKeep = 32

// After a long answer the visually hidden announcer log holds at most
// announcerKeep nodes, and what it said (recordSaid: the nodes added) is
// still every unit of the answer once, in order.
func TestTheAnnouncerLogStaysBoundedThroughALongAnswer(t *testing.T) {
	ctx := tab(t)
	// Slow enough (25 s) that the announcer, which joins what it confirmed
	// while the last announcement was still being heard, says more than
	// the log keeps.
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&token_chars=4&gap_ms=5"}, "long")
	require.Equal(t, "complete", r.Status)
	require.Greater(t, len(r.Announced), announcerKeep, "the answer said more than the log keeps")
	requireAnnounced(t, r)
	t.Logf("%d announcements", len(r.Announced))
	n := browsertest.Eval[int](t, ctx, `document.querySelector('#a [data-trickle="announcer"]').childNodes.length`)
	require.Positive(t, n)
	require.LessOrEqual(t, n, announcerKeep, "the log is bounded")
}

// The settled groups are invisible to what a reader sees and points at:
// every element of a long answer has the same box with its blocks in
// groups as with the same blocks unwrapped into the content (the oracle:
// the answer as it would be without groups), margins collapsing through
// them alike, and a point over each block hits the same element. Each
// group is a stacking context of its own (trickle.css, for the paint
// layer it gets); this holds that nothing else came with it: no clip, no
// formatting context, no change of what lies on top.
func TestSettledGroupsChangeNoBoxAndNoHit(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&gap_ms=1"}, "groups")
	require.Equal(t, "complete", r.Status)
	require.Equal(t, "isolate", browsertest.Eval[string](t, ctx, `getComputedStyle(document.querySelector('#a [data-trickle="settled"]')).isolation`),
		"the groups are what the benchmark measured")
	const look = `(() => {
		const a = document.getElementById("a"), c = a.querySelector('[data-trickle="content"]');
		const boxes = [...c.querySelectorAll('*')].filter((e) => e.dataset.trickle !== "settled").map((e) => {
			const b = e.getBoundingClientRect();
			return e.tagName + " " + [b.top, b.left, b.width, b.height].map((v) => v.toFixed(2)).join(" ");
		});
		const view = a.getBoundingClientRect(), hits = [];
		// The blocks, as the grouped answer has them (kept for the ungrouped look).
		window.blocks ??= [...c.querySelectorAll(':scope > [data-trickle="settled"] > *, :scope > [data-trickle="tail"] > *')];
		for (const e of window.blocks) {
			const b = e.getBoundingClientRect();
			for (const y of [b.top + 4, (b.top + b.bottom) / 2]) {
				if (y <= view.top || y >= view.bottom) continue;
				const at = document.elementFromPoint(b.left + Math.min(20, b.width / 2), y);
				hits.push(at ? at.tagName + ":" + (at.textContent ?? "").slice(0, 24) : "none");
			}
		}
		return JSON.stringify({ boxes, hits, height: a.scrollHeight });
	})()`
	type seen struct {
		Boxes  []string
		Hits   []string
		Height float64
	}
	var grouped, flat seen
	for _, at := range []string{"0", "a.scrollHeight / 3", "a.scrollHeight * 2 / 3"} {
		require.NoError(t, json.Unmarshal([]byte(browsertest.Eval[string](t, ctx, `(() => { const a = document.getElementById("a"); a.scrollTop = `+at+`; window.blocks = undefined; return `+look+`; })()`)), &grouped))
		require.NotEmpty(t, grouped.Hits, "some block is in view at scrollTop = %s", at)
		require.NoError(t, json.Unmarshal([]byte(browsertest.Eval[string](t, ctx, `(() => {
			const groups = [...document.querySelectorAll('#a [data-trickle="content"] > [data-trickle="settled"]')].map((g) => [g, [...g.childNodes]]);
			for (const [g, kids] of groups) g.replaceWith(...kids);
			const flat = `+look+`;
			for (const [g, kids] of groups) { kids[0].before(g); g.append(...kids); }
			return flat;
		})()`)), &flat))
		require.Equal(t, grouped, flat, "at scrollTop = %s, the same boxes and hits with the blocks ungrouped", at)
	}
}
