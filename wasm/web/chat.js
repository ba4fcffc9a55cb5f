// <trickle-chat>: a conversation. Each turn is the reader's message and a
// <trickle-answer> (all of them on the page's one Go host), under a
// composer (a labelled textarea, Send and Stop). The element keeps the
// history as OpenAI-style messages (chat.messages), asks each answer with
// the whole history, runs the page's client-side tools (chat.tools) and
// goes on with their results, and tells the page after every turn
// (trickle-chat-change) so it can save the thread. Importing this module
// never touches the page (on a server the class extends an empty class).

import {
  ATTR_MODEL,
  ATTR_PROTOCOL,
  CHAT_FORWARDS,
  STR_CHAT_CUT_OFF,
  STR_CHAT_REFUSAL,
  STR_CHAT_INPUT,
  STR_CHAT_SEND,
  STR_CHAT_STOP,
  STR_JUMP_TO_LATEST,
  STR_TOOL_FAILED,
} from "./contract.js";
import { askApproval, needsApproval } from "./approval.js";
import { requestMessages, uiMessages, checkMessages, turnsOf, checkTools, runnerOf, toolDeclarations, toolChoiceOf } from "./history.js";
import { elementStrings, setElementStrings, wordOf } from "./strings.js";
import { follow } from "./follow.js";
import { Thread } from "./thread.js";

const Base = typeof HTMLElement === "function" ? HTMLElement : class {};

// PROTOCOLS are what a chat can send (its protocol attribute): "openai"
// (the default: {messages, model, tools, tool_choice}, OpenAI-style) and
// "ai-sdk" (what the AI SDK's DefaultChatTransport sends a useChat route:
// {id, messages: UIMessage[], trigger, messageId}).
const PROTOCOLS = new Set(["openai", "ai-sdk"]);

// newId is a fresh message or chat id (the AI SDK's are 16 letters and
// digits; any unique string does).
function newId() {
  const abc = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => abc[b % abc.length]).join("");
}

// MAX_TOOL_ROUNDS bounds how many times in a row the model may call tools
// before the chat stops asking: a model that calls a tool after every
// result would otherwise loop for ever.
const MAX_TOOL_ROUNDS = 8;

let chats = 0;

// FIRST_BYTES is about how much markdown a restored thread shows at once,
// from its end: more than a thread's view holds. The older turns then
// come in batches, each in an idle moment once the one before is on
// screen: a batch brings as much markdown as the last batch's frames
// say fits in BATCH_MS of the page's time (measured, from BATCH_BYTES at
// first and never more than twice the last batch, at least one turn), and
// its turns are made for at most SLICE_MS of one task. The page applies
// a batch's answers in one animation frame (host.js).
const FIRST_BYTES = 6000;
const BATCH_BYTES = 6000;
const BATCH_MS = 12;
const SLICE_MS = 8;

// BLOCK_TURNS is how many older turns of a restored thread share a block
// (Thread.block): a batch lays out and paints its block and the thread's
// few dozen blocks, not every turn before it.
const BLOCK_TURNS = 32;

// shownAll resolves once each of answers shows its message (its status is
// no longer idle), looked at after each animation frame's rendering, or
// after 1 s whatever they show (an answer that could not start stays
// idle). It resolves with the longest of those frames, in ms, from its
// start to the end of its rendering: what showing them cost the page.
function shownAll(answers) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let worst = 0;
    let start = 0;
    // A message posted in an animation frame callback comes once that
    // frame is rendered.
    const ch = new MessageChannel();
    const frame = (t) => {
      start = Math.min(t, performance.now());
      ch.port2.postMessage(0);
    };
    ch.port1.onmessage = () => {
      const now = performance.now();
      worst = Math.max(worst, now - start);
      if (answers.every((a) => a.status !== "idle") || now - t0 > 1000) {
        ch.port1.close();
        resolve(worst);
      } else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}

// idle resolves in the page's next idle moment (within 100 ms), with
// that moment's deadline (or null).
function idle() {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === "function") requestIdleCallback(resolve, { timeout: 100 });
    else setTimeout(() => resolve(null), 0);
  });
}

export class TrickleChat extends Base {
  #messages = [];
  #busy = false;
  #current = null; // the <trickle-answer> streaming now
  #editing = false; // Send replaces the last question (edit)
  #parts = null;
  #follower = null;
  #thread = null; // the turns as the reader walks them (thread.js)
  #statusOf = null; // watches the newest answer's status for the chat's one line
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
    // As an answer does: a page that sets color-scheme is followed,
    // otherwise the reader's preference (trickle.css).
    const scheme = typeof getComputedStyle === "function" ? getComputedStyle(this.parentElement ?? document.documentElement).colorScheme : "";
    if (scheme && scheme !== "normal") this.dataset.trickleScheme = "inherit";
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
    // The chat's one visible status line: the newest answer's (each
    // answer's own is hidden in a chat). Screen readers hear each
    // answer's spoken status, so this one is not read.
    const status = q("div", "status", { "aria-hidden": "true" });
    const form = q("form", "composer");
    const label = q("label", "label", { for: `trickle-chat-${n}-input` });
    const input = q("textarea", "input", { id: `trickle-chat-${n}-input`, rows: "2" });
    const send = q("button", "send", { type: "submit" });
    const stop = q("button", "stop", { type: "button", hidden: "" });
    thread.append(turns);
    form.append(label, input, send, stop);
    this.append(thread, jump, status, form);
    this.#parts = { thread, turns, jump, status, form, label, input, send, stop };
    this.#follower = follow(thread, jump, [turns]);
    this.#thread = new Thread(this, turns, input, `trickle-chat-${n}`, {
      busy: () => this.#busy,
      // The button goes with the answer it replaces: the reader waits for
      // the new one in the composer, as after Send.
      regenerate: () => {
        input.focus();
        this.regenerate().catch((err) => console.error(err));
      },
      edit: () => {
        const i = this.#messages.findLastIndex((m) => m.role === "user");
        input.value = this.#messages[i]?.content ?? "";
        this.#editing = true;
        input.focus();
      },
      copy: (turn) => {
        const a = turn.querySelector("trickle-answer");
        return a?.message?.content ?? a?.text ?? "";
      },
    });
    this.#statusOf = typeof MutationObserver === "function" ? new MutationObserver(() => this.#showStatus()) : null;
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
    p.label.textContent = w(STR_CHAT_INPUT);
    p.send.textContent = w(STR_CHAT_SEND);
    p.stop.textContent = w(STR_CHAT_STOP);
    p.jump.textContent = w(STR_JUMP_TO_LATEST);
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
        const calls = (m.tool_calls ?? []).filter((c) => c.complete);
        if (this.#stopped || m.status !== "complete" || calls.length === 0) break;
        // The backend waits on the reader (the AI SDK's
        // tool-approval-request): the same question as a page tool's,
        // and the answer goes back with the next request.
        const asks = (m.approvals ?? []).filter((a) => calls.some((c) => c.id === a.tool_call_id));
        if (asks.length > 0) {
          for (const a of asks) a.approved = await this.#approve(calls.find((c) => c.id === a.tool_call_id), answer);
          this.#changed();
          if (this.#stopped || this.protocol !== "ai-sdk") break;
          trigger = "submit-message";
          messageId = this.#idOf(this.#roundStart());
          continue;
        }
        if (!calls.every((c) => runnerOf(this.#tools[c.name]))) break;
        for (const c of calls) await this.#runTool(c, answer);
        this.#changed();
        trigger = "submit-message";
        messageId = this.#idOf(this.#roundStart());
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

  // #roundStart is the index of the answer the last tool round goes on
  // from: the first assistant message after the last user message.
  #roundStart() {
    const u = this.#messages.findLastIndex((m) => m.role === "user");
    return this.#messages.findIndex((m, i) => i > u && m.role === "assistant");
  }

  // #request is the body of the next request. OpenAI's: the history as the
  // model takes it, the model, the page's tools and its tool choice. The AI
  // SDK's (DefaultChatTransport's body): the chat's id, the history as UI
  // messages, the trigger and the message id it is about; the route
  // declares the tools itself.
  #request(trigger, messageId) {
    if (this.protocol === "ai-sdk") {
      const body = { id: this.#chatId, messages: uiMessages(this.#messages, (i) => this.#idOf(i), wordOf(this, STR_CHAT_CUT_OFF)), trigger };
      if (messageId !== undefined) body.messageId = messageId;
      return body;
    }
    const body = { messages: requestMessages(this.#messages, wordOf(this, STR_CHAT_CUT_OFF)) };
    const model = this.getAttribute(ATTR_MODEL);
    if (model) body.model = model;
    const tools = toolDeclarations(this.#tools);
    if (tools.length > 0) body.tools = tools;
    const choice = toolChoiceOf(this.#toolChoice);
    if (choice !== undefined) body.tool_choice = choice;
    return body;
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

  async #runTool(call, answer) {
    let content;
    let error;
    const tool = this.#tools[call.name];
    if (await needsApproval(tool, call.arguments ?? {}, { id: call.id, name: call.name })) {
      if (!(await this.#approve(call, answer))) {
        // Denied: the call never runs, and the model hears so.
        this.#messages.push({ role: "tool", tool_call_id: call.id, name: call.name, content: wordOf(this, STR_CHAT_REFUSAL), denied: true });
        return;
      }
    }
    try {
      const result = await runnerOf(this.#tools[call.name])(call.arguments ?? {}, { id: call.id, name: call.name });
      content = typeof result === "string" ? result : JSON.stringify(result ?? null);
    } catch (err) {
      const message = String(err?.message ?? err);
      content = JSON.stringify({ error: message });
      error = message;
      const note = document.createElement("p");
      note.dataset.trickleChat = "tool-error";
      note.textContent = `${call.name}: ${wordOf(this, STR_TOOL_FAILED).replace("{error}", message)}`;
      answer.after(note);
    }
    const m = { role: "tool", tool_call_id: call.id, name: call.name, content };
    if (error !== undefined) m.error = error; // the AI SDK's output-error
    this.#messages.push(m);
  }

  #changed() {
    this.dispatchEvent(new CustomEvent("trickle-chat-change", { bubbles: true, composed: true, detail: { messages: this.messages } }));
  }

  #setBusy(on) {
    this.#busy = on;
    const p = this.#parts;
    if (!p) return;
    // Stop takes Send's place in the composer while the chat answers;
    // focus on the one that goes moves to the text area, where it stays.
    const hadFocus = (on ? p.send : p.stop).contains(document.activeElement);
    p.stop.hidden = !on;
    p.send.hidden = on;
    p.send.disabled = on;
    p.thread.setAttribute("aria-busy", "false"); // never busy: each answer has its own live regions
    if (hadFocus) p.input.focus();
    this.#thread.refresh();
  }

  // #render rebuilds the thread from the messages: stored answers are
  // shown as they were (el.message). The newest turns, more than fill
  // the thread's view, come at once, the thread kept at its end; the
  // older ones come after them, from the first on, each batch in an idle
  // moment once the batch before is on screen and put just before the
  // newest turns: what a batch moves down the page is those few turns,
  // not the thread, and no task grows with the thread (bench/browser
  // -measure thread). Every turn is numbered as it will be from the start
  // (Thread.pending); a thread set again, edited or regenerated meanwhile
  // starts over.
  #render() {
    const p = this.#parts;
    if (!p) return;
    const gen = ++this.#renders;
    p.turns.replaceChildren();
    const list = turnsOf(this.#messages);
    // add makes turn t before the turn before (null: at the end).
    let watched = false;
    const add = (t, before, answers, into) => {
      const m = this.#messages[t.index];
      if (t.role === "user") return this.#addUser(t.index, before, into);
      // The status line follows the newest answer, the first made.
      const { turn, answer } = this.#addAnswer(t.index, before, !watched, into);
      watched = true;
      answer.message = m;
      answers.push(answer);
      return turn;
    };
    const size = (t) => (this.#messages[t.index].content ?? "").length + 200;
    // The newest turns, going back from the last.
    let end = list.length; // list[end:] are on the page
    let tail = null; // the first of them
    let last = [];
    for (let bytes = 0; end > 0 && (tail === null || bytes < FIRST_BYTES); ) {
      const t = list[--end];
      bytes += size(t);
      tail = add(t, tail, last);
    }
    let next = 0; // list[:next] are on the page too
    this.#thread.pending = end;
    this.#thread.gap = tail;
    // The chat's follower keeps the thread at its end while the turns
    // come (a reader who scrolls away is left there).
    this.#follower.start();
    this.#thread.refresh();
    this.#restoring = next < end;
    let block = null; // the block the older turns go into now
    let budget = BATCH_BYTES; // the next batch's markdown
    let brought = 0; // the last batch's
    const more = async () => {
      while (next < end && gen === this.#renders) {
        const cost = await shownAll(last);
        if (brought > 0) budget = Math.min(2 * brought, (brought * BATCH_MS) / Math.max(cost, 1));
        const deadline = await idle();
        if (gen !== this.#renders) return;
        const made = [];
        last = [];
        const from = next + 1;
        const t0 = performance.now();
        const room = () => performance.now() - t0 < SLICE_MS && (!deadline || deadline.didTimeout || deadline.timeRemaining() > 1);
        for (brought = 0; next < end && (made.length === 0 || (brought < budget && room())); ) {
          if (!block || block.childElementCount >= BLOCK_TURNS) block = this.#thread.block(tail);
          const t = list[next++];
          brought += size(t);
          made.push(add(t, null, last, block));
        }
        this.#thread.pending = end - next;
        this.#thread.settle(made, from);
      }
      if (gen === this.#renders) this.#restoring = false;
      await shownAll(last);
      if (gen === this.#renders) this.#follower.end(false);
    };
    more().catch((err) => console.error(err));
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
    const list = this.#thread.list();
    for (let k = list.length - 1; k >= 0; k--) {
      const i = list[k].dataset.index;
      if (i !== undefined && Number(i) < from) break;
      const block = list[k].parentElement;
      list[k].remove();
      // A block of older turns left empty goes too (its gap would stay).
      if (block !== this.#parts.turns && block.childElementCount === 0) block.remove();
    }
    this.#thread.refresh();
    return true;
  }

  // #showStatus writes the chat's one status line: the newest answer's
  // status, or nothing while its notice (Stopped., why it failed) says it.
  #showStatus() {
    const p = this.#parts;
    const a = [...p.turns.querySelectorAll("trickle-answer")].at(-1);
    const notice = a?.querySelector('[data-trickle="notice"]');
    const text = !a || (notice && !notice.hidden) ? "" : (a.querySelector('[data-trickle="status"]')?.textContent ?? "");
    if (p.status.textContent !== text) p.status.textContent = text;
  }

  // #watch has the status line follow answer, the newest.
  #watch(answer) {
    const o = this.#statusOf;
    if (!o) return;
    o.disconnect();
    const status = answer.querySelector('[data-trickle="status"]');
    const notice = answer.querySelector('[data-trickle="notice"]');
    if (status) o.observe(status, { childList: true, characterData: true, subtree: true });
    if (notice) o.observe(notice, { attributes: true, attributeFilter: ["hidden"] });
    this.#showStatus();
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
    const answer = document.createElement("trickle-answer");
    // The chat's answers take the chat's color scheme (trickle.css): the
    // element need not ask the page's style for it.
    answer.dataset.trickleScheme = "inherit";
    // Every answer attribute the chat takes, and its lang and dir
    // (the contract's CHAT_FORWARDS).
    for (const a of CHAT_FORWARDS) if (this.hasAttribute(a)) answer.setAttribute(a, this.getAttribute(a));
    answer.headers = this.#headers;
    const own = elementStrings(this);
    if (Object.keys(own).length > 0) answer.strings = own;
    const turn = this.#thread.turn("assistant", answer, before, into);
    if (index !== undefined) turn.dataset.index = String(index);
    if (watch) this.#watch(answer);
    return { turn, answer };
  }
}
