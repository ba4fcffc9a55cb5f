//go:build !(js && wasm)

package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

// mathAnswers are the 20 KB sample (its one display formula, the
// over-admission bound) from the simulated model, and render's math
// answer (inline and display formulas in paragraphs, lists, quotes and
// tables, beside prices) streamed in 7-byte deltas.
func mathAnswers(t *testing.T) map[string][2]string {
	t.Helper()
	sample, err := os.ReadFile(filepath.Join("..", "..", "relay", "sim", "answers", "sample-20k.md"))
	require.NoError(t, err)
	mixed, err := os.ReadFile(filepath.Join("..", "..", "render", "testdata", "answers", "math.md"))
	require.NoError(t, err)
	return map[string][2]string{
		"sample-20k": {string(sample), "/v1/chat/completions?answer=sample-20k&token_chars=16&gap_ms=0.2"},
		"math":       {string(mixed), textEndpoint(string(mixed), 7, 1)},
	}
}

// fakeMath is a page's TeX converter: a formula's TeX as one <mtext>; it
// slips in an event handler the sanitizer must drop.
const fakeMath = `(tex, { display }) => {
	window.__calls.push(tex);
	const esc = tex.replace(/&/g, "&amp;").replace(/</g, "&lt;");
	return '<math><mrow onclick="window.__pwned++"><mtext>' + esc + '</mtext></mrow></math>';
}`

// converted is what the element must show for a one-shot rendering: each
// formula's text replaced by the converter's MathML, sanitized (no
// handler), display="block" for display formulas, the TeX as alttext.
const converted = `((html) => {
	const t = document.createElement("template");
	t.innerHTML = html;
	for (const s of t.content.querySelectorAll("[data-trickle-math]")) {
		const tex = s.textContent.trim();
		const m = document.createElementNS("http://www.w3.org/1998/Math/MathML", "math");
		const row = document.createElementNS("http://www.w3.org/1998/Math/MathML", "mrow");
		const txt = document.createElementNS("http://www.w3.org/1998/Math/MathML", "mtext");
		txt.textContent = tex;
		row.append(txt);
		m.append(row);
		if (s.dataset.trickleMath === "display") m.setAttribute("display", "block");
		m.setAttribute("alttext", tex);
		s.replaceChildren(m);
	}
	return t.innerHTML;
})`

func TestFormulasBecomeMathMLThroughThePagesConverterOnceSettledAndPricesStayText(t *testing.T) {
	policy := render.Policy{SameOrigin: server(t)}
	for name, ans := range mathAnswers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := tab(t)
			browsertest.Eval[bool](t, ctx, `(() => {
				const a = document.getElementById("a");
				window.__calls = []; window.__pwned = 0; window.__inTail = 0;
				a.math = `+fakeMath+`;
				// No formula is ever converted in the live tail.
				const content = a.querySelector('[data-trickle="content"]');
				new MutationObserver(() => { if (content.querySelector('[data-trickle="tail"] math')) window.__inTail++; })
					.observe(content, { childList: true, subtree: true, characterData: true });
				return true;
			})()`)
			r := ask(t, ctx, map[string]string{"endpoint": ans[1]}, "math")
			require.Equal(t, "complete", r.Status)

			want := convert(t, ans[0], element.RenderOptions(policy)...)
			formulas := strings.Count(want, "data-trickle-math=")
			require.Positive(t, formulas)
			require.Equal(t, browsertest.Eval[string](t, ctx, converted+`(`+browsertest.JSString(want)+`)`), r.HTML,
				"the streamed DOM is the one-shot rendering with each formula converted")
			got := browsertest.Eval[map[string]any](t, ctx, `(() => {
				const c = document.querySelector('#a [data-trickle="content"]');
				return { maths: c.querySelectorAll("[data-trickle-math] > math").length, calls: window.__calls.length,
					pwned: window.__pwned, inTail: window.__inTail, text: c.textContent };
			})()`)
			require.EqualValues(t, formulas, got["maths"], "every formula is a <math> element")
			require.EqualValues(t, formulas, got["calls"], "the converter ran once per formula")
			require.EqualValues(t, 0, got["inTail"], "never while a formula is in the live tail")
			require.EqualValues(t, 0, got["pwned"])
			if name == "sample-20k" {
				require.NotContains(t, got["text"], "$$")
				for _, a := range r.Announced {
					require.NotContains(t, a, "$$", "the announcer never says the delimiters")
				}
				require.Contains(t, strings.Join(r.Announced, " "), `(formula: \text{overshoot} \le (n - 1)\,b + n \cdot r_{\text{node}} \cdot \Delta)`)
			} else {
				require.Contains(t, got["text"], "A deposit of $750 and another of $300 grow")
				require.Contains(t, got["text"], "It costs $5 to open")
			}
		})
	}
}

func TestWithoutAConverterFormulasShowTheirExactTeXAndTheStreamedDOMIsTheOneShotRendering(t *testing.T) {
	ans := mathAnswers(t)["sample-20k"]
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": ans[1]}, "math")
	require.Equal(t, "complete", r.Status)
	want := convert(t, ans[0], element.RenderOptions(render.Policy{SameOrigin: server(t)})...)
	require.Equal(t, browsertest.Eval[string](t, ctx, `(() => { const t = document.createElement("template"); t.innerHTML = `+browsertest.JSString(want)+`; return t.innerHTML; })()`), r.HTML)
	tex := browsertest.Eval[string](t, ctx, `document.querySelector('#a [data-trickle-math="display"]').textContent`)
	require.Equal(t, "\n\\text{overshoot} \\le (n - 1)\\,b + n \\cdot r_{\\text{node}} \\cdot \\Delta\n", tex, "the backslash escapes are kept")
}
