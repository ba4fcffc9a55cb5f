// <trickle-chat>'s requests (chat.js), in jsdom with a stand-in
// <trickle-answer> that records each body it is asked and answers with a
// scripted message: what each protocol sends, turn after turn and tool
// round after tool round.

import { test } from "node:test";
import assert from "node:assert/strict";
import { window, document, installGlobals } from "./dom.js";

installGlobals();
globalThis.HTMLElement = window.HTMLElement;
globalThis.crypto ??= (await import("node:crypto")).webcrypto;

const asked = []; // the bodies, in order
const script = []; // the messages the next answers end with

class FakeAnswer extends window.HTMLElement {
  message = null;
  async ask(body) {
    asked.push(structuredClone(body));
    this.message = script.shift();
    return this.message?.status ?? "failed";
  }
  stop() {}
}
window.customElements.define("trickle-answer", FakeAnswer);
const { TrickleChat } = await import("../chat.js");
window.customElements.define("trickle-chat", TrickleChat);

const answer = (content, calls = []) => ({
  role: "assistant",
  content,
  status: "complete",
  incomplete: false,
  finish_reason: calls.length ? "tool_calls" : "stop",
  usage: null,
  tool_calls: calls.map(([id, name, args]) => ({ id, name, arguments: args, raw: JSON.stringify(args), complete: true })),
  thinking: "",
});

function chat(attrs = {}) {
  const c = document.createElement("trickle-chat");
  for (const [k, v] of Object.entries(attrs)) c.setAttribute(k, v);
  document.body.append(c);
  asked.length = 0;
  return c;
}

test("openai: the tools are declared in every request, the tool choice sent, the result goes back after its call", async () => {
  const c = chat({ model: "m1" });
  c.tools = {
    get_weather: {
      description: "The weather.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
      run: async ({ city }) => ({ city, temperature: 18 }),
    },
    ping: () => "pong",
  };
  c.toolChoice = "get_weather";
  script.push(answer("", [["c1", "get_weather", { city: "Lyon" }]]), answer("18 degrees."));
  await c.send("weather?");
  assert.equal(asked.length, 2);
  const decl = [
    { type: "function", function: { name: "get_weather", description: "The weather.", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
    { type: "function", function: { name: "ping", parameters: { type: "object" } } },
  ];
  for (const b of asked) {
    assert.deepEqual(b.tools, decl);
    assert.deepEqual(b.tool_choice, { type: "function", function: { name: "get_weather" } });
    assert.equal(b.model, "m1");
  }
  assert.deepEqual(asked[1].messages, [
    { role: "user", content: "weather?" },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Lyon"}' } }] },
    { role: "tool", tool_call_id: "c1", content: '{"city":"Lyon","temperature":18}' },
  ]);
  assert.throws(() => {
    c.tools = { bad: 3 };
  }, /chat.tools.bad must be a function or/);
});

test("openai: a failed turn is kept but not sent back", async () => {
  const c = chat();
  script.push({ ...answer(""), status: "failed" }, answer("Hi."));
  await c.send("hello");
  await c.send("hello?");
  assert.equal(c.messages.length, 4, "kept");
  assert.deepEqual(asked[1].messages, [
    { role: "user", content: "hello" },
    { role: "user", content: "hello?" },
  ]);
});

test("ai-sdk: DefaultChatTransport's body, the trigger and message id of each request", async () => {
  const c = chat({ protocol: "ai-sdk", model: "ignored" });
  assert.equal(c.protocol, "ai-sdk");
  c.chatId = "chat-7";
  c.tools = { get_weather: { run: async () => ({ temperature: 18 }) } };
  script.push(answer("Let me see.", [["c1", "get_weather", { city: "Lyon" }]]), answer("18 degrees."), answer("Again: 18."));
  await c.send("weather?");
  const hist = c.messages;
  await c.regenerate();
  const [first, round, again] = asked;
  assert.deepEqual(Object.keys(first).sort(), ["id", "messages", "trigger"], "no model, no tools: the route has them");
  assert.equal(first.id, "chat-7");
  assert.equal(first.trigger, "submit-message");
  const userId = first.messages[0].id;
  assert.ok(userId);
  assert.deepEqual(first.messages, [{ id: userId, role: "user", parts: [{ type: "text", text: "weather?" }] }]);
  assert.equal(round.trigger, "submit-message");
  assert.equal(round.messageId, round.messages[1].id, "the round goes on with the answer that called");
  assert.equal(round.messages[1].id, hist[1].id, "the id the history keeps");
  assert.deepEqual(round.messages[1].parts, [
    { type: "step-start" },
    { type: "text", text: "Let me see.", state: "done" },
    { type: "tool-get_weather", toolCallId: "c1", input: { city: "Lyon" }, state: "output-available", output: { temperature: 18 } },
  ]);
  assert.equal(again.trigger, "regenerate-message");
  assert.equal(again.messageId, hist[1].id, "the answer it replaces");
  assert.deepEqual(again.messages.map((m) => m.id), [userId]);
  assert.notEqual(c.messages[1].id, hist[1].id, "the new answer has an id of its own");
});

test("tools the page set before the element was defined are the chat's", async () => {
  const c = document.createElement("trickle-chat-late");
  c.tools = { ping: () => "pong" };
  c.toolChoice = "required";
  document.body.append(c);
  window.customElements.define("trickle-chat-late", class extends TrickleChat {});
  asked.length = 0;
  script.push(answer("", [["c1", "ping", {}]]), answer("pong it is."));
  await c.send("ping?");
  assert.equal(asked.length, 2, "the tool ran and the chat asked again");
  assert.deepEqual(asked[0].tools, [{ type: "function", function: { name: "ping", parameters: { type: "object" } } }]);
  assert.equal(asked[0].tool_choice, "required");
  assert.equal(asked[1].messages.at(-1).content, "pong");
});

// The approval question's parts in c, once it shows.
async function question(c) {
  for (let i = 0; i < 100; i++) {
    const box = c.querySelector('[data-trickle-chat="approval"]:not([data-decision])');
    if (box) return box;
    await new Promise((r) => setTimeout(r, 0));
  }
  throw new Error("no approval question came");
}

test("a tool that asks first shows the call and waits: Deny sends the refusal back and never runs it", async () => {
  const c = chat();
  let ran = 0;
  c.tools = { book_table: { needsApproval: true, run: () => (ran++, "booked") } };
  script.push(answer("", [["c1", "book_table", { restaurant: "Chez Nous", people: 2 }]]), answer("I did not book it."));
  const sent = c.send("book it");
  const box = await question(c);
  assert.equal(box.getAttribute("role"), "group");
  assert.equal(document.getElementById(box.getAttribute("aria-labelledby")).textContent, "Run book_table?");
  assert.deepEqual(JSON.parse(box.querySelector("pre code").textContent), { restaurant: "Chez Nous", people: 2 });
  const approve = box.querySelector('[data-trickle-chat="approve"]');
  assert.equal(document.activeElement, approve, "the question takes focus: the conversation waits on the reader");
  assert.equal(asked.length, 1, "nothing is asked while the reader decides");
  box.querySelector('[data-trickle-chat="deny"]').click();
  await sent;
  assert.equal(ran, 0, "a denied call never runs");
  assert.equal(box.querySelector('[data-trickle-chat="approval-result"]').textContent, "Denied: book_table did not run.");
  assert.equal(box.querySelector('[data-trickle-chat="approval-result"]').getAttribute("role"), "status");
  assert.equal(document.activeElement, c.querySelector('[data-trickle-chat="input"]'), "focus goes back to the composer");
  assert.equal(asked.length, 2);
  assert.deepEqual(asked[1].messages.at(-1), { role: "tool", tool_call_id: "c1", content: "The user denied this tool call; it did not run." });
});

test("needsApproval as a function of the arguments: asked only when it says so, and Approve runs the tool", async () => {
  const c = chat();
  const ran = [];
  c.tools = { pay: { needsApproval: ({ amount }) => amount > 100, run: ({ amount }) => (ran.push(amount), "paid") } };
  script.push(answer("", [["p1", "pay", { amount: 5 }]]), answer("Paid 5."));
  await c.send("pay 5");
  assert.deepEqual(ran, [5], "a small payment runs without asking");
  assert.equal(c.querySelector('[data-trickle-chat="approval"]'), null);
  script.push(answer("", [["p2", "pay", { amount: 500 }]]), answer("Paid 500."));
  const sent = c.send("pay 500");
  const box = await question(c);
  box.querySelector('[data-trickle-chat="approve"]').click();
  await sent;
  assert.deepEqual(ran, [5, 500]);
  assert.equal(box.dataset.decision, "approved");
  assert.deepEqual(asked.at(-1).messages.at(-1), { role: "tool", tool_call_id: "p2", content: "paid" });
});

test("Stop while a tool asks denies it: the call never runs and nothing more is asked", async () => {
  const c = chat({ protocol: "ai-sdk" });
  let ran = 0;
  c.tools = { book_table: { needsApproval: true, run: () => (ran++, "booked") } };
  script.push(answer("", [["c1", "book_table", { people: 2 }]]));
  const sent = c.send("book it");
  await question(c);
  c.stop();
  await sent;
  assert.equal(ran, 0);
  assert.equal(asked.length, 1, "a stopped chat asks nothing more");
  assert.equal(c.querySelector('[data-trickle-chat="approval"]').dataset.decision, "denied");
  const tool = c.messages.at(-1);
  assert.equal(tool.role, "tool");
  assert.equal(tool.denied, true);
});

test("ai-sdk: the route's tool-approval-request is asked the same way, and Deny goes back as approval-responded", async () => {
  const c = chat({ protocol: "ai-sdk" });
  const asking = { ...answer("I can book that.", [["call_b", "book_table", { people: 2 }]]), approvals: [{ id: "ap_1", tool_call_id: "call_b", reason: "tool_approval", message: null }] };
  script.push(asking, answer("I did not book it."));
  const sent = c.send("book a table");
  const box = await question(c);
  assert.equal(document.getElementById(box.getAttribute("aria-labelledby")).textContent, "Run book_table?");
  box.querySelector('[data-trickle-chat="deny"]').click();
  await sent;
  assert.equal(asked.length, 2, "the answer goes back at once");
  const last = asked[1].messages.at(-1);
  assert.equal(last.role, "assistant");
  assert.deepEqual(last.parts.find((p) => p.type === "tool-book_table"), {
    type: "tool-book_table", toolCallId: "call_b", state: "approval-responded", input: { people: 2 }, approval: { id: "ap_1", approved: false },
  });
  assert.equal(c.messages[1].approvals[0].approved, false, "the history keeps the decision");
  // The next turn: the denied call is settled, as useChat keeps it.
  script.push(answer("Anything else?"));
  await c.send("thanks");
  const part = asked[2].messages.flatMap((m) => m.parts).find((p) => p.type === "tool-book_table");
  assert.equal(part.state, "output-denied");
});

test("an AG-UI interrupt on a tool call is asked the same way; the OpenAI protocol keeps the decision for the page and asks nothing more", async () => {
  const c = chat();
  const interrupted = { ...answer("I can book it. ", [["call_book_1", "book_table", { restaurant: "Chez Nous", people: 2 }]]),
    finish_reason: "interrupt", approvals: [{ id: "int_1", tool_call_id: "call_book_1", reason: "tool_approval", message: "Book a table for 2 at Chez Nous?" }] };
  script.push(interrupted);
  const sent = c.send("book");
  const box = await question(c);
  box.querySelector('[data-trickle-chat="approve"]').click();
  await sent;
  assert.equal(asked.length, 1);
  assert.equal(c.messages[1].approvals[0].approved, true);
});

// A stored thread set at once (chat.messages) shows its newest turns in
// the same task and the older ones in batches after them: at every step
// each turn on the page is where it will be (in the messages' order) and
// carries its final place and the thread's full length, the newest turn
// is the thread's one stop, and at the end every turn is there, in order,
// and chat.messages reads back exactly what was set.
test("a long thread restored: the newest turns at once, the older ones in batches, each numbered as it will be", async () => {
  const c = chat();
  const msgs = [];
  for (let i = 0; i < 40; i++) {
    msgs.push({ role: "user", content: `question ${i}` });
    msgs.push({ role: "assistant", content: `answer ${i} `.repeat(100), status: "complete" });
  }
  const turns = () => [...c.querySelectorAll('[data-trickle-chat="turn"]')];
  const check = () => {
    const ts = turns();
    const idx = ts.map((t) => Number(t.dataset.index));
    assert.deepEqual(idx, [...idx].sort((a, b) => a - b), "in the messages' order");
    for (const t of ts) {
      assert.equal(t.getAttribute("aria-posinset"), String(Number(t.dataset.index) + 1), "its final place");
      assert.equal(t.getAttribute("aria-setsize"), String(msgs.length), "the whole thread's length");
    }
    assert.equal(ts.filter((t) => t.tabIndex === 0).length, 1, "one stop");
    assert.equal(ts.at(-1).tabIndex, 0, "the newest turn is the stop");
    return ts.length;
  };
  c.messages = msgs;
  const first = check();
  assert.ok(first > 0 && first < msgs.length, `the newest turns at once (${first}), not all`);
  assert.equal(turns().at(-1).dataset.index, String(msgs.length - 1));
  const seen = new Set([first]);
  for (let n = first; n < msgs.length; n = check()) {
    seen.add(n);
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.ok(seen.size > 2, "in several batches");
  assert.deepEqual(c.messages, msgs, "read back exactly");
  assert.equal(turns().at(-1).querySelector('[data-trickle-chat="regenerate"]').hidden, false, "Regenerate on the last answer");
  assert.equal(turns().at(-3).querySelector('[data-trickle-chat="regenerate"]').hidden, true, "and on no other");
});

// The older turns of a restored thread go into blocks of a few dozen
// (each laid out and painted on its own: a batch costs the page its block
// and the thread's few blocks, not every turn before it); the turns stay
// the thread's: in order, walked by the arrows across the blocks' edges,
// and Regenerate still takes off only the turns it replaces.
test("a restored thread's older turns come in blocks, in order, walked and cut as the others", async () => {
  const c = chat();
  const msgs = [];
  for (let i = 0; i < 100; i++) {
    msgs.push({ role: "user", content: `question ${i}` });
    msgs.push({ role: "assistant", content: `answer ${i}`, status: "complete" });
  }
  const turns = () => [...c.querySelectorAll('[data-trickle-chat="turn"]')];
  c.messages = msgs;
  while (turns().length < msgs.length) await new Promise((r) => setTimeout(r, 5));
  const feed = c.querySelector('[data-trickle-chat="turns"]');
  const blocks = [...feed.querySelectorAll('[data-trickle-chat="older"]')];
  assert.ok(blocks.length >= 2, `in blocks (${blocks.length})`);
  for (const b of blocks) {
    assert.equal(b.parentElement, feed, "a block is the feed's");
    assert.ok(b.children.length > 0 && b.children.length <= 32, `a few dozen turns a block (${b.children.length})`);
  }
  const list = turns();
  for (const t of list) assert.ok(t.parentElement === feed || blocks.includes(t.parentElement), "each turn is the feed's or a block's");
  assert.deepEqual(list.map((t) => Number(t.dataset.index)), msgs.map((_, i) => i), "every turn, in the messages' order");
  assert.deepEqual(list.map((t) => t.getAttribute("aria-posinset")), msgs.map((_, i) => String(i + 1)));
  list.at(-1).focus();
  const key = (k) => document.activeElement.dispatchEvent(new window.KeyboardEvent("keydown", { key: k, bubbles: true, cancelable: true }));
  for (let i = list.length - 2; i >= 0; i--) {
    assert.equal(key("ArrowUp"), false, "the arrow is the thread's");
    assert.equal(document.activeElement, list[i], `ArrowUp → turn ${i + 1}`);
  }
  key("End");
  assert.equal(document.activeElement, list.at(-1), "End → the last turn");
  key("Home");
  assert.equal(document.activeElement, list[0], "Home → the first, in the first block");
  script.push(answer("answer 99 again"));
  await c.regenerate();
  const after = turns();
  assert.equal(after.length, msgs.length);
  assert.ok(after.slice(0, -1).every((t, k) => t === list[k]), "the earlier turns are the same elements");
  assert.equal(after.at(-1).querySelector("trickle-answer").message.content, "answer 99 again");
  assert.deepEqual(c.messages.slice(0, -1), msgs.slice(0, -1));
});

// Edit takes the last question off a block of older turns where it was
// alone: the block goes with it (an empty block would leave its gap).
test("edit leaves no empty block of older turns", async () => {
  const c = chat();
  const msgs = [];
  for (let i = 0; i < 17; i++) {
    msgs.push({ role: "user", content: `question ${i}` });
    msgs.push({ role: "assistant", content: i === 16 ? "long ".repeat(1500) : `answer ${i}`, status: "complete" });
  }
  const turns = () => [...c.querySelectorAll('[data-trickle-chat="turn"]')];
  const blocks = () => [...c.querySelectorAll('[data-trickle-chat="older"]')];
  c.messages = msgs;
  while (turns().length < msgs.length) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(blocks().map((b) => b.children.length), [32, 1], "33 older turns: the last question alone in the second block");
  script.push(answer("answer 16, edited"));
  await c.edit("question 16, edited");
  assert.deepEqual(blocks().map((b) => b.children.length), [32], "its block went with it");
  assert.deepEqual(turns().map((t) => t.dataset.index), msgs.map((_, i) => String(i)));
  assert.equal(turns().at(-2).querySelector('[data-trickle-chat="text"]').textContent, "question 16, edited");
});

// A batch of older turns brings as much as the last batch's frames say
// fits in the page's time, not a fixed count: while every frame takes the
// page 30 ms, the batches shrink to one answer; while frames are quick,
// they grow. (The frames' cost is read from the frames themselves: from
// an animation frame's start to the end of its rendering.)
test("a restored thread's batches are sized by what the last batch's frames cost", async () => {
  const run = async (frameMs) => {
    const c = chat();
    const msgs = [];
    for (let i = 0; i < 60; i++) {
      msgs.push({ role: "user", content: `question ${i}` });
      msgs.push({ role: "assistant", content: `answer ${i} `.repeat(80), status: "complete" });
    }
    const feed = c.querySelector('[data-trickle-chat="turns"]');
    const count = () => feed.querySelectorAll('[data-trickle-chat="turn"]').length;
    const batches = [];
    let seen = 0;
    const mo = new window.MutationObserver(() => {
      const n = count();
      if (n > seen) batches.push(n - seen);
      seen = n;
    });
    const raf = globalThis.requestAnimationFrame;
    globalThis.requestAnimationFrame = (fn) =>
      setTimeout(() => {
        const t = performance.now();
        while (performance.now() - t < frameMs);
        fn(t);
      }, 0);
    try {
      c.messages = msgs;
      seen = count();
      mo.observe(feed, { childList: true, subtree: true });
      while (count() < msgs.length) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 0));
    } finally {
      mo.disconnect();
      globalThis.requestAnimationFrame = raf;
    }
    return batches;
  };
  const slow = await run(30);
  assert.ok(slow.length > 3, `several batches (${slow})`);
  assert.ok(slow.slice(1).every((n) => n <= slow[0]), `slow frames: no batch larger than the first (${slow})`);
  // A question is short: one goes with the answer after it.
  assert.ok(slow.slice(-10).every((n) => n <= 2), `slow frames: one answer a batch at the end (${slow})`);
  const quick = await run(0);
  assert.ok(Math.max(...quick.slice(1)) > quick[0], `quick frames: the batches grow (${quick})`);
});

// Regenerate and Edit take off the page only the turns they replace: the
// earlier turns stay the same elements (a long thread is not rebuilt and
// shown again to answer its last question once more).
test("regenerate and edit keep the earlier turns as they are", async () => {
  const c = chat();
  const turns = () => [...c.querySelectorAll('[data-trickle-chat="turn"]')];
  c.messages = [
    { role: "user", content: "q1" },
    { role: "assistant", content: "a1", status: "complete" },
    { role: "user", content: "q2" },
    { role: "assistant", content: "a2", status: "complete" },
  ];
  const before = turns();
  assert.equal(before.length, 4);
  script.push(answer("a2 again"));
  await c.regenerate();
  const after = turns();
  assert.equal(after.length, 4);
  assert.ok(after.slice(0, 3).every((t, k) => t === before[k]), "the first three turns are the same elements");
  assert.notEqual(after[3], before[3], "the last answer is a new one");
  assert.equal(after[3].querySelector("trickle-answer").message.content, "a2 again");
  script.push(answer("a3"));
  await c.edit("q2, edited");
  const edited = turns();
  assert.equal(edited.length, 4);
  assert.ok(edited.slice(0, 2).every((t, k) => t === before[k]), "the turns before the question edited stay");
  assert.equal(edited[2].querySelector('[data-trickle-chat="text"]').textContent, "q2, edited");
  assert.deepEqual(c.messages.map((m) => m.content), ["q1", "a1", "q2, edited", "a3"]);
  assert.deepEqual(edited.map((t) => t.getAttribute("aria-posinset")), ["1", "2", "3", "4"]);
});
