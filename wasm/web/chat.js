// <trickle-chat>: a conversation. Each turn is the reader's message and a
// <trickle-answer> (all of them on the page's one Go host), under a
// composer (a labelled textarea, Send and Stop). The element keeps the
// history as OpenAI-style messages (chat.messages), asks each answer with
// the whole history, runs the page's client-side tools (chat.tools) and
// goes on with their results, and tells the page after every turn
// (trickle-chat-change) so it can save the thread. Importing this module
// never touches the page (on a server the class extends an empty class).

import { ATTR_MODEL, ATTR_PROTOCOL, STR_CHAT_CUT_OFF } from "./contract.js";
import { askApproval } from "./approval.js";
import { checkMessages, turnsOf, checkTools, roundStart } from "./history.js";
import { PROTOCOLS, newId, requestBody, settleCalls } from "./request.js";
import { elementStrings, setElementStrings, wordOf } from "./strings.js";
import { follow } from "./follow.js";
import { chatAnswer, chatParts, labelParts, showBusy, statusLine } from "./composer.js";
import { Thread } from "./thread.js";
import { restore } from "./restore.js";
import { followScheme } from "./style.js";

const Base = typeof HTMLElement === "function" ? HTMLElement : class {};

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
  #thread = null; // the turns as the reader walks them (thread.js)
  #statusOf = null; // moves the chat's status line to an answer (composer.js)
  #stopped = false;
  #headers = {};
  #tools = {};
  #asking = null; // the open approval question's AbortController
  #toolChoice = undefined;
  #chatId = newId();
  #renders = 0; // counts #render: a restore in progress stops when it moves
  #restoring = false; // older turns of a restored thread are still to come

  constructor() {
    super();
    // A property the page set before the element was defined (its script
    // ran first) sits on the instance and hides the class's accessor:
    // take it through the setter.
    for (const k of ["tools", "toolChoice", "chatId", "headers", "messages"]) {
      if (Object.hasOwn(this, k)) {
        const v = this[k];
        delete this[k];
        this[k] = v;
      }
    }
  }

  connectedCallback() {
    if (this.#parts) return;
    const n = ++chats;
    followScheme(this); // as an answer does
    this.innerHTML = "";
    const p = chatParts(this, n, {
      busy: () => this.#busy,
      submit: (text) => (this.#editing ? this.edit(text) : this.send(text)),
      stop: () => this.stop(),
    });
    this.#parts = p;
    this.#follower = follow(p.thread, p.jump, [p.turns]);
    this.#thread = new Thread(this, p.turns, p.input, `trickle-chat-${n}`, {
      busy: () => this.#busy,
      // The button goes with the answer it replaces: the reader waits for
      // the new one in the composer, as after Send.
      regenerate: () => {
        p.input.focus();
        this.regenerate().catch((err) => console.error(err));
      },
      edit: () => {
        const i = this.#messages.findLastIndex((m) => m.role === "user");
        p.input.value = this.#messages[i]?.content ?? "";
        this.#editing = true;
        p.input.focus();
      },
      copy: (turn) => {
        const a = turn.querySelector("trickle-answer");
        return a?.message?.content ?? a?.text ?? "";
      },
    });
    this.#statusOf = statusLine(p.status);
    this.relabel();
    if (this.#messages.length > 0) this.#render();
  }

  /** Writes the page's words (el.strings of the chat, then
   *  TrickleAnswer.strings) into the chat's own parts. */
  relabel() {
    if (!this.#parts) return;
    labelParts(this.#parts, (k) => wordOf(this, k));
    this.#thread.refresh();
  }

  /** The conversation as OpenAI-style messages (a copy): user, assistant
   *  (with status, incomplete, finish_reason, usage, tool_calls and
   *  thinking, as el.message has them) and tool messages. */
  get messages() {
    return structuredClone(this.#messages);
  }

  /** Shows a stored conversation, no request, no announcement: its newest
   *  turns at once, the older ones in idle-time batches (#render). */
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

  /** The page's tools by name, which the model may call: each either
   *  {description, parameters (a JSON Schema), run(args, call)} or a plain
   *  async (args, call) => result (declared by its name alone). Every
   *  request declares them (OpenAI's tools); a call runs here and its
   *  result goes back to the model. */
  get tools() {
    return this.#tools;
  }

  set tools(value) {
    this.#tools = checkTools(value);
  }

  /** OpenAI's tool_choice for every request: "auto", "none", "required",
   *  or a tool's name (that tool must be called); unset, the model
   *  decides. */
  get toolChoice() {
    return this.#toolChoice;
  }

  set toolChoice(value) {
    this.#toolChoice = value == null || value === "" ? undefined : value;
  }

  /** The conversation's id, sent as the AI SDK's chat id (protocol
   *  "ai-sdk"); a fresh one by default, set it to go on with a saved
   *  thread. */
  get chatId() {
    return this.#chatId;
  }

  set chatId(value) {
    this.#chatId = value == null || value === "" ? newId() : String(value);
  }

  /** What the chat sends: "openai" (default) or "ai-sdk" (the protocol
   *  attribute; anything else reads as "openai"). */
  get protocol() {
    const p = this.getAttribute?.(ATTR_PROTOCOL) ?? "";
    return PROTOCOLS.has(p) ? p : "openai";
  }

  /** Sets the protocol attribute (React 19 sets a prop the element has as
   *  a property: `<trickle-chat protocol="ai-sdk">` comes here). */
  set protocol(value) {
    this.setAttribute(ATTR_PROTOCOL, String(value));
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
    this.#messages.push(this.#withId({ role: "user", content: String(text) }));
    this.#addUser(this.#messages.length - 1);
    return this.#answer("submit-message");
  }

  /** Answers the last question again, in place of the last answer. */
  regenerate() {
    if (this.#busy) return Promise.reject(new Error("trickle: the chat is answering: stop it first"));
    const i = this.#messages.findLastIndex((m) => m.role === "user");
    if (i < 0) return Promise.reject(new Error("trickle: there is no question to answer again"));
    const again = this.#messages[i + 1]?.role === "assistant" ? this.#idOf(i + 1) : undefined;
    this.#messages.length = i + 1;
    this.#cut(i + 1);
    return this.#answer("regenerate-message", again);
  }

  /** Replaces the last question with text and answers it. */
  edit(text) {
    if (this.#busy) return Promise.reject(new Error("trickle: the chat is answering: stop it first"));
    this.#editing = false;
    const i = this.#messages.findLastIndex((m) => m.role === "user");
    if (i < 0) return this.send(text);
    const id = this.protocol === "ai-sdk" ? this.#idOf(i) : undefined;
    this.#messages.length = i;
    this.#messages.push(id ? { role: "user", content: String(text), id } : { role: "user", content: String(text) });
    if (this.#cut(i)) this.#addUser(i);
    return this.#answer("submit-message", id);
  }

  /** Stops the answer streaming now (its text stays, flagged cut off). */
  stop() {
    this.#stopped = true;
    this.#current?.stop();
    this.#asking?.abort(); // a question still open is denied
  }

  // #answer asks for the next answer and runs the tools it calls, round
  // after round. trigger and messageId are the AI SDK's for the first
  // request (protocol "ai-sdk"); a round after tools goes on with the
  // answer that called them.
  async #answer(trigger, messageId) {
    this.#setBusy(true);
    this.#stopped = false;
    try {
      for (let round = 0; round <= MAX_TOOL_ROUNDS && !this.#stopped; round++) {
        const { turn, answer } = this.#addAnswer();
        const body = this.#request(trigger, messageId);
        this.#current = answer;
        turn.dataset.streaming = "";
        this.#thread.refresh();
        this.#follower.start();
        await answer.ask(body);
        this.#current = null;
        delete turn.dataset.streaming;
        this.#thread.refresh();
        const m = answer.message;
        if (!m) {
          // No answer at all (the widget could not start): the turn shows
          // why, and the page hears of the turn.
          this.#changed();
          break;
        }
        this.#messages.push(this.#withId(m));
        turn.dataset.index = String(this.#messages.length - 1);
        // A stopped answer's cost arrives after its end: the history takes it.
        answer.addEventListener("trickle-usage", (e) => {
          const i = Number(turn.dataset.index);
          if (this.#messages[i]?.role !== "assistant" || !turn.isConnected) return;
          this.#messages[i] = e.detail.message;
          this.#changed();
        }, { once: true });
        this.#changed();
        if (this.#stopped) break;
        const settled = await settleCalls(this, m, answer, this.#messages, this.#tools, (call) => this.#approve(call, answer));
        if (!settled) break;
        this.#changed();
        // The backend's questions answered, only the AI SDK's route hears.
        if (settled === "asked" && (this.#stopped || this.protocol !== "ai-sdk")) break;
        trigger = "submit-message";
        messageId = this.#idOf(roundStart(this.#messages)); // the answer the round goes on from
      }
    } finally {
      this.#current = null;
      this.#follower.end(true);
      this.#setBusy(false);
      this.#thread.refresh();
    }
  }

  // #withId gives a message an id, for the AI SDK's UI messages.
  #withId(m) {
    if (this.protocol === "ai-sdk" && m && !m.id) m.id = newId();
    return m;
  }

  // #idOf is the id of messages[i]: its own, or one made of the chat's id
  // and the index (a thread stored without ids).
  #idOf(i) {
    return this.#messages[i]?.id ?? `${this.#chatId}-${i}`;
  }

  // #request is the body of the next request (request.js).
  #request(trigger, messageId) {
    const [messages, tools, toolChoice] = [this.#messages, this.#tools, this.#toolChoice];
    const [cutOff, model] = [wordOf(this, STR_CHAT_CUT_OFF), this.getAttribute(ATTR_MODEL)];
    return requestBody({ protocol: this.protocol, chatId: this.#chatId, messages, idOf: (i) => this.#idOf(i), cutOff, model, tools, toolChoice, trigger, messageId });
  }

  // #approve asks the reader whether call may run (approval.js), and
  // resolves true or false; Stop denies.
  async #approve(call, answer) {
    this.#asking = new AbortController();
    const input = this.#parts?.input;
    try {
      return await askApproval(this, answer, call, { signal: this.#asking.signal, done: () => input?.focus() });
    } finally {
      this.#asking = null;
    }
  }

  #changed() {
    this.dispatchEvent(new CustomEvent("trickle-chat-change", { bubbles: true, composed: true, detail: { messages: this.messages } }));
  }

  #setBusy(on) {
    this.#busy = on;
    const p = this.#parts;
    if (!p) return;
    showBusy(p, on);
    this.#thread.refresh();
  }

  // #render rebuilds the thread from the messages: stored answers are
  // shown as they were (el.message), the newest turns at once and the
  // older ones in idle-time batches (restore.js). A thread set again,
  // edited or regenerated meanwhile starts over.
  #render() {
    const p = this.#parts;
    if (!p) return;
    const gen = ++this.#renders;
    p.turns.replaceChildren();
    let watched = false;
    this.#restoring = restore(turnsOf(this.#messages), {
      size: (t) => (this.#messages[t.index].content ?? "").length + 200,
      add: (t, before, answers, into) => {
        if (t.role === "user") return this.#addUser(t.index, before, into);
        // The status line follows the newest answer, the first made.
        const { turn, answer } = this.#addAnswer(t.index, before, !watched, into);
        watched = true;
        answer.message = this.#messages[t.index];
        answers.push(answer);
        return turn;
      },
      thread: this.#thread,
      follower: this.#follower,
      current: () => gen === this.#renders,
      done: () => {
        this.#restoring = false;
      },
    });
  }

  // #cut takes the turns of messages[from:] off the page (and a turn that
  // never had a message after them: an answer that could not start),
  // keeping the others as they are: a long thread is not rebuilt to
  // answer its last question again. While a restore is still bringing
  // older turns, the thread is rebuilt from the messages instead, and
  // #cut returns false (the rebuilt thread has every message's turn).
  #cut(from) {
    if (this.#restoring) {
      this.#render();
      return false;
    }
    this.#thread.cut(from);
    this.#thread.refresh();
    return true;
  }

  #addUser(index, before = null, into = undefined) {
    const text = document.createElement("div");
    text.dataset.trickleChat = "text";
    text.textContent = this.#messages[index].content;
    const turn = this.#thread.turn("user", text, before, into);
    turn.dataset.index = String(index);
    return turn;
  }

  // #addAnswer makes an answer's turn, at the end or before the turn
  // before; the chat's status line follows it unless watch is false (a
  // restored thread's older answers).
  #addAnswer(index, before = null, watch = true, into = undefined) {
    const answer = chatAnswer(this, this.#headers);
    const turn = this.#thread.turn("assistant", answer, before, into);
    if (index !== undefined) turn.dataset.index = String(index);
    if (watch) this.#statusOf?.(answer);
    return { turn, answer };
  }
}
