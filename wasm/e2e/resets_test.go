//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// resetModules holds the CSS resets of real pages, from npm at the exact
// versions testdata/resets/package-lock.json pins (make e2e-resets runs
// npm ci there).
const resetModules = "testdata/resets/node_modules"

// A reset is what a page puts in its <head> to load one of them. Tailwind
// v4's preflight goes into the `base` layer, as the package's index.css
// puts it; v3's is the package's own src/css/preflight.css, unlayered as a
// v3 build emits it (the browser drops the few declarations that hold
// Tailwind's theme() calls: the page's fonts and the default border
// colour, which the widget sets itself).
var resets = []struct{ name, head string }{
	{"none", ``},
	{"tailwind-v3", `<link rel="stylesheet" href="/custom/resets/files/tailwindcss3/src/css/preflight.css">`},
	{"tailwind-v4", `<style>@layer theme, base, components, utilities; @import url("/custom/resets/files/tailwindcss/preflight.css") layer(base);</style>`},
	{"bootstrap-reboot", `<link rel="stylesheet" href="/custom/resets/files/bootstrap/dist/css/bootstrap-reboot.css">`},
	{"modern-normalize", `<link rel="stylesheet" href="/custom/resets/files/modern-normalize/modern-normalize.css">`},
}

// resetPage is a phone-sized page with the reset's head, a heading of the
// page's own and one element.
const resetPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>trickle under a CSS reset</title>
__RESET__
<script>window.__events = [];</script>
<script type="module" src="/trickle/trickle.js"></script>
</head><body>
<h1 id="page-h1">The page's own heading</h1>
<trickle-answer id="a" show-metrics__WORKER__></trickle-answer>
</body></html>`

// serveResets serves /custom/resets/page/NAME (resetPage with reset NAME)
// and /custom/resets/files/… (the installed packages' files).
func serveResets(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/custom/resets/page/"); ok {
		for _, rs := range resets {
			if rs.name == name {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				worker := ""
				if thread == "main" {
					worker = ` worker="off"`
				}
				io.WriteString(w, strings.NewReplacer("__RESET__", rs.head, "__WORKER__", worker).Replace(resetPage))
				return
			}
		}
		http.NotFound(w, r)
		return
	}
	http.StripPrefix("/custom/resets/files/", http.FileServer(http.Dir(resetModules))).ServeHTTP(w, r)
}

// needResets skips (fails under CI) when the resets are not installed.
func needResets(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(resetModules, ".package-lock.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: make test installs it (make e2e-resets)", resetModules)
		}
		t.Skipf("%s is missing: run make e2e-resets (npm ci in wasm/e2e/testdata/resets)", resetModules)
	}
}

// resetAnswer has every block an answer's typography styles, and the
// widest things a model writes: a long URL, a long word, long inline code,
// a long code line and a wide table.
var resetAnswer = "An answer.\n\n# Heading one\n\nA paragraph with `inline code`, a [link](https://example.com/docs) and **bold** text.\n\n" +
	"## Heading two\n\nText.\n\n### Heading three\n\nText.\n\n#### Heading four\n\nText.\n\n##### Heading five\n\nText.\n\n###### Heading six\n\nText.\n\n" +
	"- first\n- second\n  - nested\n    - deeper\n\nBetween the lists.\n\n1. one\n2. two\n   1. nested one\n\n" +
	"> A quote, of a few words.\n\n```go\nfmt.Println(\"code\")\n```\n\n| name | value |\n| --- | --- |\n| a | 1 |\n\n---\n\n" +
	"A long address: https://example.com/a/very/long/path/that/goes/on/and/on/without/any/space/at/all/index.html?query=string&and=more\n\n" +
	"A long word: " + strings.Repeat("Donaudampfschifffahrt", 8) + ".\n\n" +
	"Long inline code: `" + strings.Repeat("x.y", 60) + "`.\n\n" +
	"```text\n" + strings.Repeat("a long line of code that does not wrap ", 8) + "\n```\n\n" +
	"| " + strings.Repeat("column | ", 12) + "\n|" + strings.Repeat(" --- |", 12) + "\n| " + strings.Repeat("a_long_cell_value | ", 12) + "\n\n" +
	"- a list item holding " + strings.Repeat("unbroken", 20) + "\n\n> a quote holding https://example.com/" + strings.Repeat("segment/", 20) + "\n\n" +
	"### A heading " + strings.Repeat("Überschrift", 6) + "\n\nThe end, with a note.[^1]\n\n[^1]: At https://example.com/" + strings.Repeat("note/", 30) + "\n"

// typography is what the checks read, by computed style: for each part of
// the answer (a selector inside the element), the properties that make it
// read as that part.
var typography = []struct {
	sel   string
	props []string
}{
	{"h1", []string{"font-size", "font-weight", "line-height", "margin-top", "margin-bottom"}},
	{"h2", []string{"font-size", "font-weight", "line-height", "margin-top", "margin-bottom"}},
	{"h3", []string{"font-size", "font-weight", "margin-top", "margin-bottom"}},
	{"h4", []string{"font-size", "font-weight", "margin-top", "margin-bottom"}},
	{"h5", []string{"font-size", "font-weight", "margin-top", "margin-bottom"}},
	{"h6", []string{"font-size", "font-weight", "margin-top", "margin-bottom"}},
	{"h1 + p", []string{"margin-top", "margin-bottom", "font-size", "line-height"}},
	{"ul", []string{"list-style-type", "list-style-position", "padding-inline-start", "margin-top", "margin-bottom"}},
	{"ul ul", []string{"list-style-type", "padding-inline-start", "margin-top", "margin-bottom"}},
	{"ul ul ul", []string{"list-style-type"}},
	{"ol", []string{"list-style-type", "list-style-position", "padding-inline-start", "margin-top", "margin-bottom"}},
	{"ol ol", []string{"list-style-type", "margin-top", "margin-bottom"}},
	{"li", []string{"display"}},
	{"blockquote", []string{"margin-top", "margin-bottom", "margin-inline-start", "padding-inline-start", "border-inline-start-width", "border-inline-start-style", "color"}},
	{"p code", []string{"font-family", "font-size", "background-color", "color", "padding-left", "border-top-left-radius"}},
	{"pre", []string{"font-family", "font-size", "background-color", "padding-left", "padding-top", "margin-bottom", "overflow-x", "white-space"}},
	{"pre code", []string{"font-size", "background-color", "padding-left"}},
	{"table", []string{"border-collapse", "display"}},
	{"th", []string{"border-top-width", "border-top-style", "border-top-color", "padding-left", "padding-top", "font-weight"}},
	{"td", []string{"border-top-width", "border-top-style", "border-left-width", "padding-left", "padding-top"}},
	{"p a", []string{"color", "text-decoration-line"}},
	{"hr", []string{"border-top-width", "border-top-style", "margin-top", "opacity"}},
	{`[data-trickle="copy"]`, []string{"background-color", "border-top-width", "border-top-style", "padding-left", "font-size"}},
}

// readTypography returns "selector|property" → computed value, for the
// first match of each selector in the element's content.
func readTypography(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	var js strings.Builder
	js.WriteString(`(() => { const c = document.querySelector('#a [data-trickle="content"]'); const out = {};`)
	for _, ty := range typography {
		fmt.Fprintf(&js, `{ const e = c.querySelector(%s); const s = e && getComputedStyle(e);`, browsertest.JSString(ty.sel))
		for _, p := range ty.props {
			fmt.Fprintf(&js, `out[%s] = s ? s.getPropertyValue(%s) : "(missing)";`, browsertest.JSString(ty.sel+"|"+p), browsertest.JSString(p))
		}
		js.WriteString(`}`)
	}
	js.WriteString(`return out; })()`)
	return browsertest.Eval[map[string]string](t, ctx, js.String())
}

func px(t *testing.T, v string) float64 {
	t.Helper()
	n, ok := strings.CutSuffix(v, "px")
	require.True(t, ok, "%q is not a length in px", v)
	f, err := strconv.ParseFloat(n, 64)
	require.NoError(t, err, "%q is not a length in px", v)
	return f
}

// resetTab opens the reset's page at 390 by 844 CSS pixels, as a phone
// shows it, with the widget ready.
func resetTab(t *testing.T, name string) context.Context {
	t.Helper()
	ctx := browserTab(t)
	_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 390, Height: 844, DeviceScaleFactor: 1, Mobile: true,
	})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(server(t)+"/custom/resets/page/"+name)))
	widgetReady(t, ctx, browsertest.JSString("/trickle/trickle.js"))
	return ctx
}

func TestTheAnswerKeepsItsTypographyUnderThePagesCSSReset(t *testing.T) {
	needResets(t)
	var baseline map[string]string
	for _, rs := range resets {
		t.Run(rs.name, func(t *testing.T) {
			ctx := resetTab(t, rs.name)
			// The reset is in force: each one restyles the page's own h1.
			page := browsertest.Eval[map[string]string](t, ctx, `(() => { const s = getComputedStyle(document.getElementById("page-h1"));
				return { size: s.fontSize, weight: s.fontWeight, margin: s.marginTop, body: getComputedStyle(document.body).margin }; })()`)
			switch rs.name {
			case "none":
				require.Equal(t, "32px", page["size"], "the browser's own h1")
			case "tailwind-v3", "tailwind-v4":
				require.Equal(t, "16px", page["size"], "preflight: headings inherit their size")
			case "bootstrap-reboot":
				require.Equal(t, "0px", page["margin"], "Reboot: headings have no top margin")
				require.Equal(t, "500", page["weight"])
			case "modern-normalize":
				require.Equal(t, "0px", page["body"], "modern-normalize: the body has no margin")
			}

			r := ask(t, ctx, map[string]string{"endpoint": textEndpoint(resetAnswer, 64, 0)}, "typography")
			require.Equal(t, "complete", r.Status)
			got := readTypography(t, ctx)
			for k, v := range got {
				require.NotEqual(t, "(missing)", v, k)
			}

			// What an answer reads as, whatever the page loaded.
			font := px(t, browsertest.Eval[string](t, ctx, `getComputedStyle(document.getElementById("a")).fontSize`))
			var sizes []float64
			for i := 1; i <= 6; i++ {
				h := fmt.Sprintf("h%d", i)
				sizes = append(sizes, px(t, got[h+"|font-size"]))
				weight, err := strconv.Atoi(got[h+"|font-weight"])
				require.NoError(t, err)
				require.GreaterOrEqual(t, weight, 600, "%s is bold", h)
				require.Positive(t, px(t, got[h+"|margin-top"]), "%s has space above", h)
				require.Positive(t, px(t, got[h+"|margin-bottom"]), "%s has space below", h)
			}
			require.InDelta(t, 1.5, sizes[0]/font, 0.25, "an answer's h1 is sized for an answer (%v px on %v px text), not for a page", sizes[0], font)
			for i := 1; i < 6; i++ {
				require.Less(t, sizes[i], sizes[i-1], "h%d is smaller than h%d", i+1, i)
			}
			require.Positive(t, px(t, got["h1 + p|margin-top"]))
			require.Positive(t, px(t, got["h1 + p|margin-bottom"]))
			require.Equal(t, "disc", got["ul|list-style-type"])
			require.Equal(t, "circle", got["ul ul|list-style-type"])
			require.Equal(t, "square", got["ul ul ul|list-style-type"])
			require.Equal(t, "decimal", got["ol|list-style-type"])
			require.Equal(t, "decimal", got["ol ol|list-style-type"])
			require.Equal(t, "outside", got["ul|list-style-position"])
			require.Equal(t, "list-item", got["li|display"])
			require.Greater(t, px(t, got["ul|padding-inline-start"]), font, "room for the markers")
			require.Positive(t, px(t, got["ul|margin-bottom"]))
			require.Equal(t, "0px", got["ul ul|margin-top"], "a nested list sits inside its item")
			require.Equal(t, "3px", got["blockquote|border-inline-start-width"])
			require.Equal(t, "solid", got["blockquote|border-inline-start-style"])
			require.Positive(t, px(t, got["blockquote|padding-inline-start"]))
			require.Positive(t, px(t, got["blockquote|margin-bottom"]))
			for _, sel := range []string{"p code", "pre"} {
				require.Contains(t, got[sel+"|font-family"], "monospace", sel)
				require.NotEqual(t, "rgba(0, 0, 0, 0)", got[sel+"|background-color"], "%s has its background", sel)
			}
			require.Positive(t, px(t, got["p code|padding-left"]))
			require.Equal(t, "auto", got["pre|overflow-x"])
			require.Equal(t, "pre", got["pre|white-space"])
			require.Positive(t, px(t, got["pre|margin-bottom"]))
			for _, sel := range []string{"th", "td"} {
				require.Equal(t, "1px", got[sel+"|border-top-width"], sel)
				require.Equal(t, "solid", got[sel+"|border-top-style"], sel)
				require.Positive(t, px(t, got[sel+"|padding-left"]), sel)
			}
			require.Equal(t, "underline", got["p a|text-decoration-line"])
			require.Equal(t, "1", got["hr|opacity"])
			require.Equal(t, "1px", got["hr|border-top-width"])
			require.Equal(t, "1px", got[`[data-trickle="copy"]|border-top-width`])
			require.NotEqual(t, "rgba(0, 0, 0, 0)", got[`[data-trickle="copy"]|background-color`], "a button of the widget keeps its background")

			// The inline code is in the answer's text colour, as without a
			// reset (Reboot colours code).
			text := browsertest.Eval[string](t, ctx, `getComputedStyle(document.getElementById("a")).color`)
			require.Equal(t, text, got["p code|color"])

			// And exactly as the widget looks on a page without a reset.
			if rs.name == "none" {
				baseline = got
			} else {
				require.NotNil(t, baseline, "the page without a reset runs first")
				for k, want := range baseline {
					require.Equal(t, want, got[k], "%s under %s", k, rs.name)
				}
			}

			// Headings follow the answer's own font size.
			h1 := browsertest.Eval[string](t, ctx, `(() => { const a = document.getElementById("a"); a.style.fontSize = "20px";
				const v = getComputedStyle(a.querySelector("h1")).fontSize; a.style.fontSize = ""; return v; })()`)
			require.InDelta(t, sizes[0]/font*20, px(t, h1), 0.01, "the h1 scales with the answer's font size")

			// The page overrides any of it with ordinary CSS: a rule naming
			// the element and the part (later in the document, so it wins
			// at the same specificity), or a --trickle-* property.
			over := browsertest.Eval[map[string]string](t, ctx, `(() => {
				const style = document.createElement("style");
				style.textContent = "trickle-answer ul { list-style-type: square } trickle-answer p { margin-block: 3px } trickle-answer code { color: rgb(1, 2, 3) }";
				document.head.append(style);
				const a = document.getElementById("a");
				a.style.setProperty("--trickle-h1-size", "2.25em");
				a.style.setProperty("--trickle-block-spacing", "0.5em");
				const s = (sel) => getComputedStyle(a.querySelector(sel));
				const out = { ul: s("ul").listStyleType, nested: s("ul ul").listStyleType, p: s("h1 + p").marginTop,
					code: s("p code").color, h1: s("h1").fontSize, pre: s("pre").marginBottom, font: getComputedStyle(a).fontSize };
				style.remove();
				a.style.removeProperty("--trickle-h1-size");
				a.style.removeProperty("--trickle-block-spacing");
				return out;
			})()`)
			require.Equal(t, "square", over["ul"])
			require.Equal(t, "square", over["nested"], "a nested list's marker yields to the same rule")
			require.Equal(t, "3px", over["p"])
			require.Equal(t, "rgb(1, 2, 3)", over["code"])
			require.InDelta(t, 2.25*px(t, over["font"]), px(t, over["h1"]), 0.01, "--trickle-h1-size")
			require.InDelta(t, 0.5*px(t, over["font"])*0.9, px(t, over["pre"]), 0.01, "--trickle-block-spacing (in the code's own em)")

			noOverflow(t, ctx)
		})
	}
}

// noOverflow checks, at the phone's width, that nothing in the answer is
// wider than the element (code blocks and tables scroll inside their own
// box, and do hold wider content) and that the page does not scroll
// sideways.
func noOverflow(t *testing.T, ctx context.Context) {
	t.Helper()
	m := browsertest.Eval[struct {
		Viewport   float64  `json:"viewport"`
		DocWidth   float64  `json:"docWidth"`
		Left       float64  `json:"left"`
		Right      float64  `json:"right"`
		Scroll     float64  `json:"scroll"`
		Client     float64  `json:"client"`
		Outside    []string `json:"outside"`
		Scrollers  []string `json:"scrollers"`
		Checked    int      `json:"checked"`
		LongWordLn float64  `json:"longWordLines"`
	}](t, ctx, `(() => {
		const a = document.getElementById("a");
		const box = a.getBoundingClientRect();
		const outside = [], scrollers = [];
		let checked = 0;
		for (const e of a.querySelectorAll("*")) {
			// Inside a code block or a table, content may be wider: it
			// scrolls there. The block itself must fit.
			if (e.parentElement.closest("pre, table")) continue;
			// The visually hidden live regions are clipped to nothing.
			if (e.closest('[data-trickle="announcer"], [data-trickle="sr-status"]')) continue;
			const r = e.getBoundingClientRect();
			if (r.width === 0 && r.height === 0) continue;
			checked++;
			if (r.left < box.left - 0.5 || r.right > box.right + 0.5) outside.push(e.tagName + " " + r.left + ".." + r.right);
			if ((e.tagName === "PRE" || e.tagName === "TABLE") && e.scrollWidth > e.clientWidth) scrollers.push(e.tagName);
		}
		const word = [...a.querySelectorAll("p")].find((p) => p.textContent.startsWith("A long word"));
		return { viewport: document.documentElement.clientWidth, docWidth: document.documentElement.scrollWidth,
			left: box.left, right: box.right, scroll: a.scrollWidth, client: a.clientWidth, outside, scrollers, checked,
			longWordLines: word.getBoundingClientRect().height / parseFloat(getComputedStyle(word).lineHeight) };
	})()`)
	require.Equal(t, 390.0, m.Viewport, "the phone's width")
	require.LessOrEqual(t, m.DocWidth, m.Viewport, "the page never scrolls sideways")
	require.GreaterOrEqual(t, m.Left, 0.0)
	require.LessOrEqual(t, m.Right, m.Viewport, "the element fits the page")
	require.LessOrEqual(t, m.Scroll, m.Client, "the element itself never scrolls sideways")
	require.Empty(t, m.Outside, "every part of the answer fits inside the element")
	require.Greater(t, m.Checked, 40)
	require.Contains(t, m.Scrollers, "PRE", "the long code line scrolls inside its block")
	require.Contains(t, m.Scrollers, "TABLE", "the wide table scrolls inside its block")
	require.Greater(t, math.Round(m.LongWordLn), 1.0, "the long word wraps")
}
