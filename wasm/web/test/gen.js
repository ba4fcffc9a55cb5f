// Random but valid frames for the property tests: answer patches that fit
// the tail as it is (paths to elements that exist, keep within the child
// count, text and trims only on a text node), and element updates around them.

import { patchAnswer } from "../patch.js";

const WORDS = ["one ", "two", " three", "é ", "<&> ", "\u{1F600}"];
const FRAGMENTS = [
  "word",
  " and <em>more</em>",
  "<strong>bold</strong> text",
  "<code>x &lt; y</code>",
  "<ul><li>a</li><li>b <em>c</em></li></ul>",
  "<p>para</p>",
  "<table><tbody><tr><td>1</td><td>2</td></tr></tbody></table>",
  "",
];
const SETTLED = ["<p>Settled.</p>", "<h2>Title</h2>", "<ul><li>x</li></ul>", "<blockquote><p>q</p></blockquote>"];

// randomPatch returns an answer patch (patchAnswer) valid for tail now.
export function randomPatch(r, tail, { final = false } = {}) {
  const p = { a: r.chance(0.3) ? r.pick(SETTLED) : "", path: [], keep: -1, text: "", html: "" };
  if (final) {
    p.final = true;
    if (r.chance(0.5)) p.unwrap = true;
  }
  if (r.chance(0.15)) return p; // the tail did not change
  let el = tail;
  for (;;) {
    const kids = [...el.childNodes].map((n, i) => [n, i]).filter(([n]) => n.nodeType === 1);
    if (kids.length === 0 || r.chance(0.35)) break;
    const [n, i] = r.pick(kids);
    el = n;
    p.path.push(i);
  }
  p.keep = r.int(el.childNodes.length + 1);
  if (p.keep === 0) {
    p.html = r.pick(FRAGMENTS);
  } else {
    const last = el.childNodes[p.keep - 1];
    if (last.nodeType === 3 && r.chance(0.7)) p.text = r.pick(WORDS);
    if (last.nodeType === 3 && r.chance(0.4)) {
      // Trim whole code points, as Go does (render.TailPatch.Trim).
      let trim = r.int(last.length + 1);
      const low = last.data.charCodeAt(last.length - trim);
      if (trim > 0 && trim < last.length && low >= 0xdc00 && low <= 0xdfff) trim++;
      if (trim > 0) p.trim = trim;
    }
    if (r.chance(0.5)) p.html = r.pick(FRAGMENTS);
  }
  return p;
}

// answerStream generates the updates of one element over a run of frames,
// tracking its answer's DOM (in a content element of its own) so that each
// patch fits: next() is its next update, or null once it is gone.
export function answerStream(r, doc, id) {
  const content = doc.createElement("div");
  let tail = null;
  let calls = 0;
  let call = 0;
  let gone = false;
  const reset = () => {
    content.innerHTML = '<div data-trickle="tail"></div>';
    tail = content.firstElementChild;
    call = ++calls;
  };
  const patch = (opts) => {
    const p = randomPatch(r, tail, opts);
    patchAnswer(tail, p);
    if (p.final) tail = null;
    return p;
  };
  return {
    calls: () => calls,
    next() {
      if (gone) return null;
      if (!tail) {
        // No answer streams: start one, or go.
        if (calls > 0 && r.chance(0.2)) {
          gone = true;
          return { id, gone: true };
        }
        reset();
        return { id, reset: true, state: "streaming", ev: [["trickle-start", { n: call }]], p: patch() };
      }
      const roll = r.next();
      if (roll < 0.1) {
        const status = r.pick(["done", "stopped", "failed"]);
        return { id, p: patch({ final: true }), state: status, end: { status }, ev: [["trickle-end", { status }]], resolve: status, n: call, m: { tokens: call } };
      }
      if (roll < 0.15) return { id, ev: [["trickle-stall", { n: call }]], stalled: true };
      const u = { id, arr: 1000 + r.int(1000) };
      if (r.chance(0.8)) u.p = patch();
      if (r.chance(0.6)) u.text = r.pick(WORDS);
      if (r.chance(0.2)) u.thinking = r.pick(WORDS);
      if (r.chance(0.1)) u.tools = r.chance(0.5) ? "<p>tool</p>" : "";
      if (r.chance(0.2)) u.shown = r.pick(["Streaming", "Waiting"]);
      if (r.chance(0.1)) u.sid = `s${call}`;
      if (r.chance(0.1)) u.stalled = false;
      return u;
    },
  };
}
