// <trickle-chat> hands its attributes to each of its answers (issue 31:
// it forwarded `images` where the answer reads `image-origins`, and never
// ws-endpoint, show-metrics or speak). The chat runs in jsdom with a
// stand-in <trickle-answer> that records what it was given, and the real
// Answer then builds from that element the command Go would get.

import { test } from "node:test";
import assert from "node:assert/strict";
import { window, document, installGlobals } from "./dom.js";

installGlobals();
// chat.js picks its base class when imported: the test DOM's.
globalThis.HTMLElement = window.HTMLElement;
globalThis.customElements = window.customElements;
globalThis.location = window.location;
globalThis.ResizeObserver ??= class {
  observe() {}
  unobserve() {}
  disconnect() {}
};

const { TrickleChat } = await import("../chat.js");
const { Answer, ensureParts } = await import("../answer.js");
const C = await import("../contract.js");

// The stand-in answer: its attributes at ask(), and no message (the turn
// then ends).
const asked = [];
class StandIn extends window.HTMLElement {
  headers = {};
  ask() {
    asked.push(this);
    return Promise.resolve("complete");
  }
  get message() {
    return null;
  }
  stop() {}
}
customElements.define("trickle-answer", StandIn);
customElements.define("trickle-chat", TrickleChat);

// A value for each of the answer's attributes, as a page would set it.
const values = {
  [C.ATTR_ENDPOINT]: "https://models.example/v1/chat/completions",
  [C.ATTR_TRANSPORT]: "websocket",
  [C.ATTR_WS_ENDPOINT]: "wss://models.example/v1/ws",
  [C.ATTR_DIALECT]: "anthropic",
  [C.ATTR_ANNOUNCE]: "complete",
  [C.ATTR_SPEAK]: "",
  [C.ATTR_MODEL]: "a-model",
  [C.ATTR_IMAGE_ORIGINS]: "https://images.example",
  [C.ATTR_SHOW_METRICS]: "",
  [C.ATTR_HIGHLIGHT]: "",
  [C.ATTR_IDLE_TIMEOUT]: "30",
  [C.ATTR_WORKER]: "off",
  lang: "fr",
  dir: "rtl",
};

async function ask(attrs) {
  const chat = document.createElement("trickle-chat");
  for (const [k, v] of Object.entries(attrs)) chat.setAttribute(k, v);
  document.body.append(chat);
  asked.length = 0;
  await chat.send("hi");
  assert.equal(asked.length, 1, "one answer asked");
  return asked[0];
}

test("every attribute set on a chat reaches its answer, as the answer reads it", async () => {
  assert.deepEqual(Object.keys(values).sort(), [...C.CHAT_FORWARDS].sort(), "the test sets every attribute a chat forwards");
  const answer = await ask(values);
  for (const [name, value] of Object.entries(values)) {
    assert.equal(answer.getAttribute(name), value, `${name} reached the answer`);
  }
});

test("what the chat's answer sends Go carries the chat's image origins, metrics and WebSocket URL", async () => {
  const el = await ask({
    [C.ATTR_ENDPOINT]: "https://models.example/v1/chat/completions", // the test page has no base URL
    [C.ATTR_IMAGE_ORIGINS]: "https://images.example",
    [C.ATTR_SHOW_METRICS]: "",
    [C.ATTR_WS_ENDPOINT]: "wss://models.example/v1/ws",
    [C.ATTR_SPEAK]: "",
  });
  ensureParts(el);
  const cmd = new Answer({ els: new Map(), send() {} }, el).request();
  assert.equal(cmd.images, "https://images.example");
  assert.equal(cmd.metrics, true);
  assert.equal(cmd.ws, "wss://models.example/v1/ws");
  assert.ok(el.hasAttribute(C.ATTR_SPEAK), "speak reached the answer (the page reads it)");
});

test("an attribute the chat lacks is not set on its answer", async () => {
  const answer = await ask({ [C.ATTR_MODEL]: "m" });
  // data-trickle-scheme is the chat's own mark (its answers take its
  // color scheme), not a forwarded attribute.
  assert.deepEqual(
    [...answer.attributes].map((a) => a.name).filter((n) => n !== "data-trickle-scheme"),
    [C.ATTR_MODEL],
  );
});

test("the chat forwards exactly the answer's attributes it takes, and lang and dir", () => {
  assert.deepEqual([...C.CHAT_FORWARDS], [...C.CHAT_ATTRIBUTES.filter((a) => C.ANSWER_ATTRIBUTES.includes(a)), "lang", "dir"]);
  for (const [name] of C.COMMAND_ATTRIBUTES) assert.ok(C.CHAT_FORWARDS.includes(name), `${name}, which Go reads, is forwarded`);
});

// React 19 sets a JSX prop as a property when the element has a property
// of that name, and as an attribute otherwise: an attribute whose name is
// also a read-only property (`protocol` was) threw "Cannot set property"
// as React rendered <trickle-chat protocol="ai-sdk">.
test("every attribute that is also a property of the chat can be set, and sets the attribute", () => {
  const setters = [];
  for (const name of C.CHAT_ATTRIBUTES) {
    let proto = TrickleChat.prototype;
    let d;
    while (proto && !(d = Object.getOwnPropertyDescriptor(proto, name))) proto = Object.getPrototypeOf(proto);
    if (!d) continue;
    assert.ok(d.set || d.writable, `${name} is a property of <trickle-chat> with no setter`);
    setters.push(name);
  }
  assert.ok(setters.includes("protocol"), "protocol is a property");
  const c = document.createElement("trickle-chat");
  c.protocol = "ai-sdk";
  assert.equal(c.getAttribute("protocol"), "ai-sdk");
  assert.equal(c.protocol, "ai-sdk");
  c.protocol = "openai";
  assert.equal(c.protocol, "openai");
});
