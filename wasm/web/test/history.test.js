// <trickle-chat>'s history (history.js): what a page may set, what goes
// back to the model, and which messages are turns.

import { test } from "node:test";
import assert from "node:assert/strict";

const { checkMessages, toRequest, turnsOf } = await import("../history.js");

const NOTE = "[cut off]";

test("a kept answer goes back with only what the provider knows", () => {
  const m = { role: "assistant", content: "Hi.", status: "complete", incomplete: false, finish_reason: "stop", usage: null, tool_calls: [], thinking: "hmm" };
  assert.deepEqual(toRequest(NOTE)(m), { role: "assistant", content: "Hi." });
});

test("a cut-off answer goes back marked as cut off, its text kept", () => {
  const send = toRequest(NOTE);
  assert.deepEqual(send({ role: "assistant", content: "It was going", incomplete: true }), { role: "assistant", content: `It was going\n\n${NOTE}` });
  assert.deepEqual(send({ role: "assistant", content: "", incomplete: true }), { role: "assistant", content: NOTE });
});

test("tool calls go back in the OpenAI shape with their arguments' text, tool results with their call's id", () => {
  const send = toRequest(NOTE);
  const m = {
    role: "assistant",
    content: "",
    tool_calls: [
      { id: "c1", name: "get_weather", arguments: { city: "Lyon" }, raw: '{"city": "Lyon"}', complete: true },
      { id: "c2", name: "half", arguments: null, raw: '{"x"', complete: false },
      { id: "c3", name: "stored", arguments: { a: 1 }, raw: "" },
    ],
  };
  assert.deepEqual(send(m).tool_calls, [
    { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city": "Lyon"}' } },
    { id: "c3", type: "function", function: { name: "stored", arguments: '{"a":1}' } },
  ]);
  assert.deepEqual(send({ role: "tool", tool_call_id: "c1", name: "get_weather", content: "21" }), { role: "tool", tool_call_id: "c1", content: "21" });
  assert.deepEqual(send({ role: "user", content: "hi", extra: 1 }), { role: "user", content: "hi" });
});

test("only the reader's messages and the answers are turns", () => {
  const msgs = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "weather?" },
    { role: "assistant", content: "" },
    { role: "tool", tool_call_id: "c1", content: "21" },
    { role: "assistant", content: "21 degrees." },
  ];
  assert.deepEqual(turnsOf(msgs), [
    { role: "user", index: 1 },
    { role: "assistant", index: 2 },
    { role: "assistant", index: 4 },
  ]);
});

test("a history the page sets is copied and checked, each mistake named", () => {
  const list = [{ role: "user", content: "hi" }, { role: "assistant", content: null }];
  const got = checkMessages(list);
  assert.deepEqual(got, [{ role: "user", content: "hi" }, { role: "assistant", content: "" }]);
  got[0].content = "changed";
  assert.equal(list[0].content, "hi", "a copy");
  for (const [bad, want] of [
    [{}, /must be an array/],
    [[null], /\[0\] is not a message object/],
    [[{ role: "robot", content: "x" }], /\[0\]\.role must be one of/],
    [[{ role: "user", content: 3 }], /\[0\]\.content must be a string/],
    [[{ role: "user", content: "q" }, { role: "tool", content: "r" }], /\[1\] is a tool message without a tool_call_id/],
  ]) {
    assert.throws(() => checkMessages(bad), want);
  }
});
