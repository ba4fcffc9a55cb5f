// The chat's thread as a reader walks it (docs/chat-thread.md): one tab
// stop (a roving tabindex over the turns), Page Up and Page Down (the
// WAI-ARIA feed pattern's keys, which screen readers leave to the page
// in browse mode) or ArrowUp and ArrowDown between turns, Home and End
// to the first and the last, Ctrl+Home and Ctrl+End out of the feed
// (before it, and to the composer after it), Enter or Escape back to
// the composer. Each turn is an article named by its speaker and its
// place ("The assistant said, 4 of 9") and described by its text, and
// carries its own actions (copy the answer as markdown, regenerate, edit)
// as small labelled buttons, in the tab order only while their turn is
// the thread's stop. The thread decides nothing about the conversation:
// the chat tells it what is busy and does what its buttons ask.

import {
  STR_CHAT_ASSISTANT,
  STR_CHAT_COPY_ANSWER,
  STR_CHAT_EDIT,
  STR_CHAT_REGENERATE,
  STR_CHAT_THREAD,
  STR_CHAT_THREAD_KEYS,
  STR_CHAT_TURN_ASSISTANT,
  STR_CHAT_TURN_YOU,
  STR_CHAT_YOU,
} from "./contract.js";
import { wordOf } from "./strings.js";
import { actionButton, copyAnswer, nameButton } from "./actions.js";

const TURN = '[data-trickle-chat="turn"]';

// OLDER is a block of a restored thread's older turns (chat.js): the
// turns stay in order in the thread, a few dozen to a block, so that
// adding to one block lays out and paints that block, not the thread.
const OLDER = '[data-trickle-chat="older"]';

// INNER is what can take focus inside a turn: its actions and the
// answer's own controls (links, a code block's Copy, the thinking
// summary, Retry).
const INNER = "a[href], button, summary, input, select, textarea, [tabindex]";

// TABBABLE is what a Tab may reach on the page (each still checked for
// its tabindex, disabled, hidden or inert).
const TABBABLE = "a[href], area[href], button, summary, input:not([type=hidden]), select, textarea, iframe, [contenteditable], [tabindex]";

// Thread walks the turns of one chat. on has what the buttons do:
// {regenerate(), edit(turn), copy(turn) → the markdown or ""}, and
// busy() → true while an answer streams or a tool runs.
export class Thread {
  #chat;
  #turns;
  #input;
  #on;
  #stop = null; // the turn in the tab order (the thread's one stop)
  #placed = false; // the reader put it there (else it is the newest turn)
  #pointer = false; // a pointer went down in the thread: its focus is the reader's aim
  #prefix;
  #ids = 0;

  constructor(chat, turns, input, prefix, on) {
    this.#chat = chat;
    this.#prefix = prefix;
    this.#turns = turns;
    this.#input = input;
    this.#on = on;
    turns.addEventListener("keydown", (e) => this.#key(e));
    turns.addEventListener("pointerdown", () => (this.#pointer = true));
    turns.addEventListener("focusin", (e) => {
      const turn = e.target.closest?.(TURN);
      if (!turn || !this.#mine(turn)) return;
      const pointer = this.#pointer;
      this.#pointer = false;
      // Tab or Shift+Tab from outside lands on the thread's one stop, even
      // where a control an answer added since the last sweep was still in
      // the tab order (a turn focused on purpose is taken as it is).
      const from = e.relatedTarget;
      if (!pointer && e.target !== turn && (!from || !turns.contains(from)) && this.#stop && !this.#stop.contains(e.target)) {
        this.focus(this.#stop);
        return;
      }
      // Wherever else focus lands in a turn (a click, an arrow), that turn
      // becomes the thread's stop.
      if (turn !== this.#stop) {
        this.#stop = turn;
        this.#placed = true;
      }
      this.#rove();
    });
  }

  // turn makes a turn of role ("user" or "assistant") holding body, at
  // the end, or before the turn before (a restored thread's older turns
  // come after its newest: chat.js).
  turn(role, body, before = null, into = this.#turns) {
    const w = (k) => wordOf(this.#chat, k);
    const turn = document.createElement("div");
    turn.dataset.trickleChat = "turn";
    turn.dataset.role = role;
    turn.id = this.#id();
    turn.setAttribute("role", "article");
    turn.tabIndex = -1;
    // Who speaks, for screen readers' heading navigation (hidden on screen).
    const who = document.createElement("h3");
    who.dataset.trickleChat = "speaker";
    who.textContent = w(role === "user" ? STR_CHAT_YOU : STR_CHAT_ASSISTANT);
    const actions = document.createElement("div");
    actions.dataset.trickleChat = "actions";
    if (role === "user") {
      actions.append(actionButton("edit", w(STR_CHAT_EDIT), () => this.#on.edit(turn)));
    } else {
      actions.append(
        actionButton("copy-answer", w(STR_CHAT_COPY_ANSWER), (b) => copyAnswer(b, this.#on.copy(turn), w)),
        actionButton("regenerate", w(STR_CHAT_REGENERATE), () => this.#on.regenerate()),
      );
    }
    turn.append(who, body, actions);
    into.insertBefore(turn, before);
    return turn;
  }

  // block makes a block for older turns, before the turn before (chat.js
  // fills it with turn(…, null, block)).
  block(before) {
    const b = document.createElement("div");
    b.dataset.trickleChat = "older";
    this.#turns.insertBefore(b, before);
    return b;
  }

  // #mine says that turn is one of this thread's turns (in the thread, or
  // in one of its blocks of older turns).
  #mine(turn) {
    const p = turn.parentElement;
    return p === this.#turns || (p?.parentElement === this.#turns && p.matches(OLDER));
  }

  // refresh brings every turn's name, description, actions and tab stop up
  // to date: after turns came or went, an answer began or ended.
  refresh() {
    const w = (k) => wordOf(this.#chat, k);
    // The thread is a feed of articles, named, and described by its keys
    // (a hidden paragraph beside it: said when focus enters, never seen).
    const t = this.#turns;
    t.setAttribute("role", "feed");
    t.setAttribute("aria-label", w(STR_CHAT_THREAD));
    let hint = t.previousElementSibling;
    if (hint?.dataset.trickleChat !== "keys") {
      hint = document.createElement("p");
      hint.dataset.trickleChat = "keys";
      hint.id = this.#id();
      hint.hidden = true;
      t.before(hint);
      t.setAttribute("aria-describedby", hint.id);
    }
    hint.textContent = w(STR_CHAT_THREAD_KEYS);
    const list = this.list();
    const pending = this.pending > 0 && list.includes(this.gap) ? this.pending : 0;
    const total = list.length + pending;
    const last = this.#lasts(list);
    let skip = 0;
    list.forEach((turn, i) => {
      if (turn === this.gap) skip = pending;
      this.#label(turn, i + 1 + skip, total, last);
    });
    this.#rove();
  }

  // pending is how many turns are still to come just before the turn gap
  // (a restored thread shows its newest turns first: chat.js): the turns
  // are numbered and counted as they will be.
  pending = 0;
  gap = null;

  // settle labels turns just put in the thread, the first of them number
  // from (pending already less them), and takes them out of the tab
  // order: the work of refresh for those turns alone.
  settle(turns, from) {
    const list = this.list();
    const total = list.length + (this.pending > 0 && list.includes(this.gap) ? this.pending : 0);
    const last = this.#lasts(list);
    turns.forEach((turn, i) => {
      this.#label(turn, from + i, total, last);
      if (turn !== this.#stop) this.#roveOne(turn, false);
    });
  }

  // #lasts is what refresh needs to know of the whole thread: the last
  // question and the last answer, and whether the chat is busy.
  #lasts(list) {
    return {
      busy: this.#on.busy(),
      user: list.findLast((x) => x.dataset.role === "user"),
      answer: list.findLast((x) => x.dataset.role === "assistant"),
    };
  }

  // #label names turn by its speaker and place (n of total), describes it
  // by its text and shows the actions it has now.
  #label(turn, n, total, last) {
    const w = (k) => wordOf(this.#chat, k);
    const user = turn.dataset.role === "user";
    turn.setAttribute("aria-label", w(user ? STR_CHAT_TURN_YOU : STR_CHAT_TURN_ASSISTANT).replace("{n}", String(n)).replace("{total}", String(total)));
    turn.setAttribute("aria-posinset", String(n));
    turn.setAttribute("aria-setsize", String(total));
    turn.querySelector('[data-trickle-chat="speaker"]').textContent = w(user ? STR_CHAT_YOU : STR_CHAT_ASSISTANT);
    const described = this.#described(turn);
    if (described) turn.setAttribute("aria-describedby", described);
    // An answer still being written has no actions; nor has any turn
    // but the last question (Edit) and the last answer (Regenerate),
    // and those only while nothing streams.
    const streaming = turn.dataset.streaming !== undefined;
    for (const b of turn.querySelectorAll('[data-trickle-chat="actions"] > button')) {
      const part = b.dataset.trickleChat;
      b.hidden =
        streaming ||
        (part === "edit" && (last.busy || turn !== last.user)) ||
        (part === "regenerate" && (last.busy || turn !== last.answer)) ||
        (part === "copy-answer" && this.#on.copy(turn) === "");
      const word = w(part === "edit" ? STR_CHAT_EDIT : part === "regenerate" ? STR_CHAT_REGENERATE : STR_CHAT_COPY_ANSWER);
      if (b.dataset.copied === undefined) nameButton(b, word);
    }
  }

  // cut takes off the turns of messages[from:] (their data-index; and a
  // turn without one after them: an answer that could not start), with
  // a block of older turns they leave empty (its gap would stay).
  cut(from) {
    const list = this.list();
    for (let k = list.length - 1; k >= 0; k--) {
      const i = list[k].dataset.index;
      if (i !== undefined && Number(i) < from) break;
      const block = list[k].parentElement;
      list[k].remove();
      if (block !== this.#turns && block.childElementCount === 0) block.remove();
    }
  }

  // list is the turns, in order.
  list() {
    // Children and the blocks' children, not a selector over every node
    // of every answer.
    const out = [];
    for (const x of this.#turns.children) {
      if (x.matches(TURN)) out.push(x);
      else if (x.matches(OLDER)) out.push(...x.children);
    }
    return out;
  }

  // stop is the turn in the tab order.
  get stop() {
    return this.#stop;
  }

  // #rove gives the tab stop to one turn (the one the reader last was on,
  // else the newest) and its actions; every other turn and action is out
  // of the tab order, reachable by the arrows.
  #rove() {
    const list = this.list();
    if (!this.#placed || !list.includes(this.#stop)) {
      this.#stop = list.at(-1) ?? null;
      this.#placed = false;
    }
    for (const turn of list) this.#roveOne(turn, turn === this.#stop);
  }

  // #roveOne puts turn in the tab order (on) or out of it.
  #roveOne(turn, on) {
    turn.tabIndex = on ? 0 : -1;
    // What can take focus inside the other turns is out of the tab
    // order (its own tabindex kept aside in data-trickle-tabindex); the
    // stop's is back in it.
    for (const e of turn.querySelectorAll(INNER)) {
      const kept = e.dataset.trickleTabindex;
      if (on && kept !== undefined) {
        if (kept === "") e.removeAttribute("tabindex");
        else e.setAttribute("tabindex", kept);
        delete e.dataset.trickleTabindex;
      } else if (!on && kept === undefined) {
        e.dataset.trickleTabindex = e.getAttribute("tabindex") ?? "";
        e.tabIndex = -1;
      }
    }
  }

  // #key walks the thread: on a turn, or on one of its actions.
  #key(e) {
    if (e.altKey || e.metaKey || e.shiftKey || e.isComposing) return;
    // Ctrl only with Home and End: the feed pattern's way out.
    if (e.ctrlKey && e.key !== "Home" && e.key !== "End") return;
    const turn = e.target.closest?.(TURN);
    if (!turn || !this.#mine(turn)) return;
    const onTurn = e.target === turn;
    // Links and buttons inside an answer keep their own keys.
    if (!onTurn && !e.target.closest('[data-trickle-chat="actions"]')) return;
    const list = this.list();
    const i = list.indexOf(turn);
    let to = -1;
    switch (e.key) {
      case "ArrowUp":
      case "PageUp":
        to = Math.max(0, i - 1);
        break;
      case "ArrowDown":
      case "PageDown":
        to = Math.min(list.length - 1, i + 1);
        break;
      case "Home":
        if (e.ctrlKey) {
          // Out of the feed, to what can take focus just before it; with
          // nothing there, the key is the browser's.
          const before = this.#before();
          if (!before) return;
          e.preventDefault();
          before.focus();
          return;
        }
        to = 0;
        break;
      case "End":
        // Ctrl+End: out of the feed, to what follows it (the composer).
        if (!e.ctrlKey) to = list.length - 1;
        break;
      case "Escape":
        break;
      case "Enter":
        if (!onTurn) return; // Enter on a button presses it
        break;
      default:
        return;
    }
    e.preventDefault();
    if (to < 0) {
      this.#input.focus();
      return;
    }
    this.focus(list[to]);
  }

  // #before is the last element before the thread, in the document's
  // order, that a Tab can reach (the feed pattern's "first focusable
  // element before the feed"), or null.
  #before() {
    const t = this.#turns;
    const all = [...t.ownerDocument.querySelectorAll(TABBABLE)];
    for (let k = all.length - 1; k >= 0; k--) {
      const e = all[k];
      if (!(e.compareDocumentPosition(t) & e.DOCUMENT_POSITION_FOLLOWING) || t.contains(e)) continue;
      if (e.tabIndex < 0 || e.disabled || e.closest("[hidden], [inert]")) continue;
      if (typeof e.checkVisibility === "function" && !e.checkVisibility()) continue;
      return e;
    }
    return null;
  }

  // focus moves the reader to turn: it becomes the thread's stop and is
  // scrolled into view, its start first when it is taller than the thread.
  focus(turn) {
    this.#stop = turn;
    this.#placed = true;
    this.#rove();
    turn.focus({ preventScroll: true });
    const box = this.#turns.parentElement;
    const tall = box && turn.getBoundingClientRect?.().height > box.clientHeight;
    turn.scrollIntoView?.({ block: tall ? "start" : "nearest" });
  }

  // #described is the ids of what a turn says: the reader's text, or the
  // answer's content and its tool calls (never its thinking, its live
  // regions or its status).
  #described(turn) {
    const parts = turn.dataset.role === "user" ? [turn.querySelector('[data-trickle-chat="text"]')] : [...turn.querySelectorAll('trickle-answer [data-trickle="content"], trickle-answer [data-trickle="tools"]')];
    return parts
      .filter(Boolean)
      .map((p) => p.id || (p.id = this.#id()))
      .join(" ");
  }

  #id() {
    this.#ids++;
    return `${this.#prefix}-${this.#ids}`;
  }
}
