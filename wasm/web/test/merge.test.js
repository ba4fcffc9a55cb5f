// Frame merging (merge.js) against its consumer: applying the merged
// updates to an element's real Answer gives the same DOM, text, state and
// events, in the same order, as applying every frame one by one.

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals, rng, shape } from "./dom.js";
import { answerStream, randomPatch } from "./gen.js";

installGlobals();
const { mergePatch, mergeUpdate, mergeUpdates } = await import("../merge.js");
const { patchAnswer } = await import("../patch.js");
const { Answer, ensureParts } = await import("../answer.js");

// answer builds a real Answer on a detached element, with a host that
// only keeps what is sent; it records every event the element dispatches
// and every call it resolves.
function answer(calls) {
  const el = document.createElement("div");
  ensureParts(el);
  const host = { els: new Map(), send() {} };
  const a = new Answer(host, el);
  const log = [];
  for (const name of ["trickle-start", "trickle-end", "trickle-stall"]) el.addEventListener(name, (e) => log.push([name, e.detail]));
  for (let n = 1; n <= calls; n++) a.calls.set(n, (status) => log.push(["resolved", n, status]));
  return { a, el, log };
}

// run generates frames for three elements and returns them with the
// number of calls each element made.
function run(seed, nFrames) {
  const r = rng(seed);
  const streams = [1, 2, 3].map((id) => answerStream(r, document, id));
  const frames = [];
  for (let f = 0; f < nFrames; f++) {
    const frame = [];
    for (const s of streams) {
      if (!r.chance(0.7)) continue;
      const u = s.next();
      if (u) frame.push(u);
    }
    // Go lists the elements of a frame in any order.
    if (r.chance(0.5)) frame.reverse();
    if (frame.length > 0) frames.push(frame);
  }
  return { frames, calls: streams.map((s) => s.calls()) };
}

function outcome({ a, el, log }) {
  // Thinking is only ever appended to as text (never patched by child
  // index), so how its text is split into nodes is no difference.
  a.thinkingText.normalize();
  return { dom: shape(el), text: a.text, state: a.state, streamId: a.streamId, metrics: a.metrics, log };
}

test("merged frames leave every element as the frames one by one do", () => {
  for (let seed = 1; seed <= 300; seed++) {
    const { frames, calls } = run(seed, 2 + (seed % 12));
    const one = calls.map((n) => answer(n));
    const merged = calls.map((n) => answer(n));
    for (const frame of frames) for (const u of frame) one[u.id - 1].a.apply(u);
    for (const u of mergeUpdates(frames)) merged[u.id - 1].a.apply(u);
    for (let i = 0; i < 3; i++) assert.deepEqual(outcome(merged[i]), outcome(one[i]), `seed ${seed}, element ${i + 1}`);
  }
});

test("a backlog of streaming frames is one update per element", () => {
  const tail = () => {
    const c = document.createElement("div");
    c.innerHTML = '<div data-trickle="tail"><p>a</p></div>';
    return c.firstElementChild;
  };
  const frames = [];
  for (let i = 0; i < 10; i++) {
    frames.push([
      { id: 1, p: { a: "", path: [0], keep: 1, text: `${i} `, html: "" }, text: `${i} ` },
      { id: 2, thinking: "hm ", text: "x" },
    ]);
  }
  const out = mergeUpdates(frames);
  assert.equal(out.length, 2);
  assert.equal(out[0].text, "0 1 2 3 4 5 6 7 8 9 ");
  assert.equal(out[0].p.text, "0 1 2 3 4 5 6 7 8 9 ");
  assert.equal(out[1].thinking, "hm ".repeat(10));
  const t = tail();
  patchAnswer(t, out[0].p);
  assert.equal(t.innerHTML, "<p>a0 1 2 3 4 5 6 7 8 9 </p>");
});

test("one frame is applied as it came", () => {
  const frame = [{ id: 1, text: "a" }, { id: 1, text: "b" }];
  assert.equal(mergeUpdates([frame]), frame);
});

test("an element's updates keep their order around one that cannot merge", () => {
  const frames = [[{ id: 1, text: "a" }], [{ id: 1, text: "b", end: { status: "done" } }], [{ id: 1, text: "c" }], [{ id: 1, text: "d" }]];
  const out = mergeUpdates(frames);
  // a folds into the ending update; c and d come after it, folded.
  assert.deepEqual(
    out.map((u) => [u.text, !!u.end]),
    [
      ["ab", true],
      ["cd", false],
    ],
  );
});

test("nothing folds into an update that ends, dispatches, settles a call or removes", () => {
  for (const a of [{ end: { status: "done" } }, { ev: [["trickle-start", {}]] }, { resolve: "done", n: 1 }, { gone: true }]) {
    assert.equal(mergeUpdate({ id: 1, ...a }, { id: 1, text: "x" }), null, JSON.stringify(a));
  }
});

test("an update that starts a new answer folds into nothing", () => {
  assert.equal(mergeUpdate({ id: 1, text: "x" }, { id: 1, reset: true, text: "y" }), null);
});

test("a folded update keeps the first's reset and the earliest arrival", () => {
  const m = mergeUpdate({ id: 1, reset: true, arr: 20, state: "streaming" }, { id: 1, arr: 10, shown: "Streaming" });
  assert.equal(m.reset, true);
  assert.equal(m.arr, 10);
  assert.equal(m.shown, "Streaming");
  assert.equal("p" in m, false, "no patch when neither had one");
});

test("later values win: status line, state, stream id, tools", () => {
  const m = mergeUpdate({ id: 1, shown: "a", state: "streaming", sid: "1", tools: "<p>1</p>" }, { id: 1, shown: "b", sid: "2", tools: "" });
  assert.deepEqual([m.shown, m.state, m.sid, m.tools], ["b", "streaming", "2", ""]);
});

// mergePatch's own contract, on random valid patches: when it folds two,
// the fold does to the DOM what the two do one after the other.
test("a folded patch does what its two patches do in turn", () => {
  let folded = 0;
  for (let seed = 1; seed <= 1000; seed++) {
    const r = rng(seed);
    const start = document.createElement("div");
    start.innerHTML = `<p>Before.</p><div data-trickle="tail">${r.pick(["<p>a b</p>", "<ul><li>x</li><li>y <em>z</em></li></ul>", "<pre><code>c</code></pre>", ""])}</div>`;
    const two = start.cloneNode(true);
    const pa = randomPatch(r, two.lastChild);
    patchAnswer(two.lastChild, pa);
    const pb = randomPatch(r, two.lastChild, { final: r.chance(0.2) });
    patchAnswer(two.lastChild, pb);
    const m = mergePatch(pa, pb);
    if (!m) continue;
    folded++;
    const one = start.cloneNode(true);
    patchAnswer(one.lastChild, m);
    assert.deepEqual(shape(one), shape(two), `seed ${seed}: ${JSON.stringify([pa, pb, m])}`);
  }
  assert.ok(folded > 250, `only ${folded} of 1000 pairs folded: the generator no longer tests much`);
});

test("text appended at one node twice folds into one append", () => {
  const a = { a: "<p>1</p>", path: [0], keep: 1, text: "ab", html: "" };
  const b = { a: "<p>2</p>", path: [0], keep: 1, text: "cd", html: "<em>e</em>" };
  assert.deepEqual(mergePatch(a, b), { a: "<p>1</p><p>2</p>", path: [0], keep: 1, text: "abcd", html: "<em>e</em>" });
});

test("a trim folds into the text appended before it, and past it into the node", () => {
  const a = { a: "", path: [0, 0], keep: 1, text: "if (a < \n", html: "", trim: 1 };
  assert.deepEqual(mergePatch(a, { a: "", path: [0, 0], keep: 1, text: "2) {\n", html: "", trim: 1 }), { a: "", path: [0, 0], keep: 1, text: "if (a < 2) {\n", html: "", trim: 1 });
  assert.deepEqual(mergePatch(a, { a: "", path: [0, 0], keep: 1, text: "z", html: "", trim: 12 }), { a: "", path: [0, 0], keep: 1, text: "z", html: "", trim: 4 });
  const plain = { a: "", path: [0], keep: 1, text: "ab", html: "" };
  assert.deepEqual(mergePatch(plain, { a: "", path: [0], keep: 1, text: "", html: "<em>b</em>", trim: 1 }), { a: "", path: [0], keep: 1, text: "a", html: "<em>b</em>" });
  assert.deepEqual(mergePatch(a, { a: "<p>s</p>", path: [], keep: -1, text: "", html: "" }), { ...a, a: "<p>s</p>" }, "a's trim stands when b left the tail alone");
});

test("a replacement of an ancestor folds over what the first patch did below it", () => {
  const a = { a: "", path: [0, 1], keep: 2, text: "x", html: "" };
  const b = { a: "", path: [0], keep: 0, text: "", html: "<li>new</li>" };
  assert.deepEqual(mergePatch(a, b), { a: "", path: [0], keep: 0, text: "", html: "<li>new</li>" });
});

test("patches that touch different nodes, or append HTML then text, do not fold", () => {
  assert.equal(mergePatch({ a: "", path: [0], keep: 1, text: "x", html: "" }, { a: "", path: [1], keep: 1, text: "y", html: "" }), null);
  assert.equal(mergePatch({ a: "", path: [0], keep: 1, text: "", html: "<em>e</em>" }, { a: "", path: [0], keep: 1, text: "y", html: "" }), null);
  assert.equal(mergePatch({ a: "", path: [0], keep: 0, text: "", html: "<p>x</p>" }, { a: "", path: [0, 0], keep: 0, text: "", html: "y" }), null);
});

test("nothing folds after a final patch; an untouched tail takes the other's patch", () => {
  assert.equal(mergePatch({ a: "", path: [], keep: -1, text: "", html: "", final: true }, { a: "<p>x</p>", path: [], keep: -1, text: "", html: "" }), null);
  const a = { a: "<p>1</p>", path: [0], keep: 1, text: "x", html: "" };
  const b = { a: "<p>2</p>", path: [], keep: -1, text: "", html: "", final: true, unwrap: true };
  assert.deepEqual(mergePatch(a, b), { a: "<p>1</p><p>2</p>", path: [0], keep: 1, text: "x", html: "", final: true, unwrap: true });
  assert.deepEqual(mergePatch({ a: "", path: [], keep: -1, text: "", html: "" }, { a: "", path: [1], keep: 0, text: "", html: "z" }), { a: "", path: [1], keep: 0, text: "", html: "z" });
});
