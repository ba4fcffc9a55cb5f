// The formula sanitizer (mathml.js) and its caller (reading.js's
// mathWith): whatever a page's TeX converter returns, only MathML Core
// elements and their presentation attributes reach the answer, and a
// converter that fails leaves the TeX.

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals, rng } from "./dom.js";

installGlobals();
const { sanitizeMath } = await import("../mathml.js");
const { mathWith, decorate } = await import("../reading.js");

const MATHML = "http://www.w3.org/1998/Math/MathML";
const ALLOWED = new Set(
  "math annotation maction merror mfrac mi mmultiscripts mn mo mover mpadded mphantom mprescripts mroot mrow ms mspace msqrt mstyle msub msubsup msup mtable mtd mtext mtr munder munderover semantics".split(" "),
);
const BAD_ATTRS = /^(on|id$|class$|style$|href$|src$|xlink:|xmlns)/i;

const parse = (html) => {
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  return tpl.content.childNodes;
};

// onlyMathML asserts that el and everything under it is MathML Core with
// no attribute that reaches scripts, styles or the network.
function onlyMathML(el) {
  for (const e of [el, ...el.querySelectorAll("*")]) {
    assert.equal(e.namespaceURI, MATHML, e.outerHTML);
    assert.ok(ALLOWED.has(e.localName), e.outerHTML);
    for (const a of e.attributes) assert.doesNotMatch(a.name, BAD_ATTRS, e.outerHTML);
  }
}

test("a converter's MathML keeps its elements and presentation attributes", () => {
  const m = sanitizeMath(parse('<math display="block" class="x"><mrow><mi mathvariant="normal">x</mi><mo stretchy="false" onclick="y()">=</mo><mfrac linethickness="0"><mn>1</mn><mn>2</mn></mfrac></mrow></math>'), document);
  assert.equal(m.outerHTML, '<math display="block"><mrow><mi mathvariant="normal">x</mi><mo stretchy="false">=</mo><mfrac linethickness="0"><mn>1</mn><mn>2</mn></mfrac></mrow></math>');
});

test("scripts, links, styles, images and HTML inside are dropped or become text", () => {
  const m = sanitizeMath(parse('<math><mi href="javascript:alert(1)" style="color:red" id="a">a</mi><script>alert(2)</script><style>*{}</style><mtext><img src=x onerror="alert(3)"><b>bold</b></mtext><annotation-xml encoding="text/html"><div onclick="z()">h</div></annotation-xml><maction actiontype="statusline" onmouseover="w()"><mi>b</mi></maction></math>'), document);
  onlyMathML(m);
  assert.equal(m.outerHTML, '<math><mi>a</mi><mtext>bold</mtext>h<maction actiontype="statusline"><mi>b</mi></maction></math>');
});

test("an annotation keeps only its text", () => {
  const m = sanitizeMath(parse('<math><semantics><mi>x</mi><annotation encoding="application/x-tex">x<mi>y</mi></annotation></semantics></math>'), document);
  assert.equal(m.outerHTML, '<math><semantics><mi>x</mi><annotation encoding="application/x-tex">xy</annotation></semantics></math>');
});

test("MathML without its <math> root, or several roots, is wrapped in one", () => {
  assert.equal(sanitizeMath(parse("<math><mi>a</mi></math><math><mi>b</mi></math>"), document).outerHTML, "<math><mi>a</mi><mi>b</mi></math>");
  const mi = document.createElementNS(MATHML, "mi");
  mi.textContent = "z";
  assert.equal(sanitizeMath([mi], document).outerHTML, "<math><mi>z</mi></math>");
});

test("nothing left is null", () => {
  assert.equal(sanitizeMath(parse("<script>x</script>  "), document), null);
  assert.equal(sanitizeMath([], document), null);
});

// Random trees of any elements and attributes, MathML, HTML and SVG:
// what comes out is MathML Core only, and keeps every text outside
// script, style and annotation-xml's markup.
test("no element or attribute outside MathML Core survives", () => {
  const tags = ["math", "mi", "mo", "mrow", "mfrac", "annotation", "semantics", "mtext", "script", "style", "a", "img", "div", "svg", "foreignObject", "iframe", "annotation-xml", "none"];
  const attrs = ["display", "mathvariant", "class", "id", "style", "onclick", "onload", "href", "src", "xlink:href", "encoding", "mathcolor"];
  const ns = { html: "http://www.w3.org/1999/xhtml", svg: "http://www.w3.org/2000/svg", math: MATHML };
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const build = (parent, depth) => {
      for (let i = r.int(4); i >= 0; i--) {
        if (depth > 3 || r.chance(0.3)) {
          parent.append(document.createTextNode(r.pick(["x", "+", "<", "&", "2"])));
          continue;
        }
        const el = document.createElementNS(ns[r.pick(["html", "svg", "math", "math"])], r.pick(tags));
        for (let j = r.int(3); j > 0; j--) el.setAttribute(r.pick(attrs), r.pick(["1", "javascript:x()", "alert(1)", "block"]));
        build(el, depth + 1);
        parent.append(el);
      }
    };
    const from = document.createDocumentFragment();
    build(from, 0);
    const m = sanitizeMath(from.childNodes, document);
    if (!m) continue;
    onlyMathML(m);
    // Sanitized once is sanitized.
    assert.equal(sanitizeMath([m], document).outerHTML, m.outerHTML, `seed ${seed}`);
  }
});

function formula(tex, display) {
  const span = document.createElement("span");
  span.dataset.trickleMath = display ? "display" : "inline";
  span.textContent = tex;
  return span;
}

function quietly(fn) {
  const errors = [];
  const orig = console.error;
  console.error = (...args) => errors.push(args.join(" "));
  try {
    fn();
  } finally {
    console.error = orig;
  }
  return errors;
}

test("a converter gets the TeX and the display flag, and its MathML replaces the text once", () => {
  const calls = [];
  const convert = (tex, opts) => {
    calls.push([tex, opts.display]);
    return `<math><mi>${tex}</mi></math>`;
  };
  const a = formula(" x ", false);
  const d = formula("\n\\sum_k\n", true);
  assert.deepEqual(quietly(() => {
    mathWith(convert, a);
    mathWith(convert, d);
    mathWith(convert, a);
  }), []);
  assert.deepEqual(calls, [["x", false], ["\\sum_k", true]]);
  assert.equal(a.innerHTML, '<math alttext="x"><mi>x</mi></math>');
  assert.equal(d.innerHTML, '<math display="block" alttext="\\sum_k"><mi>\\sum_k</mi></math>');
});

test("a converter may return a promise: called once, its MathML placed when it resolves, a rejection keeps the TeX", async () => {
  let calls = 0;
  let resolve;
  const later = () => {
    calls++;
    return new Promise((r) => (resolve = r));
  };
  const s = formula("z", false);
  mathWith(later, s);
  mathWith(later, s);
  assert.equal(calls, 1, "a formula waiting for its MathML is not converted again");
  assert.equal(s.textContent, "z", "the TeX until then");
  resolve("<math><mi>z</mi></math>");
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(s.innerHTML, '<math alttext="z"><mi>z</mi></math>');

  const f = formula("w", false);
  const errors = [];
  const orig = console.error;
  console.error = (...args) => errors.push(args.join(" "));
  try {
    mathWith(() => Promise.reject(new Error("no temml")), f);
    await new Promise((r) => setTimeout(r, 0));
  } finally {
    console.error = orig;
  }
  assert.equal(f.textContent, "w");
  assert.equal(errors.length, 1);
  assert.match(errors[0], /failed; the formula stays TeX/);
});

test("a converter may return a Node", () => {
  const s = formula("y", false);
  mathWith(() => {
    const m = document.createElementNS(MATHML, "math");
    m.innerHTML = "<mi>y</mi>";
    return m;
  }, s);
  assert.equal(s.innerHTML, '<math alttext="y"><mi>y</mi></math>');
});

test("a converter that throws, returns no MathML or the wrong type leaves the TeX, and says so", () => {
  for (const [fn, why] of [
    [() => {
      throw new Error("bad TeX");
    }, "threw"],
    [() => 42, "returned number"],
    [() => "<script>alert(1)</script>", "no MathML"],
  ]) {
    const s = formula("a < b", false);
    const errors = quietly(() => mathWith(fn, s));
    assert.equal(s.innerHTML, "a &lt; b");
    assert.equal(errors.length, 1);
    assert.match(errors[0], new RegExp(why));
  }
});

test("decorate converts the formulas of settled blocks, only with a converter", () => {
  const content = document.createElement("div");
  content.innerHTML = '<p>So <span data-trickle-math="inline">a</span>.</p><ul><li><span data-trickle-math="display">b</span></li></ul>';
  decorate({ content, math: null }, null, null);
  assert.equal(content.querySelectorAll("math").length, 0);
  decorate({ content, math: (tex) => `<math><mi>${tex}</mi></math>` }, null, null);
  assert.equal(content.querySelectorAll("math").length, 2);
  assert.equal(content.querySelector("li math").getAttribute("display"), "block");
});
