// The diagram sanitizer (svg.js) and its caller (reading.js's
// diagramWith): whatever a page's diagram renderer returns, only SVG
// drawing elements and presentation attributes reach the answer, and a
// renderer that fails leaves the code block.

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals, rng } from "./dom.js";

installGlobals();
const { sanitizeSVG } = await import("../svg.js");
const { diagramWith } = await import("../reading.js");

const SVG = "http://www.w3.org/2000/svg";
const parse = (html) => {
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  return tpl.content.childNodes;
};

function onlyDrawing(el) {
  for (const e of [el, ...el.querySelectorAll("*")]) {
    assert.equal(e.namespaceURI, SVG, e.outerHTML);
    assert.doesNotMatch(e.localName, /^(script|style|foreignObject|image|a|animate|set|iframe)$/, e.outerHTML);
    for (const a of e.attributes) {
      assert.doesNotMatch(a.name, /^on/i, e.outerHTML);
      assert.doesNotMatch(a.value, /javascript:|url\(\s*['"]?[^#'"\s]/i, e.outerHTML);
      if (a.name === "href") assert.match(a.value, /^#/, e.outerHTML);
    }
  }
}

test("a diagram keeps its drawing and fragment references, its ids prefixed to match, its classes dropped", () => {
  const svg = sanitizeSVG(parse('<svg viewBox="0 0 10 10" onload="x()" aria-labelledby="t"><title id="t">Flow</title><defs><marker id="arrow" refX="5"><path d="M0,0L5,5"/></marker><linearGradient id="g"><stop offset="0" stop-color="rgb(1, 2, 3)"/></linearGradient></defs><g class="node" transform="translate(1, 2) rotate(3)"><rect width="4" fill="url(#g)" style="stroke: red; stroke-width: 2"/><path marker-end="url(#arrow)"/><text x="1">A &lt; B</text></g><use href="#arrow"/></svg>'), document);
  const p = svg.querySelector("title").id.replace(/t$/, "");
  assert.match(p, /^trickle-d\d+-$/);
  assert.equal(
    svg.outerHTML,
    `<svg viewBox="0 0 10 10" aria-labelledby="${p}t"><title id="${p}t">Flow</title><defs><marker id="${p}arrow" refX="5"><path d="M0,0L5,5"></path></marker><linearGradient id="${p}g"><stop offset="0" stop-color="rgb(1, 2, 3)"></stop></linearGradient></defs><g transform="translate(1, 2) rotate(3)"><rect width="4" fill="url(#${p}g)" style="stroke: red; stroke-width: 2"></rect><path marker-end="url(#${p}arrow)"></path><text x="1">A &lt; B</text></g><use href="#${p}arrow"></use></svg>`,
  );
  const again = sanitizeSVG(parse('<svg><path id="arrow"/></svg>'), document);
  assert.notEqual(again.querySelector("path").id, `${p}arrow`, "each diagram has its own prefix");
});

test("a style can neither fetch, nor place the drawing on the page, nor change the pointer", () => {
  const hostile = [
    "cursor: image-set(url(https://x.example/c.png) 1x)",
    "fill: image-set('https://x.example/f.png' 1x)",
    "stroke: -webkit-image-set(url(//x.example/s.png) 1x)",
    "position: fixed; inset: 0; z-index: 99999",
    "background: url(https://x.example/b.png)",
    "mask: url(https://x.example/m.svg)",
    "fill: var(--x)",
    "fill: red !important",
    "fill: im/**/age-set(x)",
    "font-family: \\69mage-set",
  ];
  for (const st of hostile) {
    const svg = sanitizeSVG(parse(`<svg><rect style="${st}" fill="image-set(url(https://x.example/a.png) 1x)" transform="url(https://x.example)"/></svg>`), document);
    const rect = svg.querySelector("rect");
    assert.equal(rect.getAttribute("fill"), null, st);
    assert.equal(rect.getAttribute("transform"), null, st);
    const kept = rect.getAttribute("style") ?? "";
    assert.doesNotMatch(kept, /image-set|url\(\s*['"]?[^#]|position|inset|z-index|cursor|background|var\(|important|\\/i, st);
  }
  const svg = sanitizeSVG(parse('<svg><rect style="position: fixed; fill: hsl(10, 20%, 30%); opacity: .5; cursor: pointer"/></svg>'), document);
  assert.equal(svg.querySelector("rect").getAttribute("style"), "fill: hsl(10, 20%, 30%); opacity: .5", "drawing properties stay");
});

test("no id of a diagram can name a page's global or element", () => {
  const svg = sanitizeSVG(parse('<svg id="appSettings"><g id="getElementById"><rect id="main"/></g></svg>'), document);
  for (const e of [svg, ...svg.querySelectorAll("*")]) assert.match(e.id, /^trickle-d\d+-/, e.outerHTML);
});

test("scripts, styles, HTML labels, images, links and external references are dropped", () => {
  const svg = sanitizeSVG(parse('<div><svg><script>alert(1)</script><style>body{display:none}</style><foreignObject><div onclick="y()">html</div></foreignObject><image href="https://x.example/i.png"/><a href="javascript:alert(2)"><text>t</text></a><rect fill="url(https://x.example/p)" style="background:url(//x.example)"/><use href="https://x.example/s.svg#a"/><animate attributeName="href" to="javascript:z()"/></svg></div>'), document);
  onlyDrawing(svg);
  assert.equal(svg.outerHTML, "<svg><rect></rect><use></use></svg>");
});

test("no <svg> is null", () => {
  assert.equal(sanitizeSVG(parse("<p>no diagram</p>"), document), null);
  assert.equal(sanitizeSVG([], document), null);
});

test("no element or attribute outside SVG drawing survives random trees", () => {
  const tags = ["svg", "g", "rect", "text", "script", "style", "foreignObject", "a", "image", "use", "div", "animate", "title"];
  const attrs = ["fill", "class", "id", "style", "onclick", "onload", "href", "xlink:href", "d", "marker-end", "src"];
  const values = ["#a", "url(#a)", "url(https://x.example)", "javascript:x()", "red", "1", "@import 'x'"];
  const ns = ["http://www.w3.org/1999/xhtml", SVG, SVG, SVG];
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const build = (parent, depth) => {
      for (let i = r.int(4); i >= 0; i--) {
        if (depth > 3 || r.chance(0.3)) {
          parent.append(document.createTextNode(r.pick(["x", "<", "&"])));
          continue;
        }
        const el = document.createElementNS(r.pick(ns), r.pick(tags));
        for (let j = r.int(3); j > 0; j--) el.setAttribute(r.pick(attrs), r.pick(values));
        build(el, depth + 1);
        parent.append(el);
      }
    };
    const root = document.createElementNS(SVG, "svg");
    build(root, 0);
    const svg = sanitizeSVG([root], document);
    onlyDrawing(svg);
    // Once is enough: a second pass only adds its own prefix to the ids.
    const unprefixed = (html) => html.replace(/trickle-d\d+-/g, "");
    assert.equal(unprefixed(sanitizeSVG([svg], document).outerHTML), unprefixed(svg.outerHTML), `seed ${seed}`);
  }
});

function block(source) {
  const box = document.createElement("div");
  box.innerHTML = '<pre><code class="language-mermaid"></code></pre>';
  box.querySelector("code").textContent = source;
  return box;
}

function quietly(fn) {
  const errors = [];
  const orig = console.error;
  console.error = (...args) => errors.push(args.map(String).join(" "));
  return Promise.resolve()
    .then(fn)
    .finally(() => (console.error = orig))
    .then(() => errors);
}

test("a renderer's SVG, sync or async, is shown before the hidden code block", async () => {
  for (const render of [(lang, src) => `<svg><text>${lang}:${src}</text></svg>`, async (lang, src) => `<svg><text>${lang}:${src}</text></svg>`]) {
    const box = block("graph TD; A-->B");
    const errors = await quietly(async () => {
      diagramWith(render, box.querySelector("pre"), "graph TD; A-->B", "mermaid");
      await new Promise((r) => setTimeout(r, 0));
    });
    assert.deepEqual(errors, []);
    assert.equal(box.querySelector('[data-trickle="diagram"]').innerHTML, "<svg><text>mermaid:graph TD; A--&gt;B</text></svg>");
    assert.equal(box.querySelector("pre").hidden, true);
  }
});

test("a renderer that throws, rejects or returns no SVG leaves the code block, and says so", async () => {
  for (const [render, why] of [
    [() => {
      throw new Error("parse error");
    }, "threw"],
    [() => Promise.reject(new Error("parse error")), "failed"],
    [() => "<p>nope</p>", "no <svg>"],
    [() => 7, "returned number"],
  ]) {
    const box = block("x");
    const errors = await quietly(async () => {
      diagramWith(render, box.querySelector("pre"), "x", "mermaid");
      await new Promise((r) => setTimeout(r, 0));
    });
    assert.equal(box.querySelector('[data-trickle="diagram"]'), null);
    assert.equal(box.querySelector("pre").hidden, false);
    assert.equal(errors.length, 1, why);
    assert.match(errors[0], new RegExp(why));
  }
});
