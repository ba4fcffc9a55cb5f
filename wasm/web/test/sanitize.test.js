// The highlighter sanitizer (sanitize.js) and its caller (reading.js's
// highlightWith): whatever a page's highlighter returns, only text and
// <span class> reach the answer, and the code's text is kept.

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals, rng } from "./dom.js";

installGlobals();
const { sanitizeSpans } = await import("../sanitize.js");
const { highlightWith } = await import("../reading.js");

const parse = (html) => {
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  return tpl.content;
};

// onlySpans asserts that every element under node is an HTML <span> whose
// only attribute, if any, is class.
function onlySpans(node) {
  for (const el of node.querySelectorAll("*")) {
    assert.equal(el.namespaceURI, "http://www.w3.org/1999/xhtml", el.outerHTML);
    assert.equal(el.localName, "span", el.outerHTML);
    for (const a of el.attributes) assert.equal(a.name, "class", el.outerHTML);
  }
}

const html = (frag) => {
  const d = document.createElement("div");
  d.append(frag);
  return d.innerHTML;
};

test("spans keep their class, and nothing else", () => {
  const out = sanitizeSpans(parse('<span class="k" style="color:red" onclick="x()" id="a">func</span> <span>main</span>'), document);
  assert.equal(html(out), '<span class="k">func</span> <span>main</span>');
});

test("other elements become their text: script, img, a, iframe, style", () => {
  const out = sanitizeSpans(parse('<script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">link</a><iframe srcdoc="<b>x</b>"></iframe><style>*{}</style><b class="k">b</b>'), document);
  onlySpans(out);
  assert.equal(html(out), "alert(1)link*{}b");
});

test("a span in another namespace is not a span", () => {
  const frag = parse('<svg><span class="k" onload="x()">t</span></svg>');
  // The HTML parser takes a <span> out of <svg>; build the foreign one
  // by hand too.
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "span");
  svg.setAttribute("class", "k");
  svg.setAttribute("onload", "x()");
  svg.textContent = "u";
  frag.append(svg);
  const out = sanitizeSpans(frag, document);
  onlySpans(out);
  assert.equal(out.textContent, "tu");
  assert.equal(html(out), '<span class="k">t</span>u');
});

test("a template's content is read, as text and spans", () => {
  const out = sanitizeSpans(parse('<template><span class="s">"x"</span><i>y</i></template>'), document);
  assert.equal(html(out), '<span class="s">"x"</span>y');
});

test("markup-like text stays text", () => {
  const out = sanitizeSpans(parse("a &lt;script&gt; b &amp; c"), document);
  assert.equal(out.textContent, "a <script> b & c");
  assert.equal(out.querySelectorAll("*").length, 0);
});

// Random trees of any elements and attributes: what comes out holds only
// spans with a class, and exactly the text that went in, in order.
test("no element or attribute but span and class survives, and the text does", () => {
  const tags = ["span", "b", "a", "script", "div", "p", "em", "svg", "math", "img", "iframe", "object", "form", "input", "textarea", "table"];
  const attrs = ["class", "id", "style", "onclick", "onerror", "href", "src", "data-x", "CLASS", "xlink:href"];
  const texts = ["if", " (x < y) ", "&", "{", "}", "\u00e9", "'q'", '"d"'];
  // textOf is the text sanitizeSpans must keep: every text node, in
  // document order (template contents included).
  const textOf = (n) => (n.nodeType === 3 ? n.data : [...(n.localName === "template" ? n.content : n).childNodes].map(textOf).join(""));
  for (let seed = 1; seed <= 300; seed++) {
    const r = rng(seed);
    const build = (parent, depth) => {
      for (let i = r.int(4); i >= 0; i--) {
        if (depth > 3 || r.chance(0.4)) {
          parent.append(document.createTextNode(r.pick(texts)));
          continue;
        }
        const tag = r.pick(tags);
        const el = tag === "svg" || tag === "math" ? document.createElementNS(tag === "svg" ? "http://www.w3.org/2000/svg" : "http://www.w3.org/1998/Math/MathML", r.chance(0.5) ? "span" : tag) : document.createElement(tag);
        for (let j = r.int(3); j > 0; j--) el.setAttribute(r.pick(attrs), r.pick(["k", "javascript:x()", "alert(1)"]));
        build(el, depth + 1);
        parent.append(el);
      }
    };
    const from = document.createDocumentFragment();
    build(from, 0);
    const out = sanitizeSpans(from, document);
    onlySpans(out);
    assert.equal(out.textContent, textOf(from), `seed ${seed}`);
    // And it is stable: sanitized once is sanitized.
    assert.equal(html(sanitizeSpans(out, document)), html(out), `seed ${seed}`);
  }
});

function codeBlock(text) {
  const code = document.createElement("code");
  code.textContent = text;
  return code;
}

// console.error is where highlightWith says why a block stays plain.
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

test("a highlighter's spans reach the code block, its other markup does not", () => {
  const code = codeBlock("x := 1");
  const errors = quietly(() => highlightWith((t) => `<span class="n">x</span> <b onclick="y()">:=</b> <span class="m" style="z">1</span>`, code, "go"));
  assert.deepEqual(errors, []);
  assert.equal(code.innerHTML, '<span class="n">x</span> := <span class="m">1</span>');
});

test("a highlighter that changes the text, throws or returns no string leaves the block plain, and says so", () => {
  for (const [fn, why] of [
    [() => "<span>other</span>", "changed the code's text"],
    [() => {
      throw new Error("boom");
    }, "threw"],
    [() => 42, "returned number"],
  ]) {
    const code = codeBlock("a < b");
    const errors = quietly(() => highlightWith(fn, code, "js"));
    assert.equal(code.innerHTML, "a &lt; b");
    assert.equal(errors.length, 1);
    assert.match(errors[0], new RegExp(why));
  }
});
