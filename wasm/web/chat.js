// <trickle-chat>: a conversation. Each turn is the reader's message and a
// <trickle-answer> (all of them on the page's one Go host), under a
// composer (a labelled textarea, Send and Stop). The element keeps the
// history as OpenAI-style messages (chat.messages), asks each answer with
// the whole history, runs the page's client-side tools (chat.tools) and
// goes on with their results, and tells the page after every turn
// (trickle-chat-change) so it can save the thread. Importing this module
// never touches the page (on a server the class extends an empty class).

import { toRequest, checkMessages, turnsOf } from "./history.js";
import { elementStrings, setElementStrings, wordOf } from "./strings.js";
import { follow } from "./follow.js";

const Base = typeof HTMLElement === "function" ? HTMLElement : class {};

// The attributes a chat hands to each of its answers.
const ANSWER_ATTRS = ["endpoint", "transport", "dialect", "model", "highlight", "announce", "worker", "images", "idle-timeout", "lang", "dir"];

// MAX_TOOL_ROUNDS bounds how many times in a row the model may call tools
// before the chat stops asking: a model that calls a tool after every
// result would otherwise loop for ever.
const MAX_TOOL_ROUNDS = 8;

let chats = 0;

export class TrickleChat extends Base {
  #messages = [];
  #busy = false;
  #current = null; // the <trickle-answer> streaming now
  #editing = false; // Send replaces the last question (edit)
  #parts = null;
  #follower = null;
  #stopped = false;
  #headers = {};
  /** Client-side tools by name: async (args, call) => result. */
  tools = {};

  connectedCallback() {
    if (this.#parts) return;
    const n = ++chats;
    this.innerHTML = "";
    const q = (tag, part, attrs = {}) => {
      const e = document.createElement(tag);
      e.dataset.trickleChat = part;
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      return e;
    };
    const thread = q("div", "thread");
    const turns = q("div", "turns");
    const jump = q("button", "jump", { type: "button", hidden: "" });
    const form = q("form", "composer");
    const label = q("label", "label", { for: `trickle-chat-${n}-input` });
    const input = q("textarea", "input", { id: `trickle-chat-${n}-input`, rows: "2" });
    const send = q("button", "send", { type: "submit" });
    const stop = q("button", "stop", { type: "button", hidden: "" });
    thread.append(turns);
    form.append(label, input, send, stop);
    this.append(thread, jump, form);
    this.#parts = { thread, turns, jump, form, label, input, send, stop };
    this.#follower = follow(thread, jump, [turns]);
    this.relabel();

    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = input.value;
      if (text.trim() === "" || this.#busy) return;
      input.value = "";
      if (this.#editing) this.edit(text);
      else this.send(text);
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        form.requestSubmit();
      } else if (e.key === "Escape" && this.#busy) {
        e.preventDefault();
        this.stop();
      }
    });
    stop.addEventListener("click", () => this.stop());
    if (this.#messages.length > 0) this.#render();
  }

  /** Writes the page's words (el.strings of the chat, then
   *  TrickleAnswer.strings) into the chat's own parts. */
  relabel() {
    const p = this.#parts;
    if (!p) return;
    const w = (k) => wordOf(this, k);
    p.label.textContent = w("chatInput");
    p.send.textContent = w("chatSend");
    p.stop.textContent = w("chatStop");
    p.jump.textContent = w("jumpToLatest");
    for (const h of p.turns.querySelectorAll('[data-trickle-chat="speaker"]')) {
      h.textContent = w(h.parentElement.dataset.role === "user" ? "chatYou" : "chatAssistant");
    }
    for (const b of p.turns.querySelectorAll('[data-trickle-chat="regenerate"]')) b.textContent = w("chatRegenerate");
    for (const b of p.turns.querySelectorAll('[data-trickle-chat="edit"]')) b.textContent = w("chatEdit");
  }

  /** The conversation as OpenAI-style messages (a copy): user, assistant
   *  (with status, incomplete, finish_reason, usage, tool_calls and
   *  thinking, as el.message has them) and tool messages. */
  get messages() {
    return structuredClone(this.#messages);
  }

  /** Shows a stored conversation at once: no request, no announcement. */
  set messages(list) {
    this.#messages = checkMessages(list);
    this.#stopped = true;
    this.#current?.stop();
    this.#render();
  }

  /** True while an answer streams or a tool runs. */
  get busy() {
    return this.#busy;
  }

  /** The chat's words, by key, over TrickleAnswer.strings; its answers
   *  get them too. */
  get strings() {
    return elementStrings(this);
  }

  set strings(value) {
    setElementStrings(this, value);
    this.relabel();
    for (const a of this.querySelectorAll("trickle-answer")) a.strings = value;
  }

  /** Extra request headers (e.g. Authorization) for every answer. */
  get headers() {
    return this.#headers;
  }

  set headers(value) {
    this.#headers = { ...(value ?? {}) };
  }

  /** Sends the reader's message and answers it; resolves when the turn
   *  (and the tools it called) ended. */
  send(text) {
    if (this.#busy) return Promise.reject(new Error("trickle: the chat is answering: stop it first"));
    this.#messages.push({ role: "user", content: String(text) });
    this.#addUser(this.#messages.length - 1);
    return this.#answer();
  }

  /** Answers the last question again, in place of the last answer. */
  regenerate() {
    if (this.#busy) return Promise.reject(new Error("trickle: the chat is answering: stop it first"));
    const i = this.#messages.findLastIndex((m) => m.role === "user");
    if (i < 0) return Promise.reject(new Error("trickle: there is no question to answer again"));
    this.#messages.length = i + 1;
    this.#render();
    return this.#answer();
  }

  /** Replaces the last question with text and answers it. */
  edit(text) {
    if (this.#busy) return Promise.reject(new Error("trickle: the chat is answering: stop it first"));
    this.#editing = false;
    const i = this.#messages.findLastIndex((m) => m.role === "user");
    if (i < 0) return this.send(text);
    this.#messages.length = i;
    this.#messages.push({ role: "user", content: String(text) });
    this.#render();
    return this.#answer();
  }

  /** Stops the answer streaming now (its text stays, flagged cut off). */
  stop() {
    this.#stopped = true;
    this.#current?.stop();
  }

  async #answer() {
    this.#setBusy(true);
    this.#stopped = false;
    try {
      for (let round = 0; round <= MAX_TOOL_ROUNDS && !this.#stopped; round++) {
        const { answer } = this.#addAnswer();
        const body = { messages: this.#messages.map(toRequest(wordOf(this, "chatCutOff"))) };
        const model = this.getAttribute("model");
        if (model) body.model = model;
        this.#current = answer;
        this.#follower.start();
        await answer.ask(body);
        this.#current = null;
        const m = answer.message;
        if (!m) {
          // No answer at all (the widget could not start): the turn shows
          // why, and the page hears of the turn.
          this.#changed();
          break;
        }
        this.#messages.push(m);
        const turn = answer.closest('[data-trickle-chat="turn"]');
        turn.dataset.index = String(this.#messages.length - 1);
        // A stopped answer's cost arrives after its end: the history takes it.
        answer.addEventListener("trickle-usage", (e) => {
          const i = Number(turn.dataset.index);
          if (this.#messages[i]?.role !== "assistant" || !turn.isConnected) return;
          this.#messages[i] = e.detail.message;
          this.#changed();
        }, { once: true });
        this.#changed();
        const calls = (m.tool_calls ?? []).filter((c) => c.complete);
        if (this.#stopped || m.status !== "complete" || calls.length === 0) break;
        if (!calls.every((c) => typeof this.tools?.[c.name] === "function")) break;
        for (const c of calls) await this.#runTool(c, answer);
        this.#changed();
      }
    } finally {
      this.#current = null;
      this.#follower.end(true);
      this.#setBusy(false);
      this.#markLast();
    }
  }

  async #runTool(call, answer) {
    let content;
    try {
      const result = await this.tools[call.name](call.arguments ?? {}, { id: call.id, name: call.name });
      content = typeof result === "string" ? result : JSON.stringify(result ?? null);
    } catch (err) {
      const message = String(err?.message ?? err);
      content = JSON.stringify({ error: message });
      const note = document.createElement("p");
      note.dataset.trickleChat = "tool-error";
      note.textContent = `${call.name}: ${wordOf(this, "toolFailed").replace("{error}", message)}`;
      answer.after(note);
    }
    this.#messages.push({ role: "tool", tool_call_id: call.id, name: call.name, content });
  }

  #changed() {
    this.dispatchEvent(new CustomEvent("trickle-chat-change", { bubbles: true, composed: true, detail: { messages: this.messages } }));
  }

  #setBusy(on) {
    this.#busy = on;
    const p = this.#parts;
    if (!p) return;
    const hadFocus = p.stop.contains(document.activeElement);
    p.stop.hidden = !on;
    p.send.disabled = on;
    p.thread.setAttribute("aria-busy", "false"); // never busy: each answer has its own live regions
    if (hadFocus && !on) p.input.focus();
  }

  // #render rebuilds the thread from the messages: stored answers are
  // shown at once, as they were (el.message).
  #render() {
    const p = this.#parts;
    if (!p) return;
    p.turns.replaceChildren();
    for (const t of turnsOf(this.#messages)) {
      if (t.role === "user") this.#addUser(t.index);
      else this.#addAnswer(t.index).answer.message = this.#messages[t.index];
    }
    this.#markLast();
  }

  #turn(role) {
    const turn = document.createElement("div");
    turn.dataset.trickleChat = "turn";
    turn.dataset.role = role;
    // Each turn says who speaks, for screen readers (visually hidden).
    const who = document.createElement("h3");
    who.dataset.trickleChat = "speaker";
    who.textContent = wordOf(this, role === "user" ? "chatYou" : "chatAssistant");
    turn.append(who);
    this.#parts.turns.append(turn);
    return turn;
  }

  #addUser(index) {
    const turn = this.#turn("user");
    turn.dataset.index = String(index);
    const text = document.createElement("div");
    text.dataset.trickleChat = "text";
    text.textContent = this.#messages[index].content;
    turn.append(text);
  }

  #addAnswer(index) {
    const turn = this.#turn("assistant");
    if (index !== undefined) turn.dataset.index = String(index);
    const answer = document.createElement("trickle-answer");
    for (const a of ANSWER_ATTRS) if (this.hasAttribute(a)) answer.setAttribute(a, this.getAttribute(a));
    answer.headers = this.#headers;
    const own = elementStrings(this);
    if (Object.keys(own).length > 0) answer.strings = own;
    turn.append(answer);
    return { turn, answer };
  }

  // #markLast puts Regenerate under the last answer and Edit on the last
  // question, and removes them elsewhere.
  #markLast() {
    const p = this.#parts;
    if (!p) return;
    for (const b of p.turns.querySelectorAll('[data-trickle-chat="regenerate"], [data-trickle-chat="edit"]')) b.remove();
    const turns = [...p.turns.children];
    const lastUser = turns.findLast((t) => t.dataset.role === "user");
    const lastAnswer = turns.findLast((t) => t.dataset.role === "assistant");
    const button = (part, key, onClick) => {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.trickleChat = part;
      b.textContent = wordOf(this, key);
      b.addEventListener("click", onClick);
      return b;
    };
    if (lastAnswer && !this.#busy) lastAnswer.append(button("regenerate", "chatRegenerate", () => this.regenerate()));
    if (lastUser && !this.#busy) {
      lastUser.append(
        button("edit", "chatEdit", () => {
          const i = this.#messages.findLastIndex((m) => m.role === "user");
          p.input.value = this.#messages[i]?.content ?? "";
          this.#editing = true;
          p.input.focus();
        }),
      );
    }
  }
}
