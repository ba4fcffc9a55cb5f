// Walking <trickle-chat>'s thread (thread.js through chat.js), in jsdom
// with a stand-in <trickle-answer>: the thread is one tab stop, the arrows,
// Home and End move between turns, Enter and Escape go back to the
// composer, each turn is named by speaker and place and described by its
// text, and each turn's actions are there only where they may be used.

import { test } from "node:test";
import assert from "node:assert/strict";
import { window, document, installGlobals } from "./dom.js";

installGlobals();
globalThis.HTMLElement = window.HTMLElement;
globalThis.MutationObserver = window.MutationObserver;
globalThis.getComputedStyle = window.getComputedStyle;
globalThis.crypto ??= (await import("node:crypto")).webcrypto;
const clipboard = [];
Object.defineProperty(globalThis, "navigator", { value: { clipboard: { writeText: async (t) => clipboard.push(t) } }, configurable: true });

let hold = null; // a promise the next ask waits for
const script = [];

// FakeAnswer has the parts the chat reads (content, tools, status,
// notice) and answers with a scripted message.
class FakeAnswer extends window.HTMLElement {
  #m = null;
  text = "";
  get message() {
    return this.#m;
  }
  set message(m) {
    this.#m = m;
    this.text = m?.content ?? "";
    this.shown = m;
  }
  connectedCallback() {
    if (this.firstChild) return;
    this.innerHTML = '<div data-trickle="content"></div><div data-trickle="tools" hidden></div><div data-trickle="notice" hidden></div><div data-trickle="status" aria-hidden="true"></div>';
  }
  set shown(m) {
    const c = this.querySelector('[data-trickle="content"]');
    if (c) c.textContent = m?.content ?? "";
  }
  async ask() {
    const status = this.querySelector('[data-trickle="status"]');
    status.textContent = "Assistant is responding.";
    if (hold) await hold;
    this.message = script.shift();
    status.textContent = this.message.status === "stopped" ? "Answer stopped." : "Answer complete.";
    if (this.message.status === "stopped") this.querySelector('[data-trickle="notice"]').hidden = false;
    return this.message.status;
  }
  stop() {}
}
window.customElements.define("trickle-answer", FakeAnswer);
const { TrickleChat } = await import("../chat.js");
window.customElements.define("trickle-chat", TrickleChat);

const said = (content, status = "complete") => ({ role: "assistant", content, status, incomplete: status !== "complete", finish_reason: "stop", usage: null, tool_calls: [], thinking: "" });
const SIX = [
  { role: "user", content: "one" },
  said("**Two.**"),
  { role: "user", content: "three" },
  said("Four."),
  { role: "user", content: "five" },
  said("Six."),
];

function chat(messages = SIX) {
  document.body.replaceChildren();
  const c = document.createElement("trickle-chat");
  document.body.append(c);
  c.messages = messages;
  return c;
}

const q = (c, s) => [...c.querySelectorAll(s)];
const turns = (c) => q(c, '[data-trickle-chat="turn"]');
const key = (target, k, init = {}) => target.dispatchEvent(new window.KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true, ...init }));
// inTabOrder is every element a Tab can reach inside the thread.
const inTabOrder = (c) => q(c, '[data-trickle-chat="thread"] *').filter((e) => e.tabIndex >= 0 && !e.hidden && (e.matches("button, a[href], textarea") || e.hasAttribute("tabindex")));

test("each turn is an article named by its speaker and place, described by its text, in a named feed", () => {
  const c = chat();
  const list = turns(c);
  assert.deepEqual(
    list.map((t) => t.getAttribute("aria-label")),
    ["You said, 1 of 6", "The assistant said, 2 of 6", "You said, 3 of 6", "The assistant said, 4 of 6", "You said, 5 of 6", "The assistant said, 6 of 6"],
  );
  for (const [i, t] of list.entries()) {
    assert.equal(t.getAttribute("role"), "article");
    assert.equal(t.getAttribute("aria-posinset"), String(i + 1));
    assert.equal(t.getAttribute("aria-setsize"), "6");
    const described = t.getAttribute("aria-describedby").split(" ").map((id) => document.getElementById(id).textContent).join(" ");
    assert.equal(described.trim(), String(SIX[i].content), "described by its own text");
  }
  const feed = c.querySelector('[data-trickle-chat="turns"]');
  assert.equal(feed.getAttribute("role"), "feed");
  assert.equal(feed.getAttribute("aria-label"), "Conversation");
  assert.match(document.getElementById(feed.getAttribute("aria-describedby")).textContent, /^Page Up and Page Down, or the up and down arrows, move between messages/);
  // The page's words, and a new turn renumbers every turn.
  c.strings = { chatTurnAssistant: "Bot, {n}/{total}", chatTurnYou: "Me, {n}/{total}" };
  assert.equal(turns(c)[1].getAttribute("aria-label"), "Bot, 2/6");
  c.messages = [...SIX, { role: "user", content: "seven" }];
  assert.deepEqual(turns(c).map((t) => t.getAttribute("aria-label")).slice(-2), ["Bot, 6/7", "Me, 7/7"]);
});

test("the thread is one tab stop: the arrows, Home and End walk it, Enter and Escape go back to the composer", () => {
  const c = chat();
  const list = turns(c);
  const input = c.querySelector("textarea");
  const stops = () => inTabOrder(c);
  assert.deepEqual(stops().filter((e) => e.matches('[data-trickle-chat="turn"]')), [list[5]], "the newest turn is the stop");
  assert.ok(stops().every((e) => list[5].contains(e)), "only it and its actions are in the tab order");
  list[5].focus();
  const walk = [
    ["ArrowUp", 4],
    ["ArrowUp", 3],
    ["ArrowDown", 4],
    ["Home", 0],
    ["ArrowUp", 0],
    ["End", 5],
    ["ArrowDown", 5],
    ["ArrowUp", 4],
  ];
  for (const [k, want] of walk) {
    assert.equal(key(document.activeElement, k), false, `${k} is the thread's`);
    assert.equal(document.activeElement, list[want], `${k} → turn ${want + 1}`);
    assert.deepEqual(stops().filter((e) => e.matches('[data-trickle-chat="turn"]')), [list[want]], "the stop moved with the focus");
  }
  assert.equal(key(document.activeElement, "ArrowUp", { shiftKey: true }), true, "a modified key is not the thread's");
  assert.equal(key(document.activeElement, "Escape"), false);
  assert.equal(document.activeElement, input, "Escape: the composer");
  list[2].focus();
  key(list[2], "Enter");
  assert.equal(document.activeElement, input, "Enter: the composer");
  assert.deepEqual(stops().filter((e) => e.matches('[data-trickle-chat="turn"]')), [list[2]], "the stop stays where the reader left it");
});

test("Page Up and Page Down walk the thread as the arrows do (the feed pattern's keys), from a turn or its actions", () => {
  const c = chat();
  const list = turns(c);
  const labels = list.map((t) => t.getAttribute("aria-label"));
  const described = list.map((t) => t.getAttribute("aria-describedby"));
  list[5].focus();
  const walk = [
    ["PageUp", 4],
    ["PageUp", 3],
    ["PageUp", 2],
    ["PageUp", 1],
    ["PageUp", 0],
    ["PageUp", 0],
    ["PageDown", 1],
    ["PageDown", 2],
    ["PageDown", 3],
    ["PageDown", 4],
    ["PageDown", 5],
    ["PageDown", 5],
  ];
  for (const [k, want] of walk) {
    assert.equal(key(document.activeElement, k), false, `${k} is the thread's`);
    assert.equal(document.activeElement, list[want], `${k} → turn ${want + 1}`);
    assert.deepEqual(inTabOrder(c).filter((e) => e.matches('[data-trickle-chat="turn"]')), [list[want]], "the stop moved with the focus");
  }
  assert.deepEqual(list.map((t) => t.getAttribute("aria-label")), labels, "no label changed");
  assert.deepEqual(list.map((t) => t.getAttribute("aria-describedby")), described, "no description changed");
  const copy = list[3].querySelector('[data-trickle-chat="copy-answer"]');
  list[3].focus();
  copy.focus();
  key(copy, "PageDown");
  assert.equal(document.activeElement, list[4], "Page Down from an action: the next turn");
  for (const mod of ["shiftKey", "altKey", "ctrlKey", "metaKey"]) {
    assert.equal(key(document.activeElement, "PageUp", { [mod]: true }), true, `${mod}+Page Up is not the thread's`);
    assert.equal(document.activeElement, list[4]);
  }
});

test("Ctrl+Home leaves the feed for what can take focus before it, Ctrl+End for the composer after it", () => {
  const c = chat();
  const list = turns(c);
  const input = c.querySelector("textarea");
  list[2].focus();
  assert.equal(key(list[2], "Home", { ctrlKey: true }), true, "with nothing focusable before the feed, Ctrl+Home is the browser's");
  assert.equal(document.activeElement, list[2]);
  // The page's own controls before the chat: the nearest one a Tab reaches.
  const far = document.createElement("button");
  const near = document.createElement("a");
  near.href = "#top";
  const skipped = [document.createElement("button"), document.createElement("input"), document.createElement("span")];
  skipped[0].disabled = true;
  skipped[1].tabIndex = -1;
  skipped[2].hidden = true;
  skipped[2].append(document.createElement("button"));
  document.body.prepend(far, near, ...skipped);
  assert.equal(key(list[2], "Home", { ctrlKey: true }), false, "Ctrl+Home is the thread's");
  assert.equal(document.activeElement, near, "Ctrl+Home: the last control before the feed");
  list[4].focus();
  const edit = list[4].querySelector('[data-trickle-chat="edit"]');
  edit.focus();
  assert.equal(key(edit, "End", { ctrlKey: true }), false, "Ctrl+End is the thread's, from an action too");
  assert.equal(document.activeElement, input, "Ctrl+End: the composer, the feed's next stop");
  assert.deepEqual(inTabOrder(c).filter((e) => e.matches('[data-trickle-chat="turn"]')), [list[4]], "the stop stays where the reader left it");
  list[1].focus();
  key(list[1], "End");
  assert.equal(document.activeElement, list[5], "End without Ctrl: still the newest turn");
});

test("an answer's own controls are out of the tab order but in the stop's turn, and Tab from outside lands on the stop", () => {
  const c = chat();
  const list = turns(c);
  const link = document.createElement("a");
  link.href = "#x";
  link.textContent = "a link";
  list[1].querySelector('[data-trickle="content"]').append(link);
  c.relabel();
  assert.equal(link.getAttribute("tabindex"), "-1", "another turn's link is out of the tab order");
  assert.deepEqual(inTabOrder(c).filter((e) => !list[5].contains(e)), [], "nothing outside the stop's turn is");
  list[5].focus();
  key(list[5], "ArrowUp");
  key(list[4], "ArrowUp");
  key(list[3], "ArrowUp");
  key(list[2], "ArrowUp");
  assert.equal(document.activeElement, list[1]);
  assert.equal(link.hasAttribute("tabindex"), false, "the stop's own link is back, as it was");
  key(list[1], "Escape");
  // A Tab from the composer that lands inside another turn goes to the stop.
  key(document.activeElement, "ArrowUp");
  list[1].focus();
  key(list[1], "End");
  key(list[5], "Escape");
  link.focus();
  assert.equal(document.activeElement, list[5], "Tab from outside lands on the thread's one stop");
});

test("the focused turn's actions: labelled icon buttons, Copy on answers, Regenerate on the last, Edit on the last question; the arrows work from them", async () => {
  const c = chat();
  const list = turns(c);
  const visible = (t) => q(t, '[data-trickle-chat="actions"] > button').filter((b) => !b.hidden).map((b) => b.dataset.trickleChat);
  assert.deepEqual(list.map(visible), [[], ["copy-answer"], [], ["copy-answer"], ["edit"], ["copy-answer", "regenerate"]]);
  for (const b of q(c, '[data-trickle-chat="actions"] > button')) {
    const name = b.querySelector('[data-trickle-chat="action-label"]').textContent;
    assert.ok(name, "named");
    assert.equal(b.title, name, "and its tooltip says it");
    assert.equal(b.querySelector("svg").getAttribute("aria-hidden"), "true", "the picture is not read");
  }
  list[1].focus();
  const copy = list[1].querySelector('[data-trickle-chat="copy-answer"]');
  assert.equal(copy.tabIndex, 0, "the focused turn's actions are in the tab order");
  assert.equal(list[3].querySelector('[data-trickle-chat="copy-answer"]').tabIndex, -1, "another turn's are not");
  copy.focus();
  copy.click();
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(clipboard, ["**Two.**"], "the answer as markdown");
  assert.equal(copy.querySelector('[data-trickle-chat="action-label"]').textContent, "Copied");
  assert.equal(key(copy, "Enter"), true, "Enter on a button presses it, the thread leaves it alone");
  key(copy, "ArrowDown");
  assert.equal(document.activeElement, list[2], "the arrows move on from an action too");
  const edit = list[4].querySelector('[data-trickle-chat="edit"]');
  edit.click();
  assert.equal(document.activeElement, c.querySelector("textarea"));
  assert.equal(c.querySelector("textarea").value, "five", "Edit puts the question in the composer");
});

test("no actions on an answer being written, no Regenerate or Edit while a newer turn streams; one status line, Stop in Send's place", async () => {
  const c = chat();
  const status = c.querySelector('[data-trickle-chat="status"]');
  const send = c.querySelector('[data-trickle-chat="send"]');
  const stop = c.querySelector('[data-trickle-chat="stop"]');
  let release;
  hold = new Promise((r) => (release = r));
  script.push(said("Eight."));
  const done = c.send("seven");
  await new Promise((r) => setTimeout(r, 0));
  const list = turns(c);
  const visible = (t) => q(t, '[data-trickle-chat="actions"] > button').filter((b) => !b.hidden).map((b) => b.dataset.trickleChat);
  assert.deepEqual(visible(list.at(-1)), [], "the answer being written has none");
  assert.ok(list.every((t) => !visible(t).includes("regenerate") && !visible(t).includes("edit")), "no Regenerate, no Edit while it streams");
  assert.ok(visible(list[5]).includes("copy-answer"), "an older answer can still be copied");
  assert.equal(status.textContent, "Assistant is responding.");
  assert.equal(status.getAttribute("aria-hidden"), "true", "the screen reader hears each answer's own status");
  assert.deepEqual([send.hidden, stop.hidden], [true, false], "Stop in the composer, in Send's place");
  hold = null;
  release();
  await done;
  assert.deepEqual(visible(turns(c).at(-1)), ["copy-answer", "regenerate"]);
  assert.equal(status.textContent, "Answer complete.", "once, for the chat");
  assert.deepEqual([send.hidden, stop.hidden], [false, true]);
  // A stopped answer's notice says it: the line says nothing more.
  script.push(said("Ni", "stopped"));
  await c.send("nine");
  assert.equal(status.textContent, "");
  assert.equal(q(c, '[data-trickle-chat="status"]').length, 1, "one status line");
});
