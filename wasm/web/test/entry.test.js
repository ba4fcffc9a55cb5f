// The loader's entry in a browser-like page (jsdom): it adds the
// stylesheet and defines <trickle-answer>, with the highlighting build
// already registered when the element is defined (elements in the page
// connect at that moment and pick their build).

import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals, window } from "./dom.js";

installGlobals();
globalThis.HTMLElement = window.HTMLElement;
const { builds } = await import("../builds.js");
const defined = [];
globalThis.customElements = {
  get: (name) => defined.find((d) => d.name === name)?.cls,
  define: (name, cls) => defined.push({ name, cls, highlight: builds.highlight }),
};
const loader = await import("../trickle.js");

test("each element is defined once, as the exported class", () => {
  assert.deepEqual(defined.map((d) => d.name), ["trickle-answer", "trickle-chat"]);
  assert.equal(defined[0].cls, loader.TrickleAnswer);
  assert.equal(defined[1].cls, loader.TrickleChat);
  assert.ok(loader.TrickleAnswer.prototype instanceof window.HTMLElement);
  assert.ok(loader.TrickleChat.prototype instanceof window.HTMLElement);
});

test("the highlighting build is registered before the element is defined", () => {
  assert.notEqual(defined[0].highlight, null);
  assert.match(defined[0].highlight.wasm.href, /__TRICKLE_HIGHLIGHT_WASM__$/);
  assert.match(defined[0].highlight.css.href, /__TRICKLE_HIGHLIGHT_CSS__$/);
});

test("the stylesheet is the first thing in <head>, from the loader's text", () => {
  const first = document.head.firstElementChild;
  assert.equal(first.localName, "style");
  assert.equal(first.dataset.trickleCss, "");
  assert.equal(first.textContent, "__TRICKLE_CSS_TEXT__", "the placeholder the build fills");
});
