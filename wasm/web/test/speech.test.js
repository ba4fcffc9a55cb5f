// Read aloud (speech.js) with a recorder in place of speechSynthesis: the
// units Go sends with each announcement (speak) become one utterance each,
// in order, as they are confirmed; nothing is spoken without the speak attribute; a new answer
// cancels what was queued; without speechSynthesis nothing happens.

import { readFileSync } from "node:fs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { installGlobals, mount } from "./dom.js";

installGlobals();
const answerJS = await import("../answer.js");
const { speakerOf, speechAvailable } = await import("../speech.js");

const READY = JSON.parse(readFileSync(new URL("../../../wasm/protocol/testdata/ready.json", import.meta.url), "utf8"));

// recorder stands in for the browser's speechSynthesis.
function recorder() {
  const r = { spoken: [], cancels: 0 };
  globalThis.SpeechSynthesisUtterance = class {
    constructor(text) {
      this.text = text;
      this.listeners = {};
    }
    addEventListener(name, fn) {
      this.listeners[name] = fn;
    }
  };
  globalThis.speechSynthesis = {
    speak: (u) => r.spoken.push(u),
    cancel: () => r.cancels++,
    getVoices: () => [{ name: "Daniel" }, { name: "Amélie" }],
  };
  return r;
}

const answer = (attrs = {}) => mount(answerJS, { attrs, minGap: READY.min_gap_ms });

test("each confirmed sentence is one utterance, in order, queued as it arrives", () => {
  const r = recorder();
  const { a } = answer({ speak: "", lang: "en-GB" });
  a.early({ id: a.id, reset: true, say: "<p>Streams arrive in pieces.</p>", speak: ["Streams arrive in pieces."] });
  assert.deepEqual(r.spoken.map((u) => u.text), ["Streams arrive in pieces."], "the first is queued before the rest arrives");
  a.early({ id: a.id, say: "<p>Each piece is parsed.</p><p>Code block.</p>", speak: ["Each piece is parsed.", "Code block."] });
  a.early({ id: a.id, status: "Answer complete." });
  assert.deepEqual(r.spoken.map((u) => u.text), ["Streams arrive in pieces.", "Each piece is parsed.", "Code block."]);
  assert.ok(r.spoken.every((u) => u.lang === "en-GB"), "the element's lang");
});

test("without the speak attribute nothing is spoken; speak() reads what was said so far, then the rest", () => {
  const r = recorder();
  const { a, el } = answer();
  a.early({ id: a.id, reset: true, say: "<p>One.</p><p>Two.</p>", speak: ["One.", "Two."] });
  assert.equal(r.spoken.length, 0);
  el.setAttribute("speak", "");
  speakerOf(el).sayAll();
  a.early({ id: a.id, say: "<p>Three.</p>", speak: ["Three."] });
  assert.deepEqual(r.spoken.map((u) => u.text), ["One.", "Two.", "Three."]);
});

test("a new answer cancels what this element queued, and only then", () => {
  const r = recorder();
  const { a } = answer({ speak: "" });
  a.early({ id: a.id, reset: true });
  assert.equal(r.cancels, 0, "nothing of its own queued: another element's speech is left alone");
  a.early({ id: a.id, say: "<p>Old answer.</p>", speak: ["Old answer."] });
  a.early({ id: a.id, reset: true, say: "<p>New answer.</p>", speak: ["New answer."] });
  assert.equal(r.cancels, 1);
  assert.deepEqual(r.spoken.map((u) => u.text), ["Old answer.", "New answer."]);
  r.spoken[1].listeners.end();
  a.early({ id: a.id, reset: true });
  assert.equal(r.cancels, 1, "an utterance that ended is not pending");
});

test("the page's voice, rate and language", () => {
  const r = recorder();
  const { a, el } = answer({ speak: "" });
  speakerOf(el).options = { voice: "Amélie", rate: 1.5, pitch: 0.8, lang: "fr-FR" };
  a.early({ id: a.id, reset: true, say: "<p>Bonjour.</p>", speak: ["Bonjour."] });
  const [u] = r.spoken;
  assert.equal(u.voice.name, "Amélie");
  assert.equal(u.rate, 1.5);
  assert.equal(u.pitch, 0.8);
  assert.equal(u.lang, "fr-FR");
});

test("without speechSynthesis the attribute does nothing and says so", () => {
  delete globalThis.speechSynthesis;
  delete globalThis.SpeechSynthesisUtterance;
  assert.equal(speechAvailable(), false);
  const { a, el } = answer({ speak: "" });
  a.early({ id: a.id, reset: true, say: "<p>Silent.</p>", speak: ["Silent."] });
  assert.equal(speakerOf(el).state, "unavailable");
  speakerOf(el).cancel();
});
