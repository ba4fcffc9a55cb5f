package examples_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// plainChatPage is a page with a <trickle-chat> and no CSS of its own.
const plainChatPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>A chat with no page CSS · Trickle</title>
<script type="module" src="/trickle/trickle.js"></script>
</head><body>
<trickle-chat id="chat" endpoint="/v1/chat/completions?gap_ms=1&amp;ttft_ms=5"></trickle-chat>
</body></html>`

// lookFacts is what the layout test reads of the chat, by computed style
// and bounding boxes.
const lookFacts = `(() => {
	const c = document.getElementById("chat");
	const box = (e) => e.getBoundingClientRect();
	const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
	const cb = box(c);
	// Everything of the chat lies inside it, but what scrolls inside a
	// box of its own (a code block, a table, the thread).
	const out = [];
	for (const e of c.querySelectorAll("*")) {
		if (!shown(e)) continue;
		let clipped = false;
		for (let p = e.parentElement; p && p !== c; p = p.parentElement) {
			if (getComputedStyle(p).overflowX !== "visible") { clipped = true; break; }
		}
		const b = box(e);
		if (!clipped && b.width > 0 && (b.right > cb.right + 1 || b.left < cb.left - 1)) out.push((e.dataset.trickleChat || e.dataset.trickle || e.tagName) + " " + Math.round(b.left) + ".." + Math.round(b.right));
	}
	const turns = box(c.querySelector('[data-trickle-chat="turns"]'));
	const bubbles = [...c.querySelectorAll('[data-trickle-chat="text"]')].map((e) => { const b = box(e); return { left: b.left - turns.left, right: turns.right - b.right, width: b.width }; });
	const answers = [...c.querySelectorAll("trickle-answer")].map((a) => box(a).width / turns.width);
	const actions = [...c.querySelectorAll('[data-trickle-chat="actions"] > button')].filter((b) => !b.hidden).map((b) => ({
		name: b.querySelector('[data-trickle-chat="action-label"]').textContent, width: box(b).width, height: box(b).height, opacity: getComputedStyle(b.parentElement).opacity }));
	// The status words the reader sees: the chat's line and every answer's
	// own line and notice that is on screen.
	const statuses = [...c.querySelectorAll('[data-trickle-chat="status"], trickle-answer [data-trickle="status"], trickle-answer [data-trickle="notice-text"]')]
		.filter((e) => shown(e) && e.textContent.trim() !== "").map((e) => e.textContent.trim());
	const cs = getComputedStyle(c);
	return {
		overflow: out, pageWidth: document.documentElement.scrollWidth, viewport: innerWidth,
		bubbles, answers, actions, statuses,
		background: cs.backgroundColor, color: cs.color,
		bubble: getComputedStyle(c.querySelector('[data-trickle-chat="text"]')).backgroundColor,
		send: getComputedStyle(c.querySelector('[data-trickle-chat="send"]')).backgroundColor,
	};
})()`

type lookFactsT struct {
	Overflow  []string `json:"overflow"`
	PageWidth float64  `json:"pageWidth"`
	Viewport  float64  `json:"viewport"`
	Bubbles   []struct {
		Left, Right, Width float64
	} `json:"bubbles"`
	Answers []float64 `json:"answers"`
	Actions []struct {
		Name          string
		Width, Height float64
		Opacity       string
	} `json:"actions"`
	Statuses   []string `json:"statuses"`
	Background string   `json:"background"`
	Color      string   `json:"color"`
	Bubble     string   `json:"bubble"`
	Send       string   `json:"send"`
}

// A chat on a page with no CSS of its own looks finished, at 390 and at
// 1280 px, light and dark, checked by computed style and bounding boxes:
// nothing runs off the chat (a tool call's JSON included), the reader's
// messages are bubbles at the end of the line and the answers full width,
// every action button has a name and a size to hit, one status line is
// shown (a stopped answer's notice alone, never beside "Answer
// stopped."), and while an answer streams Stop is in Send's place and the
// answer being written offers no action. With -screenshots DIR it saves
// each picture (docs/screenshots/chat-plain-*.png; make screenshots).
func TestTheChatWithNoPageCSSLooksFinished(t *testing.T) {
	for _, tc := range []struct {
		width             int64
		scheme            string
		background, color string
	}{
		{390, "light", "rgb(255, 255, 255)", "rgb(29, 31, 35)"},
		{1280, "light", "rgb(255, 255, 255)", "rgb(29, 31, 35)"},
		{390, "dark", "rgb(22, 24, 28)", "rgb(230, 231, 234)"},
		{1280, "dark", "rgb(22, 24, 28)", "rgb(230, 231, 234)"},
	} {
		t.Run(fmt.Sprintf("%d-%s", tc.width, tc.scheme), func(t *testing.T) {
			tab, base := startExamples(t)
			run(t, tab, 10*time.Second, chromedp.EmulateViewport(tc.width, 844))
			_, err := chromedp.Call(browsertest.Timeout(t, tab, 10*time.Second), emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: tc.scheme}},
			})
			require.NoError(t, err)
			run(t, tab, 20*time.Second, chromedp.Navigate(base+"/screens/chat"), chromedp.WaitReady(chromedp.CSS(`#chat textarea`)))

			// A tool round, then an answer stopped while it streams.
			browsertest.Eval[bool](t, tab, `(async () => {
				const c = document.getElementById("chat");
				c.tools = { get_weather: async ({ location }) => ({ location, temperature: 21, unit: "celsius", conditions: "light rain, clearing by evening" }) };
				await c.send("What's the weather in Lyon?");
				window.streaming = c.send("Write an essay about rivers");
				return true;
			})()`)
			browsertest.WaitFor(t, tab, 20*time.Second, `[...document.querySelectorAll("#chat trickle-answer")].at(-1).text.length > 80`)
			during := browsertest.Eval[map[string]any](t, tab, `(() => {
				const c = document.getElementById("chat");
				const q = (p) => c.querySelector('[data-trickle-chat="' + p + '"]');
				const last = [...c.querySelectorAll('[data-trickle-chat="turn"]')].at(-1);
				return {
					stop: q("stop").getClientRects().length > 0, send: q("send").getClientRects().length > 0,
					lastActions: [...last.querySelectorAll('[data-trickle-chat="actions"] > button')].filter((b) => b.getClientRects().length > 0).length,
					regenerate: [...c.querySelectorAll('[data-trickle-chat="regenerate"], [data-trickle-chat="edit"]')].filter((b) => b.getClientRects().length > 0).length,
					status: q("status").textContent,
				};
			})()`)
			require.Equal(t, map[string]any{"stop": true, "send": false, "lastActions": 0.0, "regenerate": 0.0, "status": "Assistant is responding."}, during,
				"while it streams: Stop in Send's place, no action on the answer being written, no Regenerate or Edit anywhere")
			browsertest.Eval[bool](t, tab, `(async () => { const c = document.getElementById("chat"); c.stop(); await window.streaming; return true; })()`)
			browsertest.WaitFor(t, tab, 10*time.Second, `!document.getElementById("chat").busy`)

			f := browsertest.Eval[lookFactsT](t, tab, lookFacts)
			require.Empty(t, f.Overflow, "nothing runs off the chat")
			require.LessOrEqual(t, f.PageWidth, f.Viewport, "the page does not scroll sideways")
			require.Len(t, f.Bubbles, 2)
			for _, b := range f.Bubbles {
				require.Less(t, b.Right, 8.0, "the reader's message sits at the end of the line")
				require.Greater(t, b.Left, 40.0, "as a bubble, not full width")
			}
			require.Len(t, f.Answers, 3, "the tool call, its answer, the stopped answer")
			for _, w := range f.Answers {
				require.Greater(t, w, 0.97, "an answer is full width")
			}
			require.NotEmpty(t, f.Actions)
			// Hidden until hover or focus where something hovers; always
			// shown where nothing does (a touch screen: (hover: none)).
			hidden := "0"
			if browsertest.Eval[bool](t, tab, `matchMedia("(hover: none)").matches`) {
				hidden = "1"
			}
			names := map[string]bool{}
			for _, a := range f.Actions {
				require.NotEmpty(t, a.Name, "every action has a name")
				require.GreaterOrEqual(t, a.Width, 24.0, "%s: a size to hit (WCAG 2.5.8)", a.Name)
				require.GreaterOrEqual(t, a.Height, 24.0, "%s: a size to hit (WCAG 2.5.8)", a.Name)
				require.Equal(t, hidden, a.Opacity, "%s: shown on hover and focus only, always on touch", a.Name)
				names[a.Name] = true
			}
			require.Equal(t, map[string]bool{"Copy answer": true, "Regenerate": true, "Edit": true}, names)
			require.Equal(t, []string{"Stopped."}, f.Statuses, "one status on screen: the stopped answer's notice, no \"Answer stopped.\", no \"Answer complete.\" under each answer")
			require.Equal(t, tc.background, f.Background)
			require.Equal(t, tc.color, f.Color)
			require.NotEqual(t, f.Background, f.Bubble, "the bubble stands out")

			// Focus on an answer shows its actions.
			browsertest.Eval[bool](t, tab, `(document.querySelectorAll('#chat [data-trickle-chat="turn"]')[1].focus(), true)`)
			require.Equal(t, "1", browsertest.Eval[string](t, tab, `getComputedStyle(document.querySelectorAll('#chat [data-trickle-chat="actions"]')[1]).opacity`))

			// The page's own colours and radii, on the element.
			browsertest.Eval[bool](t, tab, `(document.getElementById("chat").style.cssText = "--trickle-bubble-background: rgb(1, 2, 3); --trickle-bubble-radius: 3px; --trickle-accent: rgb(4, 5, 6)", true)`)
			themed := browsertest.Eval[[]string](t, tab, `(() => { const b = getComputedStyle(document.querySelector('#chat [data-trickle-chat="text"]'));
				return [b.backgroundColor, b.borderTopLeftRadius, getComputedStyle(document.querySelector('#chat [data-trickle-chat="send"]')).backgroundColor]; })()`)
			require.Equal(t, []string{"rgb(1, 2, 3)", "3px", "rgb(4, 5, 6)"}, themed, "--trickle-* properties set on the element restyle it")
			browsertest.Eval[bool](t, tab, `(document.getElementById("chat").style.cssText = "", document.activeElement.blur(), true)`)

			if *screenshots != "" {
				// The end of the thread, cropped to the element (the page
				// itself has no colours of its own).
				browsertest.Eval[bool](t, tab, `(document.querySelector('#chat [data-trickle-chat="thread"]').scrollTop = 1e9, true)`)
				png, err := chromedp.Run(browsertest.Timeout(t, tab, 20*time.Second), chromedp.Screenshot(chromedp.CSS("#chat")))
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(*screenshots, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(*screenshots, fmt.Sprintf("chat-plain-%d-%s.png", tc.width, tc.scheme)), png, 0o644))
			}
		})
	}
}
