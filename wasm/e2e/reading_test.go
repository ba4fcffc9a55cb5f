//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wasm/element"
)

// customText streams the "text" query parameter in the plain dialect,
// "chars" bytes per event (8 by default), "gap_ms" apart.
func customText(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	text := q.Get("text")
	chars, _ := strconv.Atoi(q.Get("chars"))
	if chars <= 0 {
		chars = 8
	}
	gap, _ := strconv.ParseFloat(q.Get("gap_ms"), 64)
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for i := 0; i < len(text); {
		// Cut on a character boundary, as a model's deltas are.
		j := min(len(text), i+chars)
		for j < len(text) && !utf8.RuneStart(text[j]) {
			j++
		}
		delta, _ := json.Marshal(map[string]string{"delta": text[i:j]})
		i = j
		w.Write(sse.AppendMessage(nil, sse.Message{Data: string(delta)}))
		f.Flush()
		if gap > 0 {
			select {
			case <-time.After(time.Duration(gap * float64(time.Millisecond))):
			case <-r.Context().Done():
				return
			}
		}
	}
	w.Write(sse.AppendMessage(nil, sse.Message{Data: "[DONE]"}))
}

func textEndpoint(text string, chars int, gapMS float64) string {
	return "/custom/text?" + url.Values{"text": {text}, "chars": {strconv.Itoa(chars)},
		"gap_ms": {strconv.FormatFloat(gapMS, 'f', -1, 64)}}.Encode()
}

func emulate(t testing.TB, ctx context.Context, features ...*emulation.MediaFeature) {
	t.Helper()
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
	require.NoError(t, err)
}

const rtlAnswer = "## نظرة عامة\n\nهذه إجابة باللغة العربية مع `code` وكلمة English في الوسط.\n\n" +
	"This paragraph is English, in the same answer.\n\n- פריט ראשון\n- פריט שני\n\n" +
	"| العمود | القيمة |\n| --- | --- |\n| أ | ١ |\n\n```go\nfmt.Println(\"مرحبا\")\n```\n\nשלום.\n"

func TestAnRTLAnswerReadsRightToLeftBlockByBlock(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": textEndpoint(rtlAnswer, 7, 0)}, "rtl")
	require.Equal(t, "complete", r.Status)
	require.Equal(t, rtlAnswer, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
	dirs := browsertest.Eval[map[string]string](t, ctx, `(() => {
		const c = document.querySelector('#a [data-trickle="content"]');
		const d = (sel) => getComputedStyle(c.querySelector(sel)).direction;
		return { h2: d("h2"), p1: d("p:nth-of-type(1)"), p2: d("p:nth-of-type(2)"), ul: d("ul"), li: d("li"),
			table: d("table"), pre: d("pre"), last: d("p:last-of-type"), page: getComputedStyle(c).direction };
	})()`)
	require.Equal(t, map[string]string{"h2": "rtl", "p1": "rtl", "p2": "ltr", "ul": "rtl", "li": "rtl",
		"table": "rtl", "pre": "ltr", "last": "rtl", "page": "ltr"}, dirs,
		"each block takes the direction of its own text; code reads left to right")
}

// caretAt reports which element of the content carries the caret (its
// ::after, a box of its own width), "" when none does.
const caretAt = `(() => {
	const c = document.querySelector('#a [data-trickle="content"]');
	for (const el of [c.querySelector('[data-trickle="tail"]'), ...c.querySelectorAll("*")]) {
		if (!el) continue;
		const s = getComputedStyle(el, "::after");
		if (s.content !== "none" && s.content !== "normal" && s.display !== "none" && s.width !== "auto") {
			return el.tagName.toLowerCase() + "|" + s.animationName + "|" + s.content;
		}
	}
	return "";
})()`

func TestTheCaretShowsAtTheEndOfTheLiveTailWhileStreamingAndNotAfter(t *testing.T) {
	for _, reduced := range []bool{false, true} {
		t.Run("reduced motion "+strconv.FormatBool(reduced), func(t *testing.T) {
			ctx := tab(t)
			if reduced {
				emulate(t, ctx, &emulation.MediaFeature{Name: "prefers-reduced-motion", Value: "reduce"})
			}
			text := "First paragraph, settled soon.\n\nA second paragraph that streams slowly, word by word, so the caret can be seen at its end.\n"
			browsertest.Eval[bool](t, ctx, `(() => { const a = document.getElementById("a");
				a.setAttribute("endpoint", `+browsertest.JSString(textEndpoint(text, 4, 40))+`); a.ask("caret"); return true; })()`)
			// Until the first words arrive the tail is empty and the caret
			// stands alone; then it follows the paragraph's last word.
			var seen string
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) && !strings.HasPrefix(seen, "p|") {
				seen = browsertest.Eval[string](t, ctx, caretAt)
				time.Sleep(20 * time.Millisecond)
			}
			// It stands still, reduced motion or not: a blinking caret
			// restyles the page in every animation frame.
			want := "p|none|\"\" / \"\""
			require.Equal(t, want, seen, "on the tail's last paragraph, with no text for screen readers, still")
			r := waitAnnouncer(t, ctx)
			require.Equal(t, "complete", r.Status)
			require.Empty(t, browsertest.Eval[string](t, ctx, caretAt), "the caret is gone when the answer ends")
		})
	}
}

// caretsAt lists every element of the content that carries a caret (as
// caretAt), so a test can see two where there should be one.
const caretsAt = `(() => {
	const c = document.querySelector('#a [data-trickle="content"]');
	const out = [];
	for (const el of c.querySelectorAll("*")) {
		const s = getComputedStyle(el, "::after");
		if (s.content !== "none" && s.content !== "normal" && s.display !== "none" && (s.animationName === "trickle-caret" || s.width !== "auto")) {
			out.push(el.tagName.toLowerCase() + ":" + el.textContent);
		}
	}
	return out;
})()`

// A streaming table has one caret, after its last cell's text: the header
// row's last cell is the last child of its row too, and matched before.
func TestAStreamingTableHasOneCaretAtTheEndOfItsText(t *testing.T) {
	ctx := tab(t)
	text := "| City | Weather |\n| --- | --- |\n| Lisbon | sunny, 21 degrees |\n| Oslo | snow and wind from the north, slowly |\n"
	browsertest.Eval[bool](t, ctx, `(() => { const a = document.getElementById("a");
		a.setAttribute("endpoint", `+browsertest.JSString(textEndpoint(text, 2, 60))+`); window.__p = a.ask("table"); return true; })()`)
	// Watch every frame until the answer ends: whenever a body row shows
	// in the tail, exactly one cell carries the caret, the last one with
	// text in the last row (its first cell while the row has none yet).
	type seen struct {
		Carets []string `json:"carets"`
		Want   string   `json:"want"`
	}
	var frames []seen
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && len(frames) < 200 {
		s := browsertest.Eval[seen](t, ctx, `(() => {
			const row = document.querySelector('#a [data-trickle="tail"] > table:last-child > :last-child > tr:last-child');
			if (!row || !row.querySelector("td")) return { carets: null, want: "" };
			const cells = [...row.children];
			let last = cells[0];
			for (const c of cells) if (c.textContent !== "") last = c;
			return { carets: `+caretsAt+`, want: last.tagName.toLowerCase() + ":" + last.textContent };
		})()`)
		if s.Carets != nil {
			frames = append(frames, s)
		}
		if st := browsertest.Eval[string](t, ctx, `document.getElementById("a").status`); st == "complete" || st == "failed" || st == "incomplete" {
			break
		}
		time.Sleep(15 * time.Millisecond)
	}
	require.NotEmpty(t, frames, "a body row was seen while streaming")
	for _, f := range frames {
		require.Equal(t, []string{f.Want}, f.Carets, "one caret, after the last text of the last row: %+v", frames)
	}
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__p`))
}

func TestThemesFollowTheReadersPreferenceAndThePagesCustomProperties(t *testing.T) {
	ctx := tab(t)
	style := func() map[string]string {
		return browsertest.Eval[map[string]string](t, ctx, `(() => { const s = getComputedStyle(document.getElementById("a"));
			return { bg: s.backgroundColor, fg: s.color, scheme: s.colorScheme }; })()`)
	}
	emulate(t, ctx, &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "light"})
	require.Equal(t, map[string]string{"bg": "rgb(255, 255, 255)", "fg": "rgb(29, 31, 35)", "scheme": "light dark"}, style())
	emulate(t, ctx, &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "dark"})
	require.Equal(t, map[string]string{"bg": "rgb(22, 24, 28)", "fg": "rgb(230, 231, 234)", "scheme": "light dark"}, style())
	// A page that sets color-scheme on the element wins over the preference.
	browsertest.Eval[bool](t, ctx, `(() => { document.getElementById("a").style.colorScheme = "light"; return true; })()`)
	require.Equal(t, "rgb(255, 255, 255)", style()["bg"])
	// The documented custom properties theme it.
	browsertest.Eval[bool](t, ctx, `(() => { const a = document.getElementById("a");
		a.style.setProperty("--trickle-background", "rgb(1, 2, 3)"); a.style.setProperty("--trickle-text", "rgb(4, 5, 6)"); return true; })()`)
	require.Equal(t, map[string]string{"bg": "rgb(1, 2, 3)", "fg": "rgb(4, 5, 6)", "scheme": "light"}, style())
}

func TestCodeKeepsItsTabsAndScrollsAndWideTablesScrollInsideTheirBlock(t *testing.T) {
	ctx := tab(t)
	long := "x := \"a very long line of code that does not fit the widget's width at all, not even close, and must scroll rather than wrap\"\n"
	wide := "| " + repeatCells("column", 30) + "\n|" + strings.Repeat(" --- |", 30) + "\n| " + repeatCells("value", 30) + "\n"
	text := "```go\nfunc f() {\n\treturn\n}\n" + long + "```\n\n" + wide + "\nend\n"
	r := ask(t, ctx, map[string]string{"endpoint": textEndpoint(text, 16, 0)}, "code")
	require.Equal(t, "complete", r.Status)
	got := browsertest.Eval[map[string]any](t, ctx, `(() => {
		const c = document.querySelector('#a [data-trickle="content"]');
		const pre = c.querySelector("pre"), table = c.querySelector("table");
		const s = getComputedStyle(pre);
		return { tab: s.tabSize, ws: s.whiteSpace, ox: s.overflowX, preScrolls: pre.scrollWidth > pre.clientWidth,
			lineHeight: pre.querySelector("code").getClientRects().length,
			tableScrolls: table.scrollWidth > table.clientWidth, tableOx: getComputedStyle(table).overflowX,
			pageFits: document.documentElement.scrollWidth <= window.innerWidth };
	})()`)
	require.Equal(t, "4", got["tab"])
	require.Contains(t, []any{"pre", "pre nowrap"}, got["ws"], "code never wraps")
	require.Equal(t, "auto", got["ox"])
	require.Equal(t, true, got["preScrolls"], "a long line scrolls inside its block")
	require.Equal(t, true, got["tableScrolls"], "a wide table scrolls inside its block")
	require.Equal(t, "auto", got["tableOx"])
	require.Equal(t, true, got["pageFits"], "the page itself never scrolls sideways")
}

func repeatCells(s string, n int) string {
	var out string
	for i := 0; i < n; i++ {
		out += s + strconv.Itoa(i) + " | "
	}
	return out
}

// TestAStallShowsTheNoticeOnceAndTheNextTokenClearsIt runs the relay's
// fault injection: the simulated model stops for 2.5 s after 5 tokens.
func TestAStallShowsTheNoticeOnceAndTheNextTokenClearsIt(t *testing.T) {
	ctx := tab(t)
	browsertest.Eval[bool](t, ctx, `(() => {
		const a = document.getElementById("a");
		const status = a.querySelector('[data-trickle="sr-status"]');
		window.__stall = [];
		const seen = () => {
			const s = status.textContent + "|" + a.hasAttribute("data-trickle-stalled") + "|" + (a.querySelector('[data-trickle="content"]').getAttribute("aria-busy") || "");
			if (window.__stall[window.__stall.length - 1] !== s) window.__stall.push(s);
		};
		new MutationObserver(seen).observe(a, { attributes: true, subtree: true, childList: true, characterData: true });
		a.setAttribute("endpoint", "/v1/chat/completions?answer=short&gap_ms=20&stall_after=5&stall_ms=2500");
		window.__done = a.ask("stall");
		return true;
	})()`)
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__done`))
	r := waitAnnouncer(t, ctx)
	require.Equal(t, "complete", r.Status)
	seq := browsertest.Eval[[]string](t, ctx, `window.__stall`)
	// Entries are "status text|data-trickle-stalled|the content's
	// aria-busy". The status
	// region is written as the frame arrives, the attribute in the next
	// animation frame: a moment may show one without the other.
	var notices, cleared int
	shown := false
	for i, s := range seq {
		parts := strings.Split(s, "|")
		require.Len(t, parts, 3)
		if parts[1] == "true" {
			shown = true
			require.Equal(t, "true", parts[2], "the notice only while the answer streams: %v", seq)
		}
		notice := parts[0] == "Waiting for the model…"
		prev := i > 0 && strings.HasPrefix(seq[i-1], "Waiting for the model…|")
		if notice && !prev {
			notices++
		}
		if !notice && prev {
			cleared++
			require.Equal(t, "true", parts[2], "cleared by the next token, before the end: %v", seq)
		}
	}
	require.True(t, shown, "the notice shows beside the caret (data-trickle-stalled): %v", seq)
	require.True(t, strings.HasPrefix(seq[len(seq)-1], " Answer complete.|false|") || strings.Contains(seq[len(seq)-1], "|false|"), "and is gone at the end: %v", seq)
	require.Equal(t, 1, notices, "said once: %v", seq)
	require.Equal(t, 1, cleared, "and cleared: %v", seq)
}

// TestNoLiveRegionIsEverInsideABusyRegion watches every change while an
// answer streams: NVDA holds back what changes inside an aria-busy region
// and does not speak it when busy clears (nvaccess/nvda#20871), so the
// element's live regions must never sit in one. The content, which holds
// none, is busy while it streams.
func TestNoLiveRegionIsEverInsideABusyRegion(t *testing.T) {
	ctx := tab(t)
	browsertest.Eval[bool](t, ctx, `(() => {
		const a = document.getElementById("a");
		const content = a.querySelector('[data-trickle="content"]');
		window.__busy = { checks: 0, inside: [], contentBusy: 0, announced: 0 };
		const check = () => {
			const b = window.__busy;
			b.checks++;
			for (const r of document.querySelectorAll('[role="status"], [role="log"], [role="alert"], [aria-live]')) {
				if (r.closest('[aria-busy="true"]')) b.inside.push(r.dataset.trickle || r.tagName);
			}
			if (content.getAttribute("aria-busy") === "true") b.contentBusy++;
			b.announced = a.querySelector('[data-trickle="announcer"]').children.length;
		};
		new MutationObserver(check).observe(document.documentElement, { attributes: true, subtree: true, childList: true, characterData: true });
		a.setAttribute("endpoint", "/v1/chat/completions?answer=short&gap_ms=5");
		window.__done = a.ask("busy");
		return true;
	})()`)
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__done`))
	r := waitAnnouncer(t, ctx)
	require.Equal(t, "complete", r.Status)
	b := browsertest.Eval[struct {
		Checks      int      `json:"checks"`
		Inside      []string `json:"inside"`
		ContentBusy int      `json:"contentBusy"`
		Announced   int      `json:"announced"`
	}](t, ctx, `window.__busy`)
	require.Greater(t, b.Checks, 10)
	require.Positive(t, b.ContentBusy, "the content is busy while it streams")
	require.Positive(t, b.Announced, "sentences were announced meanwhile")
	require.Empty(t, b.Inside, "no live region is ever inside a busy region")
	require.Equal(t, 0, browsertest.Eval[int](t, ctx, `document.querySelectorAll('[aria-busy="true"]').length`), "nothing is busy once the answer ended")
}

const footnoteAnswer = "A claim[^1] and a second[^2].\n\nMore text, the first note again[^1].\n\n[^1]: The first note.\n[^2]: The second note.\n"

// Two answers on one page with the same footnote labels: every id is the
// page's only one, each link leads to the note of its own answer, and each
// answer equals the one-shot rendering with its element's prefix.
func TestTwoAnswersFootnotesOnOnePageLinkToTheirOwnNotes(t *testing.T) {
	ctx := tab(t)
	browsertest.Eval[bool](t, ctx, `(() => { const b = document.createElement("trickle-answer"); b.id = "b"; document.body.append(b); return true; })()`)
	status := browsertest.Eval[[]string](t, ctx, `(async () => Promise.all(["a", "b"].map((id) => { const el = document.getElementById(id);
		el.setAttribute("endpoint", `+browsertest.JSString(textEndpoint(footnoteAnswer, 6, 2))+`); return el.ask("notes"); })))()`)
	require.Equal(t, []string{"complete", "complete"}, status)

	policy := render.Policy{SameOrigin: server(t)}
	for i, id := range []string{"a", "b"} {
		// The page's first element is number 1, the one added next 2.
		want := convert(t, footnoteAnswer, element.RenderOptions(policy, render.WithFootnotePrefix(element.FootnotePrefix(i+1)))...)
		require.Contains(t, want, `id="`+element.FootnotePrefix(i+1)+`fn:1"`)
		require.Equal(t, browsertest.Eval[string](t, ctx, `(() => { const t = document.createElement("template"); t.innerHTML = `+browsertest.JSString(want)+`; return t.innerHTML; })()`),
			browsertest.Eval[string](t, ctx, `(() => { const c = document.querySelector('#`+id+` [data-trickle="content"]').cloneNode(true);
				for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
				return c.innerHTML; })()`), "%s equals the one-shot rendering with its prefix", id)
	}

	got := browsertest.Eval[map[string]any](t, ctx, `(() => {
		const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
		const links = [...document.querySelectorAll('trickle-answer a[href^="#"]')].map((a) => {
			const target = document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1)));
			return a.closest("trickle-answer").id + ">" + (target ? target.closest("trickle-answer").id : "none");
		});
		return { ids: ids.length, unique: new Set(ids).size, links };
	})()`)
	require.Equal(t, got["ids"], got["unique"], "no id twice on the page")
	links := got["links"].([]any)
	require.Len(t, links, 2*(3+3), "per answer three references and a back link to each")
	for _, l := range links {
		require.Contains(t, []any{"a>a", "b>b"}, l, "a link leads into its own answer")
	}

	// Following the second answer's first reference lands on its own note.
	require.Equal(t, "b", browsertest.Eval[string](t, ctx, `(() => { document.querySelector('#b a.footnote-ref').click();
		return document.querySelector(":target")?.closest("trickle-answer")?.id ?? "none"; })()`))
}
