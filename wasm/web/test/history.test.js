// <trickle-chat>'s history (history.js): what a page may set, what goes
// back to the model, and which messages are turns.

import { test } from "node:test";
import assert from "node:assert/strict";

const { checkMessages, toRequest, turnsOf, requestMessages, uiMessages, checkTools, runnerOf, toolDeclarations, toolChoiceOf } = await import("../history.js");

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

test("a failed turn stays in the thread but is not sent back as an empty assistant message", () => {
  const failed = { role: "assistant", content: "", status: "failed", incomplete: false, tool_calls: [] };
  const msgs = [{ role: "user", content: "hi" }, failed, { role: "user", content: "again?" }];
  assert.deepEqual(requestMessages(msgs, NOTE), [{ role: "user", content: "hi" }, { role: "user", content: "again?" }]);
  assert.equal(turnsOf(msgs).length, 3, "the reader still sees it");
  // Stopped before its first word: nothing to send either.
  assert.deepEqual(requestMessages([msgs[0], { role: "assistant", content: "", status: "stopped" }], NOTE), [msgs[0]]);
  // A failed turn with text goes back flagged as cut off.
  assert.deepEqual(requestMessages([msgs[0], { role: "assistant", content: "Half", status: "failed", incomplete: true }], NOTE)[1], {
    role: "assistant",
    content: `Half\n\n${NOTE}`,
  });
});

test("every assistant message sent has content or tool calls, and every call its result right after it", () => {
  const call = (id, complete = true) => ({ id, name: "get_weather", arguments: {}, raw: "{}", complete });
  const histories = [
    [{ role: "user", content: "q" }, { role: "assistant", content: "", tool_calls: [call("a")] }, { role: "tool", tool_call_id: "a", content: "1" }, { role: "assistant", content: "done" }],
    // the page had no tool for the call: the call is left out, and so is the empty answer
    [{ role: "user", content: "q" }, { role: "assistant", content: "", tool_calls: [call("a")] }, { role: "user", content: "q2" }],
    // one of two calls answered
    [{ role: "user", content: "q" }, { role: "assistant", content: "Let me see.", tool_calls: [call("a"), call("b")] }, { role: "tool", tool_call_id: "b", content: "2" }],
    // a result whose call was cut off mid-arguments
    [{ role: "user", content: "q" }, { role: "assistant", content: "", tool_calls: [call("a", false)] }, { role: "tool", tool_call_id: "a", content: "1" }],
    // a stored tool message with no call before it
    [{ role: "user", content: "q" }, { role: "tool", tool_call_id: "x", content: "1" }],
  ];
  for (const h of histories) {
    // every prefix of the history, as each turn sends it
    for (let n = 1; n <= h.length; n++) {
      const out = requestMessages(h.slice(0, n), NOTE);
      out.forEach((m, i) => {
        if (m.role === "assistant") {
          assert.ok(m.content !== "" || m.tool_calls?.length > 0, `${JSON.stringify(out)}: [${i}] is empty`);
          for (const [k, c] of (m.tool_calls ?? []).entries()) {
            assert.equal(out[i + 1 + k]?.role, "tool", `call ${c.id} is answered right after`);
            assert.equal(out[i + 1 + k].tool_call_id, c.id);
          }
        }
        if (m.role === "tool") {
          const owner = out.slice(0, i).findLast((p) => p.role !== "tool");
          assert.ok(owner?.tool_calls?.some((c) => c.id === m.tool_call_id), `${JSON.stringify(out)}: [${i}] answers no call`);
        }
      });
    }
  }
  assert.deepEqual(requestMessages(histories[2], NOTE)[1].tool_calls.map((c) => c.id), ["b"]);
});

test("tools are declared as OpenAI tools, with a description and a JSON Schema, beside plain functions", () => {
  const weather = {
    description: "The weather in a place.",
    parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
    run: ({ location }) => ({ location, temperature: 18 }),
  };
  const tools = checkTools({ get_weather: weather, ping: () => "pong" });
  assert.deepEqual(toolDeclarations(tools), [
    { type: "function", function: { name: "get_weather", description: "The weather in a place.", parameters: weather.parameters } },
    { type: "function", function: { name: "ping", parameters: { type: "object" } } },
  ]);
  assert.notEqual(toolDeclarations(tools)[0].function.parameters, weather.parameters, "a copy");
  assert.deepEqual(runnerOf(tools.get_weather)({ location: "Lyon" }), { location: "Lyon", temperature: 18 });
  assert.equal(runnerOf(tools.ping)(), "pong");
  assert.equal(runnerOf({ description: "no run" }), null);
  for (const [bad, want] of [
    [[], /must be an object/],
    [{ "get weather": () => 1 }, /name "get weather"/],
    [{ x: 3 }, /chat.tools.x must be a function or/],
    [{ x: { description: "d" } }, /chat.tools.x must be a function or/],
    [{ x: { run() {}, parameters: "object" } }, /parameters must be a JSON Schema object/],
  ]) {
    assert.throws(() => checkTools(bad), want);
  }
  assert.deepEqual(checkTools(null), {});
});

test("toolChoice becomes OpenAI's tool_choice", () => {
  assert.equal(toolChoiceOf(undefined), undefined);
  assert.equal(toolChoiceOf(""), undefined);
  for (const c of ["auto", "none", "required"]) assert.equal(toolChoiceOf(c), c);
  assert.deepEqual(toolChoiceOf("get_weather"), { type: "function", function: { name: "get_weather" } });
  const obj = { type: "function", function: { name: "x" } };
  assert.deepEqual(toolChoiceOf(obj), obj);
});

test("the history as the AI SDK's UI messages: parts, one message per tool round, tool parts with their output", () => {
  const msgs = [
    { role: "system", content: "Be brief." },
    { role: "user", content: "weather in Lyon?", id: "u1" },
    {
      role: "assistant",
      content: "Let me look.",
      thinking: "The tool knows.",
      status: "complete",
      tool_calls: [
        { id: "c1", name: "get_weather", arguments: { city: "Lyon" }, raw: '{"city":"Lyon"}', complete: true },
        { id: "c2", name: "get_time", arguments: {}, raw: "{}", complete: true },
      ],
    },
    { role: "tool", tool_call_id: "c1", name: "get_weather", content: '{"temperature":18}' },
    { role: "tool", tool_call_id: "c2", name: "get_time", content: '{"error":"down"}', error: "down" },
    { role: "assistant", content: "It is 18 degrees.", status: "complete", tool_calls: [] },
    { role: "user", content: "and tomorrow?" },
    { role: "assistant", content: "", status: "failed", tool_calls: [] },
    { role: "user", content: "hello?" },
    { role: "assistant", content: "Half", status: "stopped", incomplete: true, tool_calls: [] },
  ];
  const got = uiMessages(msgs, (i) => msgs[i].id ?? `m${i}`, NOTE);
  assert.deepEqual(got, [
    { id: "m0", role: "system", parts: [{ type: "text", text: "Be brief." }] },
    { id: "u1", role: "user", parts: [{ type: "text", text: "weather in Lyon?" }] },
    {
      id: "m2",
      role: "assistant",
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "The tool knows.", state: "done" },
        { type: "text", text: "Let me look.", state: "done" },
        { type: "tool-get_weather", toolCallId: "c1", input: { city: "Lyon" }, state: "output-available", output: { temperature: 18 } },
        { type: "tool-get_time", toolCallId: "c2", input: {}, state: "output-error", errorText: "down" },
        { type: "step-start" },
        { type: "text", text: "It is 18 degrees.", state: "done" },
      ],
    },
    { id: "m6", role: "user", parts: [{ type: "text", text: "and tomorrow?" }] },
    { id: "m8", role: "user", parts: [{ type: "text", text: "hello?" }] },
    { id: "m9", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: `Half\n\n${NOTE}`, state: "done" }] },
  ]);
});
