// The page's words (strings.js): one object for the page
// (TrickleAnswer.strings), one per element (el.strings), English built in;
// the shown words are written into the element's parts at once, the
// others go to Go with the next ask; a mistake in them is a TypeError
// that names it. And what the reader and the developer each get when an
// answer fails (answer.js): one sentence on the page, the chain on the
// console, once.

import { test } from "node:test";
import assert from "node:assert/strict";
import { installGlobals, mount } from "./dom.js";

installGlobals();
const S = await import("../strings.js");
const answerJS = await import("../answer.js");
const { decorate } = await import("../reading.js");

const answer = () => mount(answerJS, { tag: "trickle-answer" });

const summary = (el) => el.querySelector('[data-trickle="thinking"] summary');

test("every key has English, and the English cannot be changed", () => {
  for (const [k, v] of Object.entries(S.ENGLISH)) assert.ok(typeof v === "string" && v.trim() !== "", k);
  assert.ok(Object.isFrozen(S.ENGLISH));
  assert.equal(S.ENGLISH.copy, "Copy");
  assert.equal(S.ENGLISH.complete, "Answer complete.");
});

test("an element's word wins over the page's, the page's over English, and an empty one keeps the built-in", (t) => {
  t.after(() => S.setPageStrings(null));
  const { el } = answer();
  assert.equal(S.wordOf(el, "copy"), "Copy");
  S.setPageStrings({ copy: "Copier", retry: "Réessayer" });
  assert.equal(S.wordOf(el, "copy"), "Copier");
  S.setElementStrings(el, { copy: "Kopieren", retry: "" });
  assert.equal(S.wordOf(el, "copy"), "Kopieren");
  assert.equal(S.wordOf(el, "retry"), "Réessayer", "an empty word falls through");
  assert.equal(S.wordOf(el, "thinking"), "Thinking");
  assert.deepEqual(S.elementStrings(el), { copy: "Kopieren", retry: "" }, "the element's own, as given");
  assert.deepEqual(S.pageStrings(), { copy: "Copier", retry: "Réessayer" });
  const got = S.pageStrings();
  got.copy = "changed";
  assert.equal(S.pageStrings().copy, "Copier", "a copy comes back, not the page's object");
});

test("a mistake in the strings is a TypeError that names it, and changes nothing", (t) => {
  t.after(() => S.setPageStrings(null));
  S.setPageStrings({ copy: "Copier" });
  assert.throws(() => S.setPageStrings({ cpoy: "Copier" }), { name: "TypeError", message: /no key "cpoy" \(the keys: copy, copyCode,/ });
  assert.throws(() => S.setPageStrings({ copy: 3 }), { name: "TypeError", message: /TrickleAnswer\.strings\.copy must be a string, not number/ });
  assert.throws(() => S.setPageStrings("Copier"), { name: "TypeError", message: /must be an object of strings, not string/ });
  assert.throws(() => S.setPageStrings(["Copier"]), { name: "TypeError", message: /not an array/ });
  const { el } = answer();
  assert.throws(() => S.setElementStrings(el, { complete: null }), { name: "TypeError", message: /strings\.complete must be a string/ });
  assert.deepEqual(S.pageStrings(), { copy: "Copier" }, "the last good strings stay");
  assert.deepEqual(S.elementStrings(el), {});
});

test("the shown words are written into the parts at once, on every element for the page's", (t) => {
  t.after(() => S.setPageStrings(null));
  const one = answer();
  const two = answer();
  for (const { el } of [one, two]) S.label(el);
  assert.equal(summary(one.el).textContent, "Thinking");
  assert.equal(one.part("retry").textContent, "Retry");
  assert.equal(one.part("jump").textContent, "Jump to latest");

  S.setPageStrings({ thinking: "Réflexion", retry: "Réessayer", jumpToLatest: "Aller à la fin" });
  for (const { el, part } of [one, two]) {
    assert.equal(summary(el).textContent, "Réflexion");
    assert.equal(part("retry").textContent, "Réessayer");
    assert.equal(part("jump").textContent, "Aller à la fin");
  }
  S.setElementStrings(two.el, { retry: "Nochmal" });
  assert.equal(two.part("retry").textContent, "Nochmal");
  assert.equal(one.part("retry").textContent, "Réessayer", "an element's words are its own");
});

test("the toolbars use the element's words, and a change relabels those already shown", (t) => {
  t.after(() => S.setPageStrings(null));
  const { a, el } = answer();
  S.setElementStrings(el, { copy: "Copier", copyCode: "Copier le code" });
  a.content.innerHTML = '<pre><code class="language-go">x</code></pre><table><tr><td>1</td></tr></table><div data-trickle="tail"></div>';
  decorate(a, null, a.content.lastChild);
  const copy = el.querySelector('[data-trickle="copy"]');
  assert.equal(copy.textContent, "Copier");
  assert.equal(copy.getAttribute("aria-label"), "Copier le code");
  assert.equal(el.querySelector('[data-trickle="copy-table"]').textContent, "Copy table");
  S.setPageStrings({ copyTable: "Copier le tableau" });
  assert.equal(el.querySelector('[data-trickle="copy-table"]').textContent, "Copier le tableau");
  S.setElementStrings(el, null);
  assert.equal(copy.textContent, "Copy", "English again once the element's words are gone");
});

test("an ask carries what the page replaced, and nothing when it replaced nothing", (t) => {
  t.after(() => S.setPageStrings(null));
  globalThis.location ??= { origin: "http://127.0.0.1" };
  const { a, el } = answer();
  el.setAttribute("endpoint", "http://127.0.0.1/api/chat");
  assert.equal(a.request().strings, undefined);
  assert.ok(!("strings" in JSON.parse(JSON.stringify(a.request()))), "no strings on the wire");
  S.setPageStrings({ complete: "Réponse terminée.", copy: "Copier" });
  S.setElementStrings(el, { complete: "Fertig." });
  assert.deepEqual(a.request().strings, { complete: "Fertig.", copy: "Copier" });
});

test("a failed answer shows one sentence and writes the chain to the console, once", (t) => {
  const errors = [];
  t.mock.method(console, "error", (...args) => errors.push(args.join(" ")));
  const { a, el, part } = answer();
  const events = [];
  el.addEventListener("trickle-error", (e) => events.push(e.detail));
  const chain = "stream: transport failed after 0 events: trickle: the server answered HTTP 401: <html><body><h1>401</h1></body></html>";
  const detail = { status: "failed", message: "The server refused the request (401).", reason: "refused", detail: chain, httpStatus: 401 };
  a.apply({ id: a.id, reset: true, p: { a: "", path: [], keep: 0, text: "", html: "" } });
  a.apply({
    id: a.id,
    p: { a: "", path: [], keep: -1, text: "", html: "", final: true },
    end: { status: "failed", notice: detail.message, retry: false, detail: chain },
    ev: [["trickle-error", detail], ["trickle-end", { status: "failed" }]],
  });
  assert.equal(part("notice-text").textContent, "The server refused the request (401).");
  assert.ok(!part("notice").textContent.includes("<"), "no markup reaches the page's text");
  assert.equal(part("retry").hidden, true);
  assert.deepEqual(events, [detail]);
  assert.equal(errors.length, 1, "one console error");
  assert.ok(errors[0].includes(chain), errors[0]);
});

test("a call that could not start says why in trickle-error and on the console", (t) => {
  const errors = [];
  t.mock.method(console, "error", (...args) => errors.push(args.join(" ")));
  const { a, el } = answer();
  const events = [];
  el.addEventListener("trickle-error", (e) => events.push(e.detail));
  a.calls.set(7, () => {});
  a.reject(7, "trickle: Trickle failed to load: no WebAssembly");
  assert.deepEqual(events, [{ status: "failed", message: "trickle: Trickle failed to load: no WebAssembly", reason: "call", detail: "trickle: Trickle failed to load: no WebAssembly" }]);
  assert.equal(errors.length, 1);
});

test("the page's stall words reach the stylesheet's notice, quoted as a CSS string", (t) => {
  t.after(() => S.setPageStrings(null));
  const { el } = answer();
  S.label(el);
  assert.equal(el.style.getPropertyValue("--trickle-stall-text"), "", "the stylesheet's own words by default");
  S.setPageStrings({ stalled: 'On attend "le" modèle\\…' });
  assert.equal(el.style.getPropertyValue("--trickle-stall-text"), '"On attend \\"le\\" modèle\\\\…"');
  S.setElementStrings(el, { stalled: "Warte…" });
  assert.equal(el.style.getPropertyValue("--trickle-stall-text"), '"Warte…"', "the element's words win");
  S.setElementStrings(el, null);
  S.setPageStrings(null);
  assert.equal(el.style.getPropertyValue("--trickle-stall-text"), "", "and go with the strings");
});
