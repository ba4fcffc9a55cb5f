// The early reader against the Go pipeline: the same recordings
// (stream/testdata), Go's text after every byte of each in
// testdata/golden.json (written by stream/early_golden_test.go). At every
// cut of every recording the early text must be a prefix of Go's text at
// that byte: the early view may show less than Go, never other text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { earlyReader } from "./reader.js";

const here = new URL(".", import.meta.url);
const golden = JSON.parse(readFileSync(new URL("testdata/golden.json", here), "utf8"));
const recording = (file) => new Uint8Array(readFileSync(new URL(`../../../stream/testdata/${file}`, here)));

// goText is Go's text after n bytes of the recording.
function goText(rec, n) {
  let len = 0;
  for (const [at, l] of rec.steps) {
    if (at > n) break;
    len = l;
  }
  return rec.text.slice(0, len);
}

// feed writes data cut at cuts (ascending offsets) and checks the text
// after every chunk; it returns the reader.
function feed(rec, data, cuts) {
  const r = earlyReader();
  r.head((h) => (h === "content-type" ? (rec.content_type ?? null) : null));
  let prev = 0;
  let text = "";
  for (const c of [...cuts, data.length]) {
    text += r.write(data.subarray(prev, c));
    prev = c;
    assert.equal(r.text, text, "write returns what it adds to text");
    const want = goText(rec, c);
    assert.ok(want.startsWith(text), `${rec.file} after ${c} bytes: early ${JSON.stringify(text)} is not a prefix of Go's ${JSON.stringify(want)}`);
  }
  return r;
}

// Recordings whose whole text the early reader leaves to Go, and why.
const SHORT = {
  // An event the reader is not sure of stops it (the malformed events Go
  // skips are not read around).
};

test("the golden file covers every recording", () => {
  assert.ok(golden.recordings.length >= 20);
  assert.ok(golden.recordings.some((r) => r.file.endsWith(".ndjson")));
  assert.ok(golden.recordings.filter((r) => r.text).length >= 15, "most recordings have text to match");
});

for (const rec of golden.recordings) {
  const data = recording(rec.file);
  test(`${rec.file}: the early text is Go's at every cut`, () => {
    const whole = feed(rec, data, []);
    if (SHORT[rec.file]) assert.notEqual(whole.text, rec.text);
    else assert.equal(whole.text, rec.text, "the whole recording read in one chunk gives Go's text");
    feed(rec, data, Array.from({ length: data.length - 1 }, (_, i) => i + 1)); // a byte at a time
    for (let c = 0; c <= data.length; c++) {
      const r = feed(rec, data, [c]);
      assert.equal(r.text, whole.text, `cut at ${c}: the same text as in one chunk`);
    }
    // Seeded random cuts.
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let k = 0; k < 50; k++) {
      const cuts = [];
      for (let at = 0; ; ) {
        at += 1 + Math.floor(rand() * 24);
        if (at >= data.length) break;
        cuts.push(at);
      }
      assert.equal(feed(rec, data, cuts).text, whole.text);
    }
  });
}

const utf8 = (s) => new TextEncoder().encode(s);
const read = (s, dialect) => {
  const r = earlyReader(dialect);
  r.write(utf8(s));
  return r;
};
const chat = (content) => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] })}\n\n`;

test("SSE: CR, LF and CRLF end lines, even split between chunks", () => {
  const s = chat("a").replace(/\n/g, "\r\n") + chat("b").replace(/\n/g, "\r") + chat("c");
  const data = utf8(s);
  for (let c = 0; c <= data.length; c++) {
    const r = earlyReader();
    r.write(data.subarray(0, c));
    r.write(data.subarray(c));
    assert.equal(r.text, "abc", `cut at ${c}`);
  }
});

test("SSE: a CR at a chunk's end and a LF at the next one's start are one line end", () => {
  const r = earlyReader();
  r.write(utf8('data: {"delta":"x"}\r'));
  r.write(utf8('\n\r'));
  r.write(utf8('\ndata: {"delta":"y"}\n\n'));
  // CR LF, then CR LF: one blank line between the data line and the next.
  assert.equal(r.text, "xy");
});

test("SSE: comments, other fields and multi-line data are read as the standard says", () => {
  const r = read(': hi\nid: 1\nretry: 5\nevent: message\ndata: {"delta":\ndata:"a\\nb"}\n\ndata\n\n');
  assert.equal(r.text, "a\nb");
  assert.equal(r.stopped, false);
});

test("an event is only read once its blank line came", () => {
  const r = earlyReader();
  assert.equal(r.write(utf8('data: {"delta":"x"}\n')), "");
  assert.equal(r.write(utf8("\n")), "x");
});

test("a character split between chunks is read whole", () => {
  const data = utf8(chat("🍵 é"));
  for (let c = 0; c <= data.length; c++) {
    const r = earlyReader();
    r.write(data.subarray(0, c));
    r.write(data.subarray(c));
    assert.equal(r.text, "🍵 é");
  }
});

test("the end marker, an error and the relay's status stop the reader", () => {
  for (const tail of ["data: [DONE]\n\n", 'data: {"error":{"message":"boom"}}\n\n', 'event: trickle.status\ndata: {"status":"stopped"}\n\n']) {
    const r = read(chat("a") + tail + chat("b"));
    assert.equal(r.text, "a", tail);
    assert.equal(r.stopped, true, tail);
  }
});

test("an event that is not JSON is skipped, as Go skips it", () => {
  assert.equal(read(chat("a") + "data: {oops\n\n" + chat("b")).text, "ab");
});

test("a field of the wrong type stops the reader (Go skips that event, text and all)", () => {
  const r = read(chat("a") + 'data: {"choices":[{"index":0,"delta":{"content":5}}]}\n\n' + chat("b"));
  assert.equal(r.text, "a");
  assert.equal(r.stopped, true);
});

test("only the first choice is the answer", () => {
  const ev = { choices: [{ index: 1, delta: { content: "no" } }, { index: 0, delta: { content: "yes" } }] };
  assert.equal(read(`data: ${JSON.stringify(ev)}\n\n`).text, "yes");
});

test("a lone surrogate stops the reader (Go would show U+FFFD)", () => {
  const r = read('data: {"delta":"a"}\n\ndata: {"delta":"\\ud800"}\n\n');
  assert.equal(r.text, "a");
  assert.equal(r.stopped, true);
});

test("NDJSON: Ollama's lines, its done:true ends the answer", () => {
  const lines = [
    { model: "m", created_at: "t", message: { role: "assistant", content: "Hi" }, done: false },
    { model: "m", created_at: "t", message: { role: "assistant", content: " there" }, done: true },
    { model: "m", created_at: "t", message: { role: "assistant", content: "late" }, done: false },
  ];
  const r = read(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  assert.equal(r.text, "Hi there");
  assert.equal(r.stopped, true);
});

test("the dialect attribute fixes the dialect; an unknown one leaves everything to Go", () => {
  const anthropic = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n';
  assert.equal(read(anthropic, "anthropic").text, "x");
  assert.equal(read(anthropic, "auto").text, "x");
  const r = read(anthropic, "klingon");
  assert.equal(r.text, "");
  assert.equal(r.stopped, true);
});

test("an event too large for Go stops the reader", () => {
  const r = earlyReader();
  r.write(utf8(chat("a")));
  r.write(utf8('data: {"delta":"' + "x".repeat(300 * 1024)));
  assert.equal(r.stopped, true);
  assert.equal(r.write(utf8('"}\n\n')), "");
  assert.equal(r.text, "a");
});

test("text/plain: the body is the text, a character split between chunks read whole", () => {
  const data = utf8("\ufeff## Tea 🍵\n\ndata: {\"delta\":\"not an event\"}\n\n");
  for (let c = 0; c <= data.length; c++) {
    const r = earlyReader();
    r.head((h) => (h === "content-type" ? "text/plain; charset=utf-8" : null));
    r.write(data.subarray(0, c));
    r.write(data.subarray(c));
    assert.equal(r.text, '## Tea 🍵\n\ndata: {"delta":"not an event"}\n\n', `cut at ${c}`);
  }
});

test("text: bytes that are not UTF-8 stop the reader before them (Go counts them one by one)", () => {
  const r = earlyReader("text");
  r.write(new Uint8Array([0x61, 0xe2, 0x82, 0x62]));
  assert.equal(r.text, "a");
  assert.equal(r.stopped, true);
});

test("text/plain with another dialect asked for is read as that dialect's events", () => {
  const r = earlyReader("plain");
  r.head((h) => (h === "content-type" ? "text/plain" : null));
  r.write(utf8('data: {"delta":"x"}\n\n'));
  assert.equal(r.text, "x");
});

const ui = (...parts) => parts.map((p) => `data: ${JSON.stringify(p)}\n\n`).join("");

test("ai-sdk: the text deltas are the answer, the reasoning is not; finish stops the reader", () => {
  const body = ui(
    { type: "start" },
    { type: "reasoning-start", id: "r" },
    { type: "reasoning-delta", id: "r", delta: "thinking, not answer" },
    { type: "reasoning-end", id: "r" },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "Hello" },
    { type: "tool-input-start", toolCallId: "c", toolName: "f" },
    { type: "text-delta", id: "t", delta: " there" },
    { type: "finish" },
    { type: "text-delta", id: "t", delta: " late" },
  );
  const r = read(body);
  assert.equal(r.text, "Hello there");
  assert.equal(r.stopped, true);
  // An error and an unknown part stop it before any text of theirs.
  assert.equal(read(ui({ type: "start" }, { type: "error", errorText: "boom" }, { type: "text-delta", delta: "x" })).text, "");
  assert.equal(read(ui({ type: "text-delta", delta: "a" }, { type: "some-new-part" }, { type: "text-delta", delta: "b" })).text, "a");
});

test("ag-ui: the assistant's text is the answer, reasoning and tools are not; RUN_FINISHED stops the reader", () => {
  const body = ui(
    { type: "RUN_STARTED", threadId: "t", runId: "r" },
    { type: "REASONING_MESSAGE_CONTENT", messageId: "r1", delta: "thinking, not answer" },
    { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Hello" },
    { type: "TOOL_CALL_START", toolCallId: "c", toolCallName: "f" },
    { type: "TOOL_CALL_ARGS", toolCallId: "c", delta: '{"delta":"x"}' },
    { type: "TEXT_MESSAGE_CHUNK", delta: " there" },
    { type: "RUN_FINISHED", threadId: "t", runId: "r" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: " late" },
  );
  const r = read(body);
  assert.equal(r.text, "Hello there");
  assert.equal(r.stopped, true);
  // Its deltas are not the plain dialect's, though they look alike.
  assert.equal(read(ui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "a" })).text, "a");
  // A message of another role stops it before any text of its own, and so
  // does an error.
  const user = ui({ type: "TEXT_MESSAGE_START", messageId: "u", role: "user" }, { type: "TEXT_MESSAGE_CONTENT", messageId: "u", delta: "echo" });
  assert.equal(read(user).text, "");
  assert.equal(read(ui({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "a" }, { type: "RUN_ERROR", message: "boom" }, { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "b" })).text, "a");
  assert.equal(earlyReader("ag-ui").stopped, false, "the dialect attribute may name it");
});

test("ai-sdk: its header names the dialect before the first part", () => {
  const r = earlyReader();
  r.head((h) => ({ "content-type": "text/event-stream", "x-vercel-ai-ui-message-stream": "v1" })[h] ?? null);
  // {"delta":…} alone would read as plain; under the header it is a part
  // the reader does not know, and it stops.
  r.write(utf8(ui({ delta: "not plain" }, { type: "text-delta", delta: "x" })));
  assert.equal(r.text, "");
  assert.equal(r.stopped, true);
});
