//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// press sends real key presses to the focused element.
func press(t *testing.T, ctx context.Context, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, err := chromedp.Run(ctx, chromedp.KeyEvent(k))
		require.NoError(t, err)
	}
}

// shiftTab is Shift+Tab, pressed.
func shiftTab(t *testing.T, ctx context.Context) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	require.NoError(t, err)
}

// focusedAX is what Chromium's accessibility tree says of the focused
// element: its role, name and description, computed by the browser.
func focusedAX(t *testing.T, ctx context.Context) (role, name, description string) {
	t.Helper()
	browsertest.Eval[bool](t, ctx, `(() => { document.querySelector("[data-ax-probe]")?.removeAttribute("data-ax-probe"); document.activeElement.setAttribute("data-ax-probe", ""); return true; })()`)
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("[data-ax-probe]")))
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	id := nodes[0].BackendNodeID
	fetch := false
	ax, err := chromedp.Call(ctx, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{BackendNodeID: id, FetchRelatives: &fetch})
	require.NoError(t, err)
	str := func(v *accessibility.Value) string {
		var s string
		if v != nil && len(v.Value) > 0 {
			require.NoError(t, json.Unmarshal(v.Value, &s))
		}
		return s
	}
	for _, n := range ax.Nodes {
		if n.BackendDOMNodeID == id {
			return str(n.Role), str(n.Name), str(n.Description)
		}
	}
	t.Fatal("the focused element is not in the accessibility tree")
	return
}

// The thread walked with real key presses in Chromium, on a six-turn
// conversation with the simulated model: Shift+Tab from the composer
// reaches the newest turn through its actions only (the thread is one
// stop), the arrows, Page Up and Page Down, Home and End move between
// turns (Ctrl+End leaves for the composer, Ctrl+Home for the control
// before the chat), and each turn the
// browser exposes is an article named by speaker and place and described
// by its text; Escape and Enter go back to the composer; from a focused
// turn Tab reaches its actions, and Enter on them copies the answer's
// markdown and regenerates.
func TestTheThreadIsWalkedByKeyboard(t *testing.T) {
	rr := startRecordingRelay(t)
	ctx := tabAt(t, rr.url)
	require.True(t, browsertest.Eval[bool](t, ctx, newChat))
	for _, q := range []string{"hello", "Compare Go and Rust", "thanks"} {
		browsertest.Eval[bool](t, ctx, `(async () => { await document.getElementById("chat").send(`+browsertest.JSString(q)+`); return true; })()`)
	}
	require.Len(t, rr.requests(), 3)
	active := `(() => { const e = document.activeElement; return e.dataset.trickleChat === "turn" ? "turn:" + e.getAttribute("aria-label") : (e.dataset.trickleChat ?? e.dataset.trickle ?? e.tagName); })()`
	where := func() string { return browsertest.Eval[string](t, ctx, active) }

	_, err := chromedp.Run(ctx, chromedp.Focus(`#chat textarea`))
	require.NoError(t, err)
	var passed []string
	inLast := `[...document.querySelectorAll('#chat [data-trickle-chat="turn"]')].at(-1).contains(document.activeElement)`
	for range 8 {
		shiftTab(t, ctx)
		if w := where(); strings.HasPrefix(w, "turn:") {
			break
		} else {
			require.True(t, browsertest.Eval[bool](t, ctx, inLast), "%s is the newest turn's: the thread is one stop", w)
			passed = append(passed, w)
		}
	}
	require.Equal(t, "turn:The assistant said, 6 of 6", where(), "Shift+Tab from the composer reaches the newest turn")
	require.Equal(t, []string{"regenerate", "copy-answer"}, passed[:2], "through its own actions (then the answer's own controls: a code block's Copy)")

	// An answer's text, and what its toolbars add to it (a code block's
	// language and its Copy button's name), all without white space.
	type said struct {
		Text     string   `json:"text"`
		Toolbars []string `json:"toolbars"`
	}
	answers := browsertest.Eval[[]said](t, ctx, `[...document.querySelectorAll("#chat trickle-answer")].map((a) => {
		const c = a.querySelector('[data-trickle="content"]').cloneNode(true);
		const bars = [...c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')];
		const toolbars = bars.map((b) => [...b.children].map((e) => e.getAttribute("aria-label") ?? e.textContent).join(""));
		for (const b of bars) b.remove();
		const squash = (s) => s.replace(/\s+/g, "");
		return { text: squash(c.textContent), toolbars: toolbars.map(squash) };
	})`)
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
	user := func(s string) said { return said{Text: squash(s)} }
	want := []struct {
		key, name   string
		description said
	}{
		{kb.ArrowUp, "You said, 5 of 6", user("thanks")},
		{kb.ArrowUp, "The assistant said, 4 of 6", answers[1]},
		{kb.ArrowDown, "You said, 5 of 6", user("thanks")},
		{kb.Home, "You said, 1 of 6", user("hello")},
		{kb.ArrowUp, "You said, 1 of 6", user("hello")},
		{kb.ArrowDown, "The assistant said, 2 of 6", answers[0]},
		{kb.End, "The assistant said, 6 of 6", answers[2]},
		// The feed pattern's keys, which screen readers in browse mode
		// leave to the page: the same walk.
		{kb.PageUp, "You said, 5 of 6", user("thanks")},
		{kb.PageUp, "The assistant said, 4 of 6", answers[1]},
		{kb.PageDown, "You said, 5 of 6", user("thanks")},
		{kb.PageDown, "The assistant said, 6 of 6", answers[2]},
		{kb.PageDown, "The assistant said, 6 of 6", answers[2]},
	}
	for _, w := range want {
		press(t, ctx, w.key)
		role, name, description := focusedAX(t, ctx)
		require.Equal(t, "article", role)
		require.Equal(t, w.name, name, "after %q", w.key)
		got := squash(description)
		for _, tb := range w.description.Toolbars {
			require.Contains(t, got, tb)
			got = strings.Replace(got, tb, "", 1)
		}
		require.Equal(t, w.description.Text, got, "%s is described by its text alone (its toolbars aside): no thinking, no status, no announcer", w.name)
	}
	// Ctrl+End leaves the feed for what follows it: the composer.
	_, err = chromedp.Run(ctx, chromedp.KeyEvent(kb.End, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	require.NoError(t, err)
	require.Equal(t, "input", where(), "Ctrl+End: out of the feed, to the composer")
	for range len(passed) + 1 {
		shiftTab(t, ctx)
	}
	require.Equal(t, "turn:The assistant said, 6 of 6", where())
	// Ctrl+Home leaves it for the page's last control before it.
	browsertest.Eval[bool](t, ctx, `(() => { const b = document.createElement("button"); b.id = "before-chat"; b.textContent = "before"; document.getElementById("chat").before(b); return true; })()`)
	_, err = chromedp.Run(ctx, chromedp.KeyEvent(kb.Home, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	require.NoError(t, err)
	require.Equal(t, "before-chat", browsertest.Eval[string](t, ctx, `document.activeElement.id`), "Ctrl+Home: out of the feed, to the control before it")
	browsertest.Eval[bool](t, ctx, `(() => { document.getElementById("before-chat").remove(); return true; })()`)
	_, err = chromedp.Run(ctx, chromedp.Focus(`#chat textarea`))
	require.NoError(t, err)
	for range len(passed) + 1 {
		shiftTab(t, ctx)
	}
	require.Equal(t, "turn:The assistant said, 6 of 6", where())
	press(t, ctx, kb.Escape)
	require.Equal(t, "input", where(), "Escape: back to the composer")
	for range len(passed) + 1 {
		shiftTab(t, ctx)
	}
	require.Equal(t, "turn:The assistant said, 6 of 6", where())
	press(t, ctx, kb.Home, kb.Enter)
	require.Equal(t, "input", where(), "Enter on a turn: back to the composer")
	shiftTab(t, ctx)
	require.Equal(t, "turn:You said, 1 of 6", where(), "the stop stays where the reader left it; the first question has no action of its own")

	// From a focused answer, Tab reaches its actions; Enter presses them.
	browsertest.Eval[bool](t, ctx, `(() => { window.copied = []; navigator.clipboard.writeText = async (t) => { window.copied.push(t); }; return true; })()`)
	press(t, ctx, kb.ArrowDown)
	second := `document.querySelectorAll('#chat [data-trickle-chat="turn"]')[1].contains(document.activeElement)`
	for range 4 {
		press(t, ctx, kb.Tab)
		require.True(t, browsertest.Eval[bool](t, ctx, second), "Tab from a turn goes through its own controls")
		if where() == "copy-answer" {
			break
		}
	}
	require.Equal(t, "copy-answer", where())
	press(t, ctx, kb.Enter)
	browsertest.WaitFor(t, ctx, 5*time.Second, `window.copied.length === 1`)
	require.Equal(t, browsertest.Eval[map[string]any](t, ctx, `document.getElementById("chat").messages[1]`)["content"], browsertest.Eval[string](t, ctx, `window.copied[0]`), "the answer's markdown")
	press(t, ctx, kb.End)
	for range 4 {
		press(t, ctx, kb.Tab)
		require.True(t, browsertest.Eval[bool](t, ctx, inLast), "Tab from a turn goes through its own controls")
		if where() == "regenerate" {
			break
		}
	}
	require.Equal(t, "regenerate", where())
	press(t, ctx, kb.Enter)
	browsertest.WaitFor(t, ctx, 20*time.Second, `!document.getElementById("chat").busy && document.getElementById("chat").messages.length === 6`)
	require.Len(t, rr.requests(), 4, "Regenerate asked again")
}

// tabWithScript is tab with script run in the page before any of its own
// (page.AddScriptToEvaluateOnNewDocument).
func tabWithScript(t *testing.T, script string) context.Context {
	t.Helper()
	ctx := browserTab(t)
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(server(t)+"/e2e")))
	widgetReady(t, ctx, browsertest.JSString("/trickle/trickle.js"))
	return ctx
}

// An answer is heard through ariaNotify where Chromium has it, through its
// live regions where it has not (forced by taking ariaNotify away before
// the page runs): either way what is said is the answer's units once each,
// in order, the start status first and the end status last, and only one
// of the two ways speaks.
func TestAnAnswerIsHeardThroughAriaNotifyOrTheLiveRegions(t *testing.T) {
	// Records every ariaNotify call, and still makes it.
	const record = `(() => {
		window.__notified = [];
		for (const proto of [Element.prototype, Document.prototype]) {
			const own = proto.ariaNotify;
			if (typeof own !== "function") continue;
			proto.ariaNotify = function (text, options) { window.__notified.push(text); return own.call(this, text, options); };
		}
	})();`
	const takeAway = `delete Element.prototype.ariaNotify; delete Document.prototype.ariaNotify; window.__notified = [];`
	for _, tc := range []struct {
		name, script string
		native       bool
	}{
		{"ariaNotify where the browser has it", record, true},
		{"the live regions, ariaNotify taken away", takeAway, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tabWithScript(t, tc.script)
			has := browsertest.Eval[bool](t, ctx, `typeof document.getElementById("a").ariaNotify === "function" || typeof document.ariaNotify === "function"`)
			if tc.native && !has {
				t.Skip("this Chromium has no ariaNotify: only the live regions can be tested")
			}
			require.Equal(t, tc.native, has)
			r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short&token_chars=3"}, "hi")
			require.Equal(t, "complete", r.Status)
			requireAnnounced(t, r)
			roles := browsertest.Eval[[]string](t, ctx, `(() => {
				const q = (p) => document.querySelector('#a [data-trickle="' + p + '"]');
				return [q("announcer").getAttribute("role") ?? "", q("announcer").getAttribute("aria-live") ?? "", q("sr-status").getAttribute("role") ?? ""];
			})()`)
			notified := browsertest.Eval[[]string](t, ctx, `window.__notified`)
			if !tc.native {
				require.Equal(t, []string{"log", "polite", "status"}, roles, "the live regions speak")
				require.Empty(t, notified)
				return
			}
			require.Equal(t, []string{"", "", ""}, roles, "no live region: ariaNotify speaks, nothing is heard twice")
			want := append(append([]string{a11y.StatusResponding}, r.Announced...), r.StatusText)
			require.Equal(t, want, notified, "the start status, each unit once and in order, the end status last")
		})
	}
}
