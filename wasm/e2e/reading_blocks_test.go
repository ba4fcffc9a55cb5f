//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/render/highlight"
	"github.com/trickle-dev/trickle/wasm/element"
)

// highlightPage is the test page with the highlight attribute on its
// element from the start, as a page that wants highlighting writes it.
const highlightPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>trickle highlight</title>
<script type="module" src="/trickle/trickle.js"></script>
</head><body>
<trickle-answer id="a" highlight show-metrics></trickle-answer>
</body></html>`

func serveHighlightPage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, highlightPage)
}

// clipboard lets the page use the clipboard without a user gesture and
// keeps the headless page focused (the clipboard wants a focused document).
func clipboard(t testing.TB, ctx context.Context) {
	t.Helper()
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    cdpbrowser.PermissionSettingGranted,
		})
		require.NoError(t, err)
	}
	_, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
	require.NoError(t, err)
}

// withoutToolbars is the content's HTML with the toolbars taken out: what
// must equal the one-shot rendering.
const withoutToolbars = `(() => {
	const c = document.querySelector('#a [data-trickle="content"]').cloneNode(true);
	for (const b of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) b.remove();
	for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
	return c.innerHTML;
})()`

const codeAnswer = "Two blocks.\n\n```go\nfunc main() {\n\tfmt.Println(\"tab\\there\")\n}\n```\n\nAnd one without a language:\n\n```\nplain  text\n```\n\n| name | value |\n| --- | --- |\n| a | 1 |\n| b c | 2 |\n\nDone.\n"

// watchBlocks records, for every <pre> and toolbar added to the answer,
// where it went and what it held when it was inserted.
const watchBlocks = `(() => {
	window.__added = [];
	const a = document.getElementById("a");
	new MutationObserver((records) => {
		for (const r of records) for (const n of r.addedNodes) {
			if (n.nodeType !== 1) continue;
			for (const pre of n.tagName === "PRE" ? [n] : n.querySelectorAll("pre")) {
				window.__added.push({ where: pre.closest('[data-trickle="tail"]') ? "tail" : "settled",
					spans: !!pre.querySelector("span"), toolbar: !!(pre.previousElementSibling && pre.previousElementSibling.dataset.trickle === "code-toolbar") });
			}
			if (n.dataset && n.dataset.trickle === "code-toolbar") window.__added.push({ where: n.closest('[data-trickle="tail"]') ? "tail" : "settled", toolbarEl: true });
		}
	}).observe(a, { subtree: true, childList: true });
	return true;
})()`

func TestSettledCodeBlocksGetAToolbarThatCopiesTheirExactTextByKeyboard(t *testing.T) {
	ctx := tab(t)
	clipboard(t, ctx)
	browsertest.Eval[bool](t, ctx, watchBlocks)
	r := ask(t, ctx, map[string]string{"endpoint": textEndpoint(codeAnswer, 5, 3)}, "code")
	require.Equal(t, "complete", r.Status)
	want := convert(t, codeAnswer, element.RenderOptions(render.Policy{SameOrigin: server(t)})...)
	require.Equal(t, browsertest.Eval[string](t, ctx, `(() => { const t = document.createElement("template"); t.innerHTML = `+browsertest.JSString(want)+`; return t.innerHTML; })()`),
		browsertest.Eval[string](t, ctx, withoutToolbars), "the blocks are goldmark's; toolbars are siblings")

	added := browsertest.Eval[[]map[string]any](t, ctx, `window.__added`)
	for _, a := range added {
		if a["toolbarEl"] == true {
			require.Equal(t, "settled", a["where"], "no toolbar in the live tail")
		}
	}
	bars := browsertest.Eval[[]map[string]any](t, ctx, `[...document.querySelectorAll('#a [data-trickle="code-toolbar"]')].map((b) => ({
		lang: b.querySelector('[data-trickle="code-lang"]').textContent,
		next: b.nextElementSibling.tagName,
		button: b.querySelector("button").outerHTML }))`)
	require.Len(t, bars, 2, "one toolbar per code block")
	require.Equal(t, "go", bars[0]["lang"])
	require.Equal(t, "", bars[1]["lang"], "no language shown when the info string has none")
	require.Equal(t, "PRE", bars[0]["next"])
	require.Equal(t, `<button type="button" data-trickle="copy" aria-label="Copy code">Copy</button>`, bars[0]["button"])

	// By keyboard: focus the button, press Enter.
	require.Equal(t, "copy", browsertest.Eval[string](t, ctx, `(() => { const b = document.querySelector('#a [data-trickle="copy"]'); b.focus(); return document.activeElement.dataset.trickle; })()`))
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent("\r")))
	var copied string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && copied == ""; time.Sleep(50 * time.Millisecond) {
		copied = browsertest.Eval[string](t, ctx, `navigator.clipboard.readText()`)
	}
	require.Equal(t, "func main() {\n\tfmt.Println(\"tab\\there\")\n}\n", copied, "the block's exact text, tabs kept")
	require.Eventually(t, func() bool {
		return browsertest.Eval[string](t, ctx, `document.querySelector('#a [data-trickle="sr-status"]').textContent`) == "Copied"
	}, 5*time.Second, 50*time.Millisecond, "said in the status region")

	// The table's button puts tab-separated text and HTML on the clipboard.
	browsertest.Eval[bool](t, ctx, `(() => { document.querySelector('#a [data-trickle="copy-table"]').click(); return true; })()`)
	// The clipboard holds the code block's text until the table's items
	// replace it.
	var got map[string]string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !strings.Contains(got["types"], "text/html"); time.Sleep(50 * time.Millisecond) {
		got = browsertest.Eval[map[string]string](t, ctx, `(async () => {
			const [item] = await navigator.clipboard.read();
			if (!item || !item.types.includes("text/html")) return { types: item ? item.types.join(",") : "" };
			return { types: item.types.join(","), text: await (await item.getType("text/plain")).text(), html: await (await item.getType("text/html")).text() };
		})()`)
	}
	require.Contains(t, got["types"], "text/plain")
	require.Contains(t, got["types"], "text/html")
	require.Equal(t, "name\tvalue\na\t1\nb c\t2\n", got["text"])
	require.Contains(t, got["html"], "<td>b c</td>")
}

func TestThePagesHighlighterRunsOncePerSettledBlockSanitized(t *testing.T) {
	ctx := tab(t)
	browsertest.Eval[bool](t, ctx, `(() => {
		const a = document.getElementById("a");
		window.__calls = []; window.__pwned = 0; window.__errors = [];
		const err = console.error; console.error = (...args) => { window.__errors.push(args.map(String).join(" ")); err(...args); };
		a.highlighter = (code, lang) => {
			window.__calls.push(lang);
			if (lang === "") throw new Error("no grammar");
			return code.replace(/func/g, '<span class="kw" onclick="window.__pwned++" style="color:red">func</span><img src=x onerror="window.__pwned++">');
		};
		return true;
	})()`)
	r := ask(t, ctx, map[string]string{"endpoint": textEndpoint(codeAnswer, 5, 2)}, "code")
	require.Equal(t, "complete", r.Status)
	got := browsertest.Eval[map[string]any](t, ctx, `(() => {
		const codes = document.querySelectorAll('#a [data-trickle="content"] pre code');
		return { calls: window.__calls, first: codes[0].innerHTML, second: codes[1].innerHTML, pwned: window.__pwned, errors: window.__errors };
	})()`)
	require.Equal(t, []any{"go", ""}, got["calls"], "called once per settled block")
	require.Equal(t, "<span class=\"kw\">func</span> main() {\n\tfmt.Println(\"tab\\there\")\n}\n", got["first"], "only span and class survive")
	require.Equal(t, "plain  text\n", got["second"], "a highlighter that throws leaves the block plain")
	require.EqualValues(t, 0, got["pwned"])
	require.Len(t, got["errors"], 1)
	require.Contains(t, got["errors"].([]any)[0], "the page's highlighter threw")
}

func TestTheHighlightAttributeHighlightsEachBlockInTheWriteThatSettlesIt(t *testing.T) {
	ctx := tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(server(t)+"/custom/reading/highlight")))
	require.True(t, browsertest.Eval[bool](t, ctx, `(async () => { await customElements.whenDefined("trickle-answer");
		const { ready } = await import("/trickle/trickle.js"); await ready(); return true; })()`))
	browsertest.Eval[bool](t, ctx, watchBlocks)
	status := browsertest.Eval[string](t, ctx, `(async () => { const a = document.getElementById("a");
		a.setAttribute("endpoint", `+browsertest.JSString(textEndpoint(codeAnswer, 5, 3))+`); return await a.ask("code"); })()`)
	require.Equal(t, "complete", status)
	applied(t, ctx)
	want := convert(t, codeAnswer, element.RenderOptions(render.Policy{SameOrigin: server(t)}, highlight.Option())...)
	require.Equal(t, browsertest.Eval[string](t, ctx, `(() => { const t = document.createElement("template"); t.innerHTML = `+browsertest.JSString(want)+`; return t.innerHTML; })()`),
		browsertest.Eval[string](t, ctx, withoutToolbars), "the final DOM is the one-shot highlighted rendering")
	require.Contains(t, want, `<span class="hl-kd">func</span>`)

	added := browsertest.Eval[[]map[string]any](t, ctx, `window.__added`)
	settledGo := 0
	for _, a := range added {
		if a["toolbarEl"] == true {
			continue
		}
		if a["where"] == "tail" {
			require.Equal(t, false, a["spans"], "the live code block is plain")
		} else if a["spans"] == true {
			settledGo++
			require.Equal(t, true, a["toolbar"], "highlighted and given its toolbar in the same write")
		}
	}
	require.Equal(t, 1, settledGo, "the go block is written highlighted, once")
	require.Equal(t, "rgb(207, 34, 46)", browsertest.Eval[string](t, ctx, `getComputedStyle(document.querySelector("#a .hl-kd")).color`), "the light theme's keyword colour")
	require.Contains(t, browsertest.Eval[string](t, ctx, `document.querySelector('#a [data-trickle="metrics"]').textContent`), "Time to first answer token")
}

func TestAPageThatSetsColorSchemeIsFollowed(t *testing.T) {
	ctx := tab(t)
	emulate(t, ctx, &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "dark"})
	got := browsertest.Eval[map[string]string](t, ctx, `(() => {
		document.documentElement.style.colorScheme = "light";
		const b = document.createElement("trickle-answer");
		document.body.append(b);
		const s = getComputedStyle(b);
		return { bg: s.backgroundColor, scheme: s.colorScheme, mark: b.dataset.trickleScheme || "" };
	})()`)
	require.Equal(t, map[string]string{"bg": "rgb(255, 255, 255)", "scheme": "light", "mark": "inherit"}, got)
	// Without one, the reader's preference.
	got = browsertest.Eval[map[string]string](t, ctx, `(() => {
		document.documentElement.style.colorScheme = "";
		const b = document.createElement("trickle-answer");
		document.body.append(b);
		const s = getComputedStyle(b);
		return { bg: s.backgroundColor, scheme: s.colorScheme, mark: b.dataset.trickleScheme || "" };
	})()`)
	require.Equal(t, map[string]string{"bg": "rgb(22, 24, 28)", "scheme": "light dark", "mark": ""}, got)
}

// highlighted asks element id for codeAnswer and returns its content's
// HTML without toolbars, once the answer completed.
func highlighted(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	status := browsertest.Eval[string](t, ctx, `(async () => { const a = document.getElementById(`+browsertest.JSString(id)+`);
		a.setAttribute("endpoint", `+browsertest.JSString(textEndpoint(codeAnswer, 9, 1))+`); return await a.ask("code"); })()`)
	require.Equal(t, "complete", status)
	return browsertest.Eval[string](t, ctx, `(() => {
		const c = document.querySelector('#`+id+` [data-trickle="content"]').cloneNode(true);
		for (const b of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) b.remove();
		for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
		return c.innerHTML;
	})()`)
}

// normalized is html as the browser serializes it.
func normalized(t *testing.T, ctx context.Context, html string) string {
	t.Helper()
	return browsertest.Eval[string](t, ctx, `(() => { const t = document.createElement("template"); t.innerHTML = `+browsertest.JSString(html)+`; return t.innerHTML; })()`)
}

// A page that booted the default build (no element asked for highlighting
// then) still highlights an element that asks later: one that connects with
// the attribute, and one that gets it before its next ask. The
// highlighting build starts beside the default one, once, on the same
// thread; elements without the attribute stay plain.
func TestHighlightingWorksForElementsThatAskForItAfterTheWidgetBooted(t *testing.T) {
	ctx := tab(t)
	before := browsertest.Eval[stats](t, ctx, readStats)
	require.Equal(t, []string{"default"}, before.Builds, "the page booted without chroma")

	policy := render.Policy{SameOrigin: server(t)}
	plain := normalized(t, ctx, convert(t, codeAnswer, element.RenderOptions(policy)...))
	coloured := normalized(t, ctx, convert(t, codeAnswer, element.RenderOptions(policy, highlight.Option())...))
	require.NotEqual(t, plain, coloured)

	// An element that connects with the attribute.
	browsertest.Eval[bool](t, ctx, `(() => { const h = document.createElement("trickle-answer");
		h.id = "h"; h.setAttribute("highlight", ""); document.body.append(h); return true; })()`)
	require.Equal(t, coloured, highlighted(t, ctx, "h"), "highlighted: the one-shot highlighted rendering")
	require.Equal(t, thread, browsertest.Eval[string](t, ctx, `document.getElementById("h").metrics.thread`), "on the page's thread choice")
	require.Equal(t, "rgb(207, 34, 46)", browsertest.Eval[string](t, ctx, `getComputedStyle(document.querySelector("#h .hl-kd")).color`), "with the highlighting stylesheet")

	// The page's first element, served by the default build, stays plain…
	require.Equal(t, plain, highlighted(t, ctx, "a"))
	// …and its code blocks take exactly the room the highlighted ones do:
	// highlighting only wraps text in spans, so no line box moves.
	boxes := browsertest.Eval[[]string](t, ctx, `["a", "h"].map((id) => [...document.querySelectorAll("#" + id + " pre")].map((pre) => {
		const r = pre.getBoundingClientRect(), code = pre.querySelector("code");
		// Distinct line boxes (spans split a line into more rects).
		const lines = [...code.getClientRects()].map((l) => Math.round(l.top - r.top) + "+" + Math.round(l.height));
		return r.width + "x" + r.height + " " + [...new Set(lines)].join(",") + " " + JSON.stringify(code.textContent);
	}).join(" | "))`)
	require.Equal(t, boxes[0], boxes[1], "plain and highlighted blocks: same size, same line boxes, same text")
	// …until it gets the attribute: its next answer is highlighted, and
	// Retry asks again on the highlighting build.
	browsertest.Eval[bool](t, ctx, `(() => { document.getElementById("a").setAttribute("highlight", ""); return true; })()`)
	require.Equal(t, coloured, highlighted(t, ctx, "a"))
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `document.getElementById("a").retry()`))
	require.Equal(t, coloured, browsertest.Eval[string](t, ctx, withoutToolbars))

	after := browsertest.Eval[stats](t, ctx, readStats)
	require.Equal(t, []string{"default", "highlight"}, after.Builds, "one more build, started once")
	require.Equal(t, thread, after.Thread)
	require.Equal(t, 2, after.PageElements, "the element that moved left its first build")
	require.Equal(t, 2, after.Elements)

	// Both builds booting at once: an element with the attribute added
	// while the default build is still starting (on the main thread, the
	// two Go programs take turns to boot).
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(server(t)+"/e2e")))
	browsertest.Eval[bool](t, ctx, `(() => { const h = document.createElement("trickle-answer");
		h.id = "h"; h.setAttribute("highlight", ""); document.body.append(h); return true; })()`)
	require.Equal(t, coloured, highlighted(t, ctx, "h"))
	require.Equal(t, plain, highlighted(t, ctx, "a"))
	require.Equal(t, []string{"default", "highlight"}, browsertest.Eval[stats](t, ctx, readStats).Builds)
}
