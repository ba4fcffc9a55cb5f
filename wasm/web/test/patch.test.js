// Tail patching (patch.js): each patch does what render.TailPatch says
// (follow the path, keep the first Keep child nodes, append Text to the
// last kept one, insert HTML at the end), on a real DOM.

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, rng, shape } from "./dom.js";
import { GROUP_BLOCKS, patchAnswer, patchRemoves, patchTail, settle } from "../patch.js";
import { randomPatch } from "./gen.js";

// answer returns a content element holding settled HTML and a tail.
function answer(settled, tailHTML) {
  const content = document.createElement("div");
  content.innerHTML = `${settled}<div data-trickle="tail">${tailHTML}</div>`;
  return { content, tail: content.lastChild };
}

test("keep 0 at the tail replaces all of it", () => {
  const { tail } = answer("", "<p>old</p><ul><li>x</li></ul>");
  patchTail(tail, [], 0, "", "<p>new</p>");
  assert.equal(tail.innerHTML, "<p>new</p>");
});

test("text grows the last kept text node in place, the same node", () => {
  const { tail } = answer("", "<p>Hello <em>big</em> wor</p>");
  const node = tail.firstChild.lastChild;
  patchTail(tail, [0], 3, "ld", "");
  assert.equal(tail.innerHTML, "<p>Hello <em>big</em> world</p>");
  assert.equal(tail.firstChild.lastChild, node, "the text node is extended, not replaced");
  assert.equal(tail.firstChild.childNodes.length, 3);
});

test("trim takes code units off the end of the kept text node, then text goes on, the same node", () => {
  // An open fence: its last line was rendered with a line break until the
  // next token continued it.
  const { tail } = answer("", "<pre><code>let a = 1;\nif (a &lt; \n</code></pre>");
  const node = tail.firstChild.firstChild.firstChild;
  patchTail(tail, [0, 0], 1, "2) {\n", "", 1);
  assert.equal(tail.innerHTML, "<pre><code>let a = 1;\nif (a &lt; 2) {\n</code></pre>");
  assert.equal(tail.firstChild.firstChild.firstChild, node, "the code's text node is continued, not replaced");
  // A paragraph's last word became emphasis; a pair of surrogates is two units.
  const p = answer("", "<p>x \u{1F600} *wor</p>").tail;
  patchTail(p, [0], 1, "\u{1F642} ", "<em>world</em>", 7);
  assert.equal(p.innerHTML, "<p>x \u{1F642} <em>world</em></p>");
});

test("child nodes after the first keep go, then the HTML is added at the end", () => {
  const { tail } = answer("", "<ul><li>a</li><li>b</li><li>c</li></ul>");
  const first = tail.firstChild.firstChild;
  patchTail(tail, [0], 1, "", "<li>B</li>");
  assert.equal(tail.innerHTML, "<ul><li>a</li><li>B</li></ul>");
  assert.equal(tail.firstChild.firstChild, first, "kept children are the same nodes");
});

test("a path follows child nodes, text nodes counted", () => {
  const { tail } = answer("", "<ul><li>a</li>\n<li>b <strong>c</strong></li></ul>");
  // ul → the second li is child 2 (a newline text node sits between).
  patchTail(tail, [0, 2, 1], 1, "d", "");
  assert.equal(tail.innerHTML, "<ul><li>a</li>\n<li>b <strong>cd</strong></li></ul>");
  patchTail(tail, [0, 2], 0, "", "x");
  assert.equal(tail.innerHTML, "<ul><li>a</li>\n<li>x</li></ul>");
});

// flat is the content's HTML without the settled groups' wrappers.
const flat = (content) => [...content.childNodes].map((n) => (n.dataset?.trickle === "settled" ? n.innerHTML : (n.outerHTML ?? n.data))).join("");

test("settled HTML goes into a settled group before the tail; keep -1 leaves the tail alone", () => {
  const { content, tail } = answer("", "<p>live</p>");
  const live = tail.firstChild;
  const placed = patchAnswer(tail, { a: "<p>2</p>\n<h2>3</h2>", path: [], keep: -1, text: "", html: "" });
  assert.equal(content.innerHTML, '<div data-trickle="settled"><p>2</p>\n<h2>3</h2></div><div data-trickle="tail"><p>live</p></div>');
  assert.deepEqual(placed.map((n) => n.outerHTML), ["<p>2</p>", "<h2>3</h2>"], "the blocks that settled are returned");
  assert.equal(tail.firstChild, live);
  patchAnswer(tail, { a: "<p>4</p>", path: [], keep: -1, text: "", html: "" });
  assert.equal(content.firstChild.childElementCount, 3, "the next frame's blocks join the same group");
});

test("the final patch removes the tail", () => {
  const { content, tail } = answer("", "<p>live</p>");
  patchAnswer(tail, { a: "<p>1</p>", path: [], keep: -1, text: "", html: "" });
  patchAnswer(tail, { a: "<p>live</p>", path: [], keep: -1, text: "", html: "", final: true });
  assert.equal(content.innerHTML, '<div data-trickle="settled"><p>1</p><p>live</p></div>');
  assert.equal(tail.isConnected, false);
});

test("a final patch with unwrap keeps the tail's nodes, settled, without the wrapper", () => {
  const { content, tail } = answer("", "<p>live</p><ul><li>x</li></ul>");
  const kept = [...tail.childNodes];
  const placed = patchAnswer(tail, { a: "<p>1</p>", path: [1, 0], keep: 1, text: "y", html: "", final: true, unwrap: true });
  assert.equal(content.innerHTML, '<div data-trickle="settled"><p>1</p><p>live</p><ul><li>xy</li></ul></div>');
  assert.deepEqual([...content.firstChild.childNodes].slice(1), kept, "the same nodes, now settled");
  assert.equal(placed.length, 3);
  assert.equal(tail.isConnected, false);
});

// The groups depend on the blocks alone: however the settled HTML is cut
// into frames (and whatever the page adds beside a block after it
// settled: a code block's toolbar), the answer's DOM is the one-shot's,
// GROUP_BLOCKS blocks a group.
test("settled groups are the same however the blocks fall into frames", () => {
  const blocks = [];
  for (let i = 0; i < GROUP_BLOCKS * 3 + 5; i++) blocks.push(i % 7 === 3 ? `<pre><code>c${i}</code></pre>` : `<p>b${i}</p>`);
  const html = blocks.join("\n") + "\n";
  const one = answer("", "");
  patchAnswer(one.tail, { a: html, path: [], keep: -1, text: "", html: "", final: true });
  assert.equal(one.content.childElementCount, 4);
  assert.equal(flat(one.content), html, "the blocks in order, nothing else");
  for (const g of one.content.children) assert.ok(g.childElementCount <= GROUP_BLOCKS);
  for (let seed = 1; seed <= 60; seed++) {
    const r = rng(seed);
    const { content, tail } = answer("", "");
    let i = 0;
    while (i < blocks.length) {
      const k = Math.min(blocks.length - i, 1 + Math.floor(r.next() * 9));
      const final = i + k === blocks.length;
      const placed = patchAnswer(tail, { a: blocks.slice(i, i + k).join("\n") + "\n", path: [], keep: -1, text: "", html: "", final });
      // The page's toolbars: beside a block, not blocks of the answer.
      for (const n of placed) {
        if (n.tagName !== "PRE") continue;
        const bar = document.createElement("div");
        bar.setAttribute("data-trickle", "code-toolbar");
        n.before(bar);
      }
      i += k;
    }
    for (const bar of content.querySelectorAll('[data-trickle="code-toolbar"]')) bar.remove();
    assert.equal(content.innerHTML, one.content.innerHTML, `seed ${seed}`);
  }
});

test("settle opens a group before the tail when the last one is full", () => {
  const { content, tail } = answer("", "");
  const nodes = [];
  for (let i = 0; i < GROUP_BLOCKS + 1; i++) nodes.push(Object.assign(document.createElement("p"), { textContent: String(i) }));
  assert.equal(settle(tail, nodes).length, GROUP_BLOCKS + 1);
  assert.deepEqual([...content.children].map((c) => [c.dataset.trickle, c.childElementCount]), [["settled", GROUP_BLOCKS], ["settled", 1], ["tail", 0]]);
});

// The patches Go sends are made so that the patched tail is exactly what
// parsing the new tail HTML would give. Stated as a property: a growing
// text, cut anywhere, patched in by text appends, parses to the same
// nodes as the whole.
test("growing a paragraph word by word equals parsing the grown paragraph", () => {
  const words = "Streaming is <em>fast</em> when a frame only adds words and the DOM keeps its nodes".split(" ");
  for (let seed = 1; seed <= 50; seed++) {
    const r = rng(seed);
    const { tail } = answer("", "<p>Start</p>");
    let text = "Start";
    for (let i = 0; i < 20; i++) {
      const w = " " + r.pick(words.filter((x) => !x.includes("<")));
      patchTail(tail, [0], 1, w, "");
      text += w;
    }
    const want = answer("", `<p>${text}</p>`).tail;
    assert.deepEqual(shape(tail), shape(want), `seed ${seed}`);
  }
});

// patchRemoves lets a frame skip asking where the reader's selection is
// (which lays the page out): it must say true for every patch after which
// a node of the tail as it was, or the tail, is out of the document — and
// false for the frames that only add, or it saves nothing.
test("patchRemoves is true for every patch that takes a node of the tail away", () => {
  let adds = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const r = rng(seed);
    const { content, tail } = answer("<p>1</p>", "");
    document.body.append(content);
    for (let i = 0; i < 12 && tail.isConnected; i++) {
      const p = randomPatch(r, tail, { final: i === 11 });
      const before = [tail];
      const walk = document.createTreeWalker(tail);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) before.push(n);
      const says = patchRemoves(tail, p);
      patchAnswer(tail, p);
      // An unwrapped final tail's nodes stay; only the wrapper goes.
      const lost = before.some((n) => !n.isConnected);
      if (lost) assert.ok(says, `seed ${seed} frame ${i}: ${JSON.stringify(p)} took nodes away unannounced`);
      if (!says) adds++;
    }
    content.remove();
  }
  assert.ok(adds > 200, `frames that only add are told apart (${adds})`);
});
