// A <trickle-chat>'s own parts around its turns: the thread (its turns
// and the jump-to-latest button), the one visible status line, and the
// composer (a labelled textarea, Send and Stop), with the keys and
// buttons that drive it; and each answer the chat makes.

import { CHAT_FORWARDS, STR_CHAT_INPUT, STR_CHAT_SEND, STR_CHAT_STOP, STR_JUMP_TO_LATEST } from "./contract.js";
import { elementStrings } from "./strings.js";

/**
 * chatParts builds the chat's parts into el (n makes the textarea's id
 * unique on the page) and wires the composer: Send (or Enter without
 * Shift, not while composing) calls submit(text) with the text, which it
 * clears, unless the text is blank or busy() is true; Stop (or Escape
 * while busy) calls stop(). It returns the parts by name.
 */
export function chatParts(el, n, { busy, submit, stop }) {
  const q = (tag, part, attrs = {}) => {
    const e = document.createElement(tag);
    e.dataset.trickleChat = part;
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  };
  const p = {
    thread: q("div", "thread"),
    turns: q("div", "turns"),
    jump: q("button", "jump", { type: "button", hidden: "" }),
    // The chat's one visible status line: the newest answer's (each
    // answer's own is hidden in a chat). Screen readers hear each
    // answer's spoken status, so this one is not read.
    status: q("div", "status", { "aria-hidden": "true" }),
    form: q("form", "composer"),
    label: q("label", "label", { for: `trickle-chat-${n}-input` }),
    input: q("textarea", "input", { id: `trickle-chat-${n}-input`, rows: "2" }),
    send: q("button", "send", { type: "submit" }),
    stop: q("button", "stop", { type: "button", hidden: "" }),
  };
  p.thread.append(p.turns);
  p.form.append(p.label, p.input, p.send, p.stop);
  el.append(p.thread, p.jump, p.status, p.form);

  p.form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = p.input.value;
    if (text.trim() === "" || busy()) return;
    p.input.value = "";
    submit(text);
  });
  p.input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      p.form.requestSubmit();
    } else if (e.key === "Escape" && busy()) {
      e.preventDefault();
      stop();
    }
  });
  p.stop.addEventListener("click", () => stop());
  return p;
}

/** labelParts writes the chat's words, w(key), into its parts. */
export function labelParts(p, w) {
  p.label.textContent = w(STR_CHAT_INPUT);
  p.send.textContent = w(STR_CHAT_SEND);
  p.stop.textContent = w(STR_CHAT_STOP);
  p.jump.textContent = w(STR_JUMP_TO_LATEST);
}

/**
 * showBusy shows parts as answering (on) or not: Stop takes Send's place
 * in the composer while the chat answers; focus on the one that goes
 * moves to the text area, where it stays.
 */
export function showBusy(p, on) {
  const hadFocus = (on ? p.send : p.stop).contains(document.activeElement);
  p.stop.hidden = !on;
  p.send.hidden = on;
  p.send.disabled = on;
  p.thread.setAttribute("aria-busy", "false"); // never busy: each answer has its own live regions
  if (hadFocus) p.input.focus();
}

/**
 * statusLine keeps the chat's one status line (the element line) showing
 * the newest answer's status, or nothing while that answer's notice
 * (Stopped., why it failed) says it. It returns follow(answer), which
 * moves the line to answer.
 */
export function statusLine(line) {
  let answer = null;
  const show = () => {
    const notice = answer?.querySelector('[data-trickle="notice"]');
    const text = !answer || (notice && !notice.hidden) ? "" : (answer.querySelector('[data-trickle="status"]')?.textContent ?? "");
    if (line.textContent !== text) line.textContent = text;
  };
  const o = typeof MutationObserver === "function" ? new MutationObserver(show) : null;
  return (a) => {
    if (!o) return;
    answer = a;
    o.disconnect();
    const status = a.querySelector('[data-trickle="status"]');
    const notice = a.querySelector('[data-trickle="notice"]');
    if (status) o.observe(status, { childList: true, characterData: true, subtree: true });
    if (notice) o.observe(notice, { attributes: true, attributeFilter: ["hidden"] });
    show();
  };
}

/**
 * chatAnswer makes a <trickle-answer> for chat: it takes the chat's color
 * scheme (trickle.css: the element need not ask the page's style for it),
 * every answer attribute the chat forwards with its lang and dir (the
 * contract's CHAT_FORWARDS), the chat's request headers and its own
 * words.
 */
export function chatAnswer(chat, headers) {
  const answer = document.createElement("trickle-answer");
  answer.dataset.trickleScheme = "inherit";
  for (const a of CHAT_FORWARDS) if (chat.hasAttribute(a)) answer.setAttribute(a, chat.getAttribute(a));
  answer.headers = headers;
  const own = elementStrings(chat);
  if (Object.keys(own).length > 0) answer.strings = own;
  return answer;
}
