// The custom element class, TrickleAnswer, without defining it (the
// entries do, in a browser). Importing this module never touches the
// page: on a server (no HTMLElement) the class extends an empty class and
// is never instantiated.

import { Answer, ensureParts } from "./answer.js";
import { ATTR_HIGHLIGHT, ATTR_IDLE_TIMEOUT, ATTR_SPEAK, KIND_ASK, KIND_DETACH, KIND_RETRY, KIND_SHOW, KIND_STOP, KIND_STREAM } from "./contract.js";
import { builds } from "./builds.js";
import { hostFor } from "./host.js";
import { speakerOf } from "./speech.js";
import { elementStrings, label, pageStrings, setElementStrings, setPageStrings } from "./strings.js";
import { addHighlightStylesheet, followScheme } from "./style.js";

const Base = typeof HTMLElement === "function" ? HTMLElement : class {};

export class TrickleAnswer extends Base {
  #answer = null;
  #headers = {};

  connectedCallback() {
    if (this.hasAttribute(ATTR_HIGHLIGHT)) addHighlightStylesheet();
    // A chat says so of its answers beforehand (composer.js): asking the
    // page's style would recalculate it for each turn of a long thread.
    if (this.dataset.trickleScheme !== "inherit") followScheme(this);
    ensureParts(this);
    label(this);
    this.#attach();
  }

  disconnectedCallback() {
    // Moving the element reconnects it in the same task; only a real
    // removal releases it (its answer stops, its call settles).
    queueMicrotask(() => {
      if (this.isConnected || !this.#answer) return;
      const a = this.#answer;
      this.#answer = null;
      speakerOf(this).cancel();
      a.host.send({ t: KIND_DETACH, id: a.id });
    });
  }

  #attach() {
    if (!this.#answer) {
      ensureParts(this);
      this.#answer = new Answer(hostFor(this.hasAttribute(ATTR_HIGHLIGHT)), this);
    }
    return this.#answer;
  }

  // #attachFor is #attach for a new answer: an element that has the
  // highlight attribute now but is served by the default build moves to
  // the highlighting build's Host (its answer in progress, if any, stops
  // as a new ask would stop it). Without a highlighting build it stays.
  #attachFor() {
    const a = this.#attach();
    if (!this.hasAttribute(ATTR_HIGHLIGHT) || a.host.highlights || !builds.highlight) return a;
    addHighlightStylesheet();
    a.retire();
    const b = new Answer(hostFor(true), this);
    b.highlighter = a.highlighter;
    b.math = a.math;
    b.diagram = a.diagram;
    b.diagramLanguages = a.diagramLanguages;
    this.#answer = b;
    return b;
  }

  /** Starts an answer to a prompt (string) or a request body (object);
   *  resolves with the final status. */
  ask(promptOrBody) {
    const a = this.#attachFor();
    let cmd;
    try {
      cmd = { t: KIND_ASK, ...a.request() };
      if (typeof promptOrBody === "string") cmd.prompt = promptOrBody;
      else if (typeof promptOrBody === "object") cmd.body = JSON.parse(JSON.stringify(promptOrBody));
      else cmd.type = typeof promptOrBody;
    } catch (err) {
      return this.#fail(a, err);
    }
    return a.call(cmd);
  }

  /** Streams the response of an arbitrary fetch(url, init); resolves with
   *  the final status. */
  stream(url, init = {}) {
    const a = this.#attachFor();
    let cmd;
    let req;
    try {
      cmd = { t: KIND_STREAM, ...a.request(), url: new URL(String(url), document.baseURI).href };
      req = { ...(init ?? {}) };
      if (req.headers instanceof Headers) req.headers = [...req.headers.entries()];
      if (req.signal) {
        req.signal.addEventListener("abort", () => this.stop(), { once: true });
        delete req.signal;
      }
      // The init crosses to Go's thread as a structured clone: fail here,
      // where the page can see it, if it cannot.
      structuredClone(req);
    } catch (err) {
      return this.#fail(a, err);
    }
    return a.call(cmd, req);
  }

  #fail(a, err) {
    const n = a.host.newCall();
    const p = new Promise((resolve) => a.calls.set(n, resolve));
    a.reject(n, `trickle: ${err?.message ?? err}`);
    return p;
  }

  /** Stops the answer: aborts the request and asks the relay to cancel;
   *  what was queued to be read aloud is dropped. */
  stop() {
    speakerOf(this).cancel();
    const a = this.#answer;
    if (a) a.host.send({ t: KIND_STOP, id: a.id });
  }

  /** Asks again with the last request. */
  retry() {
    return this.#attach().call({ t: KIND_RETRY });
  }

  get status() {
    return this.#answer ? this.#answer.state : "idle";
  }

  /** The answer's markdown so far, in step with what is on screen. */
  get text() {
    return this.#answer ? this.#answer.text : "";
  }

  /** The relay's id for the current answer's stream ("" when the endpoint
   *  is not a Trickle relay). */
  get streamId() {
    return this.#answer ? this.#answer.streamId : "";
  }

  /** What the widget measured about the answer; thread says where its Go
   *  side runs ("worker" or "main"). */
  get metrics() {
    const m = this.#answer?.metrics;
    return m ? { ...m, speech: speakerOf(this).state } : null;
  }

  /** Reads the answer aloud (sets the speak attribute): the sentences
   *  said so far, then each one as it is confirmed. */
  speak() {
    this.setAttribute(ATTR_SPEAK, "");
    speakerOf(this).sayAll();
  }

  /** Stops reading aloud (removes the speak attribute). */
  stopSpeaking() {
    this.removeAttribute(ATTR_SPEAK);
    speakerOf(this).cancel();
  }

  /** How the answer is read aloud: { voice (a SpeechSynthesisVoice or its
   *  name), rate, pitch, volume, lang (the element's lang by default) }. */
  get speech() {
    return { ...speakerOf(this).options };
  }

  set speech(o) {
    speakerOf(this).options = { ...(o ?? {}) };
  }

  // message is the ended answer as an assistant message (a copy: the page
  // may keep it in its history and change it). Setting it shows a stored
  // answer at once: the same HTML as if it had streamed, with its stored
  // status, and no request, no announcement and no event.
  get message() {
    const m = this.#answer?.message;
    return m ? structuredClone(m) : null;
  }

  set message(m) {
    if (typeof m !== "object" || m === null || typeof m.content !== "string") {
      throw new TypeError('trickle: a message to show must be an object with a "content" string');
    }
    const a = this.#attachFor();
    const body = JSON.parse(JSON.stringify(m));
    a.host.send({ t: KIND_SHOW, ...a.request(), id: a.id, body });
    // Read back at once as it was set, while Go shows it.
    a.showing = body;
    a.message = body;
  }

  // markdown is the answer's markdown; setting it shows that markdown as a
  // complete answer, as setting message does.
  get markdown() {
    return this.text;
  }

  set markdown(s) {
    this.message = { role: "assistant", content: String(s ?? ""), status: "complete" };
  }

  /** The page's own syntax highlighter, (code, lang) => HTML, called once
   *  per settled code block that the widget did not highlight itself; its
   *  output keeps only <span class>. */
  get highlighter() {
    return this.#attach().highlighter;
  }

  set highlighter(fn) {
    this.#attach().highlighter = typeof fn === "function" ? fn : null;
  }

  /** The page's TeX converter, (tex, {display}) => MathML (a string or a
   *  Node), called once per settled formula; its output keeps only MathML
   *  Core. Without it a formula shows as its TeX. */
  get math() {
    return this.#attach().math;
  }

  set math(fn) {
    this.#attach().math = typeof fn === "function" ? fn : null;
  }

  /** The page's diagram renderer, (lang, source) => SVG (a string, a
   *  Node or a promise of one), called once per settled code block of
   *  diagramLanguages; its output keeps only SVG drawing elements. */
  get diagram() {
    return this.#attach().diagram;
  }

  set diagram(fn) {
    this.#attach().diagram = typeof fn === "function" ? fn : null;
  }

  /** The code block languages drawn by diagram (["mermaid"] by default). */
  get diagramLanguages() {
    return [...this.#attach().diagramLanguages];
  }

  set diagramLanguages(langs) {
    this.#attach().diagramLanguages = [...(langs ?? [])].map(String);
  }

  /** The page's words for every element, by key (English is built in;
   *  docs/package.md lists the keys). Shown words change at once, spoken
   *  and status words with the next ask. */
  static get strings() {
    return pageStrings();
  }

  static set strings(value) {
    setPageStrings(value);
  }

  /** This element's words, by key, over TrickleAnswer.strings. */
  get strings() {
    return elementStrings(this);
  }

  set strings(value) {
    setElementStrings(this, value);
  }

  /** Extra request headers (e.g. Authorization) sent with every ask. */
  /** Seconds without a byte before the answer ends as incomplete (the
   *  idle-timeout attribute; 60 by default, 0: no bound). */
  get idleTimeout() {
    const v = (this.getAttribute(ATTR_IDLE_TIMEOUT) ?? "").trim();
    return v === "" ? 60 : Number(v);
  }

  set idleTimeout(seconds) {
    this.setAttribute(ATTR_IDLE_TIMEOUT, String(seconds));
  }

  get headers() {
    return this.#headers;
  }

  set headers(value) {
    this.#headers = { ...(value ?? {}) };
  }
}
