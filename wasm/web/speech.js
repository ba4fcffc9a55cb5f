// Read aloud. <trickle-answer speak> (or el.speak()) speaks the sentences
// its announcer confirms, the same units a screen reader hears, one
// SpeechSynthesisUtterance each, queued the moment each is confirmed: the
// first is spoken while the rest still streams, and no utterance is long
// enough for Chrome to cut it short (it stops long ones after about 15 s).
// Stop, a new answer and stopSpeaking() cancel what was queued.
//
// speechSynthesis has one queue per page: cancelling it cancels every
// element's speech, so an element cancels only while utterances of its own
// are queued.

import { ATTR_SPEAK } from "./contract.js";

const speakers = new WeakMap();

// speechAvailable reports whether the browser can speak.
export function speechAvailable() {
  return typeof globalThis.speechSynthesis?.speak === "function" && typeof globalThis.SpeechSynthesisUtterance === "function";
}

// speakerOf is el's speaker, made on first use.
export function speakerOf(el) {
  let s = speakers.get(el);
  if (!s) speakers.set(el, (s = new Speaker(el)));
  return s;
}

class Speaker {
  constructor(el) {
    this.el = el;
    /** voice (a SpeechSynthesisVoice or its name), rate, pitch, volume, lang. */
    this.options = {};
    this.pending = new Set(); // this element's utterances not yet ended
    this.heard = []; // the answer's units so far, spoken or not
  }

  get on() {
    return this.el.hasAttribute(ATTR_SPEAK) && speechAvailable();
  }

  // state is what metrics.speech says: on, off, or unavailable (no
  // speechSynthesis: the attribute does nothing).
  get state() {
    if (!speechAvailable()) return "unavailable";
    return this.el.hasAttribute(ATTR_SPEAK) ? "on" : "off";
  }

  // said takes the units the announcer just confirmed.
  said(texts) {
    this.heard.push(...texts);
    if (!this.on) return;
    for (const t of texts) this.#speak(t);
  }

  // reset: a new answer; what was queued goes.
  reset() {
    this.heard = [];
    this.cancel();
  }

  // sayAll speaks the answer's units so far (speak() on an answer under
  // way or ended); the rest follow as they are confirmed.
  sayAll() {
    if (!this.on) return;
    this.cancel();
    for (const t of this.heard) this.#speak(t);
  }

  #speak(text) {
    text = text.trim();
    if (text === "") return;
    const u = new globalThis.SpeechSynthesisUtterance(text);
    const o = this.options ?? {};
    u.lang = o.lang || this.el.closest("[lang]")?.getAttribute("lang") || "";
    if (o.voice) {
      const v = typeof o.voice === "string" ? globalThis.speechSynthesis.getVoices?.().find((x) => x.name === o.voice) : o.voice;
      if (v) u.voice = v;
    }
    for (const k of ["rate", "pitch", "volume"]) if (typeof o[k] === "number") u[k] = o[k];
    const done = () => this.pending.delete(u);
    u.addEventListener?.("end", done);
    u.addEventListener?.("error", done);
    this.pending.add(u);
    globalThis.speechSynthesis.speak(u);
  }

  // cancel drops what this element queued (and, speechSynthesis having one
  // queue, whatever else was queued after it).
  cancel() {
    if (this.pending.size === 0 || !speechAvailable()) return;
    this.pending.clear();
    globalThis.speechSynthesis.cancel();
  }
}
