// How an answer is heard (notify.js through answer.js): with ariaNotify
// (a fake on the element's prototype, or on the document) every sentence
// and status the live regions would have said is notified once, in order,
// with the status after the sentence before it, and the regions are no
// longer live; without it the live regions speak as before and nothing is
// notified.

import { readFileSync } from "node:fs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { installGlobals, mount, window, document } from "./dom.js";

installGlobals();
const answerJS = await import("../answer.js");

const READY = JSON.parse(readFileSync(new URL("../../../wasm/protocol/testdata/ready.json", import.meta.url), "utf8"));
const MIN_GAP_MS = READY.min_gap_ms;

// withNotify mounts an answer while target (the Element prototype or the
// document) has a recording ariaNotify, and returns it with the record.
function withNotify(t, target) {
  const heard = [];
  t.after(() => delete target.ariaNotify);
  target.ariaNotify = function (text, options) {
    heard.push({ text, on: this === document ? "document" : this.tagName.toLowerCase(), options });
  };
  return { ...mount(answerJS, { tag: "trickle-answer", minGap: MIN_GAP_MS }), heard };
}

const settle = () => new Promise((r) => setTimeout(r, MIN_GAP_MS + 50));

for (const [name, target, on] of [
  ["the element's ariaNotify", window.Element.prototype, "trickle-answer"],
  ["the document's ariaNotify, where the element has none", document, "document"],
]) {
  test(`${name}: each sentence and status once, in order, and the regions are not live`, async (t) => {
    const { a, part, heard } = withNotify(t, target);
    assert.equal(part("announcer").getAttribute("role"), null, "not live: ariaNotify speaks");
    assert.equal(part("announcer").getAttribute("aria-live"), null);
    assert.equal(part("sr-status").getAttribute("role"), null);
    a.early({ id: a.id, reset: true, status: "Assistant is responding." });
    a.early({ id: a.id, say: "<p>One &amp; two.</p><p>Three.</p>" });
    a.early({ id: a.id, say: "<p>Four.</p>" });
    a.early({ id: a.id, status: "Answer complete." });
    await settle();
    assert.deepEqual(
      heard.map((h) => h.text),
      ["Assistant is responding.", "One & two.", "Three.", "Four.", "Answer complete."],
    );
    assert.ok(heard.every((h) => h.on === on));
    // The record the page and the tests read is what was heard.
    assert.deepEqual([...part("announcer").children].map((p) => p.textContent), ["One & two.", "Three.", "Four."]);
    assert.equal(part("sr-status").textContent, "Answer complete.");
    // A new answer starts a new record; nothing said before is said again.
    a.early({ id: a.id, reset: true });
    a.early({ id: a.id, say: "<p>Again.</p>" });
    assert.deepEqual(heard.slice(5).map((h) => h.text), ["Again."]);
  });
}

test("ariaNotify: the status waits the minimum gap after the sentence before it, as the region's did", async (t) => {
  const { a, heard } = withNotify(t, window.Element.prototype);
  const at = [];
  const record = a.notify;
  a.notify = (t) => {
    at.push(performance.now());
    record(t);
  };
  a.early({ id: a.id, reset: true, say: "<p>The answer is 42.</p>" });
  a.early({ id: a.id, status: "Answer complete." });
  assert.deepEqual(heard.map((h) => h.text), ["The answer is 42."], "not yet");
  await settle();
  assert.deepEqual(heard.map((h) => h.text), ["The answer is 42.", "Answer complete."]);
  assert.ok(at[1] - at[0] >= MIN_GAP_MS - 1, `${at[1] - at[0]} ms apart`);
});

test("without ariaNotify the live regions speak and nothing is notified", async () => {
  const { a, part } = mount(answerJS, { tag: "trickle-answer", minGap: MIN_GAP_MS });
  assert.equal(a.notify, null);
  assert.equal(part("announcer").getAttribute("role"), "log");
  assert.equal(part("announcer").getAttribute("aria-live"), "polite");
  assert.equal(part("sr-status").getAttribute("role"), "status");
  a.early({ id: a.id, reset: true, say: "<p>One.</p>" });
  a.early({ id: a.id, status: "Answer complete." });
  await settle();
  assert.equal(part("announcer").textContent, "One.");
  assert.equal(part("sr-status").textContent, "Answer complete.");
});

test("ChromeOS, whose ariaNotify speaks nothing, keeps the live regions", (t) => {
  const ua = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(window.navigator), "userAgent");
  Object.defineProperty(window.navigator, "userAgent", { value: "Mozilla/5.0 (X11; CrOS x86_64 16181.61.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36", configurable: true });
  t.after(() => delete window.navigator.userAgent);
  const { a, part, heard } = withNotify(t, window.Element.prototype);
  assert.equal(a.notify, null);
  assert.equal(part("announcer").getAttribute("role"), "log");
  a.early({ id: a.id, reset: true, say: "<p>One.</p>" });
  assert.deepEqual(heard, []);
  assert.ok(ua, "the user agent is the prototype's again after");
});
