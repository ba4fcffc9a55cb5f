//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// longThread is a stored thread of pairs questions and answers, each
// answer about 2.5 KB of markdown (a heading, paragraphs, a list, a code
// block) holding a word of its own (marker(i)), and each question too.
func longThread(pairs int) []map[string]any {
	var msgs []map[string]any
	for i := range pairs {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("Question %d, about %s?", i+1, marker(2*i))})
		var b strings.Builder
		fmt.Fprintf(&b, "## Part %d\n\nThis answer's own word is %s, said once.\n\n", i+1, marker(2*i+1))
		for b.Len() < 2300 {
			b.WriteString("A paragraph of an answer, long enough to wrap over several lines in the thread, with *some* emphasis and `code` in it.\n\n- one item\n- another item\n\n")
		}
		b.WriteString("```go\nfmt.Println(\"done\")\n```\n")
		msgs = append(msgs, map[string]any{"role": "assistant", "content": b.String(), "status": "complete"})
	}
	return msgs
}

// marker is turn i's word: "marker" and three letters, found nowhere else.
func marker(i int) string {
	return "marker" + string(rune('a'+i/676%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
}

// A 200-turn thread set at once (chat.messages, as a page restores a saved
// conversation) ends up whole: every turn on the page in the messages'
// order with its text, chat.messages read back exactly, and Chromium's
// accessibility tree holding every turn as an article named by its
// place, in order, described by its own text, each the feed's, the
// first ones included while the thread shows its end. Find in page, from the end, finds the
// first answer's word and selects it there; a selection from the first
// turn to the last holds every turn's word in order. Nothing is said while
// it is restored: no ariaNotify, no text in any live region.
func TestALongThreadRestoredIsWholeInOrderFindableAndSilent(t *testing.T) {
	rr := startRecordingRelay(t)
	ctx := tabAt(t, rr.url)
	require.True(t, browsertest.Eval[bool](t, ctx, newChat))
	msgs := longThread(100)
	stored, err := json.Marshal(msgs)
	require.NoError(t, err)

	// Everything said from here on: ariaNotify calls (taken by each answer
	// when it is made) and text put in a live region.
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => {
		window.said = [];
		for (const o of [Element.prototype, Document.prototype]) {
			const f = o.ariaNotify;
			if (typeof f === "function") o.ariaNotify = function (text, ...rest) { window.said.push("ariaNotify: " + text); return f.call(this, text, ...rest); };
		}
		const live = '[aria-live], [role=log], [role=status], [role=alert], [data-trickle="announcer"], [data-trickle="sr-status"]';
		new MutationObserver((records) => {
			for (const r of records) {
				const n = r.target.nodeType === 1 ? r.target : r.target.parentElement;
				if (n?.closest(live) && n.textContent.trim() !== "") window.said.push("live region: " + n.textContent);
			}
		}).observe(document.getElementById("chat"), { childList: true, characterData: true, subtree: true });
		document.getElementById("chat").messages = JSON.parse(`+browsertest.JSString(string(stored))+`);
		return true;
	})()`))
	// Restored: every turn there, every answer showing its message.
	browsertest.WaitFor(t, ctx, 120*time.Second, `(() => {
		const c = document.getElementById("chat");
		return c.querySelectorAll('[data-trickle-chat="turn"]').length === `+fmt.Sprint(len(msgs))+` &&
			[...c.querySelectorAll("trickle-answer")].every((a) => a.status === "complete" && a.querySelector('[data-trickle="content"] pre'));
	})()`)

	type turn struct {
		Role string `json:"role"`
		Text string `json:"text"`
	}
	turns := browsertest.Eval[[]turn](t, ctx, `[...document.querySelectorAll('#chat [data-trickle-chat="turn"]')].map((t) => ({
		role: t.dataset.role, text: t.querySelector("trickle-answer")?.text ?? t.querySelector('[data-trickle-chat="text"]').textContent }))`)
	require.Len(t, turns, len(msgs))
	for i, m := range msgs {
		require.Equal(t, turn{m["role"].(string), m["content"].(string)}, turns[i], "turn %d", i+1)
	}
	require.JSONEq(t, string(stored), browsertest.Eval[string](t, ctx, `JSON.stringify(document.getElementById("chat").messages)`), "chat.messages reads back what was set")
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => { const b = document.querySelector('#chat [data-trickle-chat="thread"]'); return b.scrollHeight - b.scrollTop - b.clientHeight <= 8; })()`),
		"the thread shows its end")
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => { const f = document.querySelector('#chat [data-trickle-chat="turn"]').getBoundingClientRect(); return f.bottom < 0; })()`),
		"the first turn is far out of view")
	require.Empty(t, browsertest.Eval[[]string](t, ctx, `window.said`), "nothing was said")

	// The accessibility tree: each turn an article, named by its place, in
	// order, its description holding its own word.
	_, err = chromedp.Call(ctx, accessibility.Enable, cdp.Empty{})
	require.NoError(t, err)
	tree, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	require.NoError(t, err)
	str := func(v *accessibility.Value) string {
		var s string
		if v != nil && len(v.Value) > 0 {
			_ = json.Unmarshal(v.Value, &s)
		}
		return s
	}
	// Each article's nearest ancestor of any meaning is the feed (the
	// blocks older turns come in are not).
	byID := map[accessibility.NodeID]*accessibility.Node{}
	for _, n := range tree.Nodes {
		byID[n.NodeID] = n
	}
	owner := func(n *accessibility.Node) string {
		for p := byID[n.ParentID]; p != nil; p = byID[p.ParentID] {
			if r := str(p.Role); !p.Ignored && r != "generic" && r != "none" {
				return r
			}
		}
		return ""
	}
	type article struct{ name, description, owner string }
	var got []article
	for _, n := range tree.Nodes {
		if n.Ignored || str(n.Role) != "article" {
			continue
		}
		got = append(got, article{str(n.Name), str(n.Description), owner(n)})
	}
	require.Len(t, got, len(msgs), "every turn is an article in the accessibility tree")
	for i, a := range got {
		who := "You said"
		if i%2 == 1 {
			who = "The assistant said"
		}
		require.Equal(t, fmt.Sprintf("%s, %d of %d", who, i+1, len(msgs)), a.name)
		require.Contains(t, a.description, marker(i), "turn %d is described by its own text", i+1)
		require.Equal(t, "feed", a.owner, "turn %d is the feed's", i+1)
	}

	// Find in page, from the end: the first answer's word.
	word := marker(1)
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => { const s = document.getSelection(); s.removeAllRanges(); return window.find(`+browsertest.JSString(word)+`, true, true, true); })()`), "find in page finds %q", word)
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => { const s = document.getSelection(); return s.toString() === `+browsertest.JSString(word)+` && document.querySelectorAll('#chat trickle-answer')[0].contains(s.anchorNode); })()`),
		"the word found is selected in the first answer")

	// A selection from the first turn's text to the last's.
	selected := browsertest.Eval[string](t, ctx, `(() => {
		const ts = document.querySelectorAll('#chat [data-trickle-chat="text"], #chat trickle-answer [data-trickle="content"]');
		const w = (root) => document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
		const first = w(ts[0]).nextNode();
		const lw = w(ts[ts.length - 1]);
		let last = null;
		for (let n = lw.nextNode(); n; n = lw.nextNode()) last = n;
		document.getSelection().setBaseAndExtent(first, 0, last, last.data.length);
		return document.getSelection().toString();
	})()`)
	at := 0
	for i := range msgs {
		k := strings.Index(selected[at:], marker(i))
		require.GreaterOrEqual(t, k, 0, "the selection holds turn %d's word, after the ones before", i+1)
		at += k
	}
}
