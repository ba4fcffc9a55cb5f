// Reading aids (reading.js) on newly settled blocks: a code block gets its
// toolbar (language, Copy) and the page's highlighter, a table its Copy
// table button, each once; the settled HTML itself stays as it was.

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals } from "./dom.js";

installGlobals();
const { decorate } = await import("../reading.js");

function settled(html) {
  const content = document.createElement("div");
  content.innerHTML = `${html}<div data-trickle="tail"></div>`;
  return { answer: { content, highlighter: null, srStatus: document.createElement("div") }, tail: content.lastChild };
}

test("a code block gets a toolbar with its language and a Copy button, before it", () => {
  const { answer, tail } = settled('<p>x</p><pre><code class="language-go">fmt.Println(1)\n</code></pre>');
  decorate(answer, null, tail);
  const bar = answer.content.querySelector('[data-trickle="code-toolbar"]');
  assert.equal(bar.nextElementSibling.localName, "pre");
  assert.equal(bar.querySelector('[data-trickle="code-lang"]').textContent, "go");
  const copy = bar.querySelector('[data-trickle="copy"]');
  assert.equal(copy.getAttribute("aria-label"), "Copy code");
  assert.equal(copy.type, "button");
  assert.equal(answer.content.querySelector("code").textContent, "fmt.Println(1)\n", "the code is untouched");
});

test("a table, also inside another block, gets a Copy table button", () => {
  const { answer, tail } = settled("<table><tr><td>1</td></tr></table><blockquote><table><tr><td>2</td></tr></table></blockquote>");
  decorate(answer, null, tail);
  const bars = answer.content.querySelectorAll('[data-trickle="table-toolbar"]');
  assert.equal(bars.length, 2);
  for (const bar of bars) assert.equal(bar.nextElementSibling.localName, "table");
});

test("only the nodes after the given one are decorated, and the tail never", () => {
  const { answer, tail } = settled("<pre><code>old</code></pre>");
  decorate(answer, null, tail);
  const before = tail.previousSibling;
  tail.insertAdjacentHTML("beforebegin", "<pre><code>new</code></pre>");
  tail.innerHTML = "<pre><code>live</code></pre>";
  decorate(answer, before, tail);
  assert.equal(answer.content.querySelectorAll('[data-trickle="code-toolbar"]').length, 2, "one toolbar per settled block, none twice");
  assert.equal(tail.querySelector('[data-trickle="code-toolbar"]'), null);
});

test("the page's highlighter runs on a plain settled block, not on one the widget highlighted", () => {
  const { answer, tail } = settled('<pre><code class="language-js">let a</code></pre><pre><code><span class="k">done</span></code></pre>');
  const seen = [];
  answer.highlighter = (code, lang) => {
    seen.push([code, lang]);
    return `<span class="kw">${code}</span>`;
  };
  decorate(answer, null, tail);
  assert.deepEqual(seen, [["let a", "js"]]);
  assert.equal(answer.content.querySelector("code").innerHTML, '<span class="kw">let a</span>');
});
