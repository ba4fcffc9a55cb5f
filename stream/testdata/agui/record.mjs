// Records AG-UI 1.0 streams as the AG-UI TypeScript SDK writes them, as
// fixtures for the stream package's ag-ui dialect: each event is checked
// against @ag-ui/core's own schema (EventSchemas) and written by
// @ag-ui/encoder's EventEncoder, the encoder AG-UI backends answer with.
//
//   node record.mjs DIR   writes the bodies into DIR (stream/testdata) and
//                         their content types into DIR/agui/headers.json
//
// Nothing here is random or timed (no timestamps): the same pinned
// packages write the same bytes (stream/agui_fixtures_test.go checks the
// committed files against a fresh run).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EventType, PROTOCOL_VERSION } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import { EventEncoder } from "@ag-ui/encoder";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node record.mjs DIR");
  process.exit(2);
}

const threadId = "thread_tea";
const runId = "run_1";
const started = { type: EventType.RUN_STARTED, threadId, runId, protocolVersion: PROTOCOL_VERSION };

// text streams one assistant message in the given deltas.
const text = (messageId, ...deltas) => [
  { type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" },
  ...deltas.map((delta) => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta })),
  { type: EventType.TEXT_MESSAGE_END, messageId },
];

// reasoning streams one reasoning message.
const reasoning = (messageId, ...deltas) => [
  { type: EventType.REASONING_START, messageId },
  { type: EventType.REASONING_MESSAGE_START, messageId, role: "reasoning" },
  ...deltas.map((delta) => ({ type: EventType.REASONING_MESSAGE_CONTENT, messageId, delta })),
  { type: EventType.REASONING_MESSAGE_END, messageId },
  { type: EventType.REASONING_END, messageId },
];

// call streams a tool call's arguments in the given fragments.
const call = (toolCallId, toolCallName, ...deltas) => [
  { type: EventType.TOOL_CALL_START, toolCallId, toolCallName, parentMessageId: "msg_2" },
  ...deltas.map((delta) => ({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta })),
  { type: EventType.TOOL_CALL_END, toolCallId },
];

const usage = [
  { provider: "openai", model: "gpt-5-mini", inputTokens: 120, outputTokens: 64, totalTokens: 184, reasoningTokens: 20 },
  { provider: "anthropic", model: "claude-haiku-4-5", inputTokens: 30, outputTokens: 16, totalTokens: 46 },
];

const recordings = [
  {
    // Thinking, markdown text cut mid-word, a tool call with its result,
    // the events an answer does not show, and a successful finish with
    // usage from two models.
    file: "ag-ui-tool.sse",
    events: [
      started,
      { type: EventType.STATE_SNAPSHOT, snapshot: { step: "research" } },
      { type: EventType.STEP_STARTED, stepName: "think" },
      ...reasoning("r_1", "The reader asks about Paris. ", "The weather tool can tell."),
      { type: EventType.STEP_FINISHED, stepName: "think" },
      ...text("msg_1", "## Paris\n\nLet me check the weat", "her in *Paris* 🌦️ — one moment.\n\n"),
      ...call("call_paris_1", "get_weather", '{"city":', '"Paris"}'),
      { type: EventType.TOOL_CALL_RESULT, messageId: "tool_1", toolCallId: "call_paris_1", content: '{"city":"Paris","temperature":21,"sky":"clear"}', role: "tool" },
      { type: EventType.STATE_DELTA, delta: [{ op: "replace", path: "/step", value: "answer" }] },
      { type: EventType.CUSTOM, name: "progress", value: { done: 0.5 } },
      { type: EventType.RAW, event: { provider: "native" }, source: "openai" },
      ...text("msg_2", "It is **21 °C** and clear.\n\n| city | sky |\n| --- | --- |\n| Paris | clear |\n"),
      { type: EventType.MESSAGES_SNAPSHOT, messages: [{ id: "u_1", role: "user", content: "Weather in Paris?" }] },
      { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "success" }, usage },
    ],
  },
  {
    // The shorthand events: text and a tool call sent as chunks, the
    // message and call named only on their first chunk; an outcome left
    // out means success.
    file: "ag-ui-chunks.sse",
    events: [
      started,
      { type: EventType.REASONING_MESSAGE_CHUNK, messageId: "r_1", delta: "Short and sweet." },
      { type: EventType.TEXT_MESSAGE_CHUNK, messageId: "msg_1", role: "assistant", delta: "Brewing green " },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: "tea: **80 °C**, " },
      { type: EventType.TEXT_MESSAGE_CHUNK, delta: "two minutes." },
      { type: EventType.TOOL_CALL_CHUNK, toolCallId: "call_timer", toolCallName: "set_timer", parentMessageId: "msg_1", delta: '{"min' },
      { type: EventType.TOOL_CALL_CHUNK, delta: 'utes":2}' },
      { type: EventType.RUN_FINISHED, threadId, runId },
    ],
  },
  {
    // The run is cancelled mid-answer.
    file: "ag-ui-cancelled.sse",
    events: [started, ...text("msg_1", "Stopped mid", " sentence"), { type: EventType.RUN_FINISHED, threadId, runId, outcome: { type: "cancelled" } }],
  },
  {
    // A tool that asks first: the run ends waiting for the reader's
    // approval of the call.
    file: "ag-ui-interrupt.sse",
    events: [
      started,
      ...text("msg_1", "I can book it. "),
      ...call("call_book_1", "book_table", '{"restaurant":"Chez Nous",', '"people":2}'),
      {
        type: EventType.RUN_FINISHED,
        threadId,
        runId,
        outcome: {
          type: "interrupt",
          interrupts: [{ id: "int_1", reason: "tool_approval", message: "Book a table for 2 at Chez Nous?", toolCallId: "call_book_1" }],
        },
        usage: [usage[0]],
      },
    ],
  },
  {
    // The agent fails after some text.
    file: "ag-ui-error.sse",
    events: [started, ...text("msg_1", "The first half of the ans", "wer, then"), { type: EventType.RUN_ERROR, message: "The model is overloaded, try again", code: "overloaded", usage: [usage[1]] }],
  },
];

const encoder = new EventEncoder();
const headers = {};
for (const r of recordings) {
  let body = "";
  for (const event of r.events) {
    const checked = EventSchemas.safeParse(event);
    if (!checked.success) {
      console.error(`${r.file}: the SDK's schema rejects ${JSON.stringify(event)}: ${checked.error.message}`);
      process.exit(1);
    }
    body += encoder.encodeSSE(event);
  }
  writeFileSync(join(dir, r.file), body);
  headers[r.file] = { "content-type": encoder.getContentType() };
}
mkdirSync(join(dir, "agui"), { recursive: true });
writeFileSync(join(dir, "agui", "headers.json"), JSON.stringify(headers, null, 2) + "\n");
