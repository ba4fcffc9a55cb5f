// The reader's selection across frames (selection.js, through
// Answer.apply): a selection in the live tail, or from a settled block
// into it, still selects the same text after the frame that settles its
// block, after the frames that re-render the tail, and after the end.

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals, mount, rng } from "./dom.js";

installGlobals();
const answerJS = await import("../answer.js");
const { holdSelection } = await import("../selection.js");

function answer() {
  const { a, part } = mount(answerJS, { minGap: 0 });
  a.apply({ id: a.id, reset: true, state: "streaming" });
  return { a, content: part("content") };
}

// select selects the characters [from, to) of node's text (to < from: a
// selection made backwards, its anchor after its focus).
function select(node, from, to) {
  const walk = document.createTreeWalker(node, 4);
  const at = (i) => {
    let seen = 0;
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      if (i <= seen + t.data.length) return [t, i - seen];
      seen += t.data.length;
    }
    throw new Error(`no character ${i}`);
  };
  const a = at(from);
  walk.currentNode = node;
  const f = at(to);
  const sel = document.getSelection();
  sel.setBaseAndExtent(a[0], a[1], f[0], f[1]);
  return sel.toString();
}

const frame = (a, p) => a.apply({ id: a.id, p: { a: "", path: [], keep: -1, text: "", html: "", ...p } });

test("a selection in the growing paragraph survives the frame that settles it", () => {
  const { a, content } = answer();
  frame(a, { keep: 0, html: "<p>The first paragraph grows</p>" });
  const tail = content.querySelector('[data-trickle="tail"]');
  const want = select(tail.firstChild, 4, 19);
  assert.equal(want, "first paragraph");
  // The frame that ends the paragraph: it settles (new nodes before the
  // tail) and the tail starts the next block.
  frame(a, { a: "<p>The first paragraph grows and ends.</p>\n", keep: 0, html: "<p>Next</p>" });
  const sel = document.getSelection();
  assert.equal(sel.toString(), want);
  const settled = content.querySelector('[data-trickle="settled"]').firstChild;
  assert.equal(settled.nodeName, "P");
  assert.ok(settled.contains(sel.anchorNode), "the selection is in the settled paragraph now");
  assert.ok(!content.querySelector('[data-trickle="tail"]').contains(sel.focusNode));
});

test("without the widget's help the same frame loses the selection (the test can fail)", () => {
  const { content } = answer();
  const tail = content.querySelector('[data-trickle="tail"]');
  tail.innerHTML = "<p>The first paragraph grows</p>";
  const want = select(tail.firstChild, 4, 19);
  tail.insertAdjacentHTML("beforebegin", "<p>The first paragraph grows and ends.</p>\n");
  tail.innerHTML = "<p>Next</p>";
  assert.notEqual(document.getSelection().toString(), want);
});

test("a selection from a settled block into the tail keeps both ends, backwards too", () => {
  for (const backwards of [false, true]) {
    const { a, content } = answer();
    frame(a, { a: "<h2>Settled head</h2>\n", keep: 0, html: "<ul>\n<li>one</li>\n<li>tw</li>\n</ul>\n" });
    const start = content.querySelector("h2").firstChild; // "Settled head"
    const li = content.querySelector('[data-trickle="tail"] li:last-child').firstChild; // "tw"
    const sel = document.getSelection();
    if (backwards) sel.setBaseAndExtent(li, 2, start, 8);
    else sel.setBaseAndExtent(start, 8, li, 2);
    const want = sel.toString();
    assert.match(want, /^head\s+one\s+tw$/);
    // The list is re-rendered (a loose list now: every item in a <p>), then settles.
    frame(a, { keep: 0, html: "<ul>\n<li>\n<p>one</p>\n</li>\n<li>\n<p>two</p>\n</li>\n</ul>\n" });
    frame(a, { a: "<ul>\n<li>\n<p>one</p>\n</li>\n<li>\n<p>two</p>\n</li>\n</ul>\n", keep: 0, html: "" });
    assert.equal(sel.toString().replace(/\s+/g, " "), want.replace(/\s+/g, " "));
    assert.equal(sel.anchorNode === start, !backwards, "the settled end never moved");
  }
});

test("an emphasis that closes before the selection: the same words stay selected", () => {
  const { a, content } = answer();
  frame(a, { keep: 0, html: "<p>Keep **these words here</p>" });
  const p = content.querySelector('[data-trickle="tail"] p');
  const want = select(p, 13, 18); // "words"
  assert.equal(want, "words");
  frame(a, { keep: 0, html: "<p>Keep <strong>these words here</strong> and more</p>" });
  assert.equal(document.getSelection().toString(), want);
});

test("the final frame, settled HTML or the tail unwrapped, keeps the selection", () => {
  for (const unwrap of [false, true]) {
    const { a, content } = answer();
    frame(a, { keep: 0, html: "<p>Last words of it</p>" });
    const want = select(content.querySelector('[data-trickle="tail"] p'), 5, 10);
    frame(a, unwrap ? { final: true, unwrap: true } : { final: true, a: "<p>Last words of it.</p>" });
    assert.equal(content.querySelector('[data-trickle="tail"]'), null);
    assert.equal(document.getSelection().toString(), want, unwrap ? "unwrapped" : "settled");
  }
});

test("with nothing selected in the answer nothing is held, and a selection elsewhere is left alone", () => {
  const { a, content } = answer();
  frame(a, { keep: 0, html: "<p>Streaming</p>" });
  const tail = content.querySelector('[data-trickle="tail"]');
  document.getSelection().removeAllRanges();
  assert.equal(holdSelection(tail), null);
  const other = document.createElement("p");
  other.textContent = "The page's own text";
  document.body.append(other);
  const want = select(other, 4, 10);
  assert.equal(holdSelection(tail), null);
  frame(a, { a: "<p>Streaming done.</p>", keep: 0, html: "<p>More</p>" });
  assert.equal(document.getSelection().toString(), want);
  assert.equal(document.getSelection().anchorNode.parentNode, other);
  other.remove();
});

// A property over many streams: blocks of random words arrive a few
// characters a frame; each frame either grows the tail's last text node in
// place or re-renders the whole tail, and blocks settle at random. A
// selection made at a random frame over random characters of the tail
// selects the same text after every later frame and at the end.
test("any selection in the tail survives every later frame of a random stream", () => {
  for (let seed = 1; seed <= 60; seed++) {
    const r = rng(seed);
    const words = ["alpha", "beta", "gamma", "delta", "ε", "ζeta", "一二", "x"];
    const blocks = Array.from({ length: 2 + r.int(5) }, () => Array.from({ length: 3 + r.int(12) }, () => r.pick(words)).join(" "));
    const html = (b) => `<p>${b}</p>\n`;
    const { a, content } = answer();
    let settled = 0; // blocks settled
    let shown = ""; // the text of the block the tail is growing
    let want = null;
    const tailHTML = (upTo) => blocks.slice(settled, upTo).map(html).join("") + (shown ? html(shown) : "");
    for (let b = 0; b < blocks.length; b++) {
      for (let i = 0; i < blocks[b].length; ) {
        const n = 1 + r.int(6);
        const add = blocks[b].slice(i, i + n);
        i += n;
        if (shown && r.chance(0.7)) {
          // The last text node grows in place: the tail's last <p>, text child 0.
          const tail = content.querySelector('[data-trickle="tail"]');
          shown += add;
          frame(a, { path: [tail.childNodes.length - 2], keep: 1, text: add });
        } else {
          shown += add;
          let settle = "";
          if (b > settled && r.chance(0.6)) {
            settle = blocks.slice(settled, b).map(html).join("");
            settled = b;
          }
          frame(a, { a: settle, keep: 0, html: tailHTML(b) });
        }
        if (want === null && r.chance(0.15)) {
          const tail = content.querySelector('[data-trickle="tail"]');
          // Up to the growing text's end, not past it: text appended in
          // place lands inside a selection that spans its end (the DOM's
          // rule for a range around the point that grows).
          const len = tail.textContent.length - 1;
          const from = r.int(len + 1);
          const to = r.int(len + 1);
          if (from === to) continue;
          want = select(tail, from, to);
        }
        if (want !== null) assert.equal(document.getSelection().toString(), want, `seed ${seed}, block ${b}`);
      }
      shown = "";
      if (b + 1 < blocks.length) frame(a, { keep: 0, html: tailHTML(b + 1) });
    }
    frame(a, { final: true, a: tailHTML(blocks.length) });
    assert.equal(content.textContent, blocks.map((b) => `${b}\n`).join(""));
    if (want !== null) assert.equal(document.getSelection().toString(), want, `seed ${seed}, at the end`);
  }
});

// A frame that patches several answers asks the page where its selection
// is once, not once per answer (each ask after another answer's writes
// is a forced layout in a browser), and a selection in any one of them
// still survives the frame that settles its block.
test("ten answers patched in one frame ask for the selection once, and the selected one keeps it", () => {
  const answers = Array.from({ length: 10 }, () => answer());
  for (const [i, { a }] of answers.entries()) frame(a, { keep: 0, html: `<p>Answer ${i} grows here</p>` });
  const getSelection = document.getSelection.bind(document);
  let asked = 0;
  document.getSelection = () => {
    asked++;
    return getSelection();
  };
  try {
    // Nothing selected: one ask for the whole frame.
    document.getSelection().removeAllRanges();
    asked = 0;
    let shared = {};
    for (const [i, { a }] of answers.entries()) {
      a.apply({ id: a.id, p: { a: `<p>Answer ${i} grows here and ends.</p>\n`, path: [], keep: 0, text: "", html: "<p>Next</p>" } }, shared);
    }
    assert.equal(asked, 1, "the selection asked once for ten answers");

    // The fourth answer's growing paragraph selected: held and put back
    // through the frame that settles it; still one look for the others.
    for (const [i, { a }] of answers.entries()) frame(a, { keep: 0, html: `<p>Second ${i} paragraph grows</p>` });
    const tail = answers[3].content.querySelector('[data-trickle="tail"]');
    const want = select(tail.firstChild, 9, 18);
    assert.equal(want, "paragraph");
    asked = 0;
    shared = {};
    for (const [i, { a }] of answers.entries()) {
      a.apply({ id: a.id, p: { a: `<p>Second ${i} paragraph grows on.</p>\n`, path: [], keep: 0, text: "", html: "<p>Third</p>" } }, shared);
    }
    assert.equal(getSelection().toString(), want, "the selection survived");
    const settled = [...answers[3].content.querySelectorAll('[data-trickle="settled"]')];
    assert.ok(settled.some((s) => s.contains(getSelection().anchorNode)), "in the settled paragraph now");
    assert.ok(asked <= 3, `one look for the frame, then the holding answer's own (${asked})`);
  } finally {
    document.getSelection = getSelection;
  }
});
