// A DOM for the tests (jsdom, pinned in ../package.json), and the page
// globals the modules under test use. Each test file runs in its own
// process (node --test), so installing globals here touches no other file.

import { JSDOM } from "jsdom";

export const dom = new JSDOM("<!doctype html><html><head></head><body></body></html>");
export const { window } = dom;
export const { document } = window;

// installGlobals makes the modules' bare `document`, `CustomEvent` and
// animation frames those of the test DOM.
export function installGlobals() {
  globalThis.document = document;
  globalThis.CustomEvent = window.CustomEvent;
  globalThis.requestAnimationFrame ??= (fn) => setTimeout(() => fn(performance.now()), 0);
}

// mount makes an element with the widget's parts (attributes attrs, tag
// name tag) in the body, and an Answer on it whose host records the
// commands it sends. answer is answer.js's module, imported after
// installGlobals.
export function mount({ Answer, ensureParts }, { tag = "div", attrs = {}, minGap } = {}) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  ensureParts(el);
  document.body.append(el);
  const sent = [];
  const a = new Answer({ els: new Map(), send: (cmd) => sent.push(cmd), minGap }, el);
  return { a, el, sent, part: (name) => el.querySelector(`[data-trickle="${name}"]`) };
}

// shape describes a node and its descendants exactly: element names,
// attributes and every text node on its own, so two trees that serialize
// alike but split their text differently (which a later tail patch,
// counting child nodes, would see) differ.
export function shape(node) {
  if (node.nodeType === 3) return { text: node.data };
  if (node.nodeType === 8) return { comment: node.data };
  const attrs = node.attributes ? [...node.attributes].map((a) => [a.name, a.value]).sort() : [];
  return { name: node.nodeName, attrs, kids: [...node.childNodes].map(shape) };
}

// rng is a small seeded generator (mulberry32): a failing case of a
// property test prints its seed and repeats.
export function rng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
  };
}
