// trickle-worker.js, booted for real on Node with a stand-in for Go's
// wasm_exec.js (a Go class whose run() calls __trickleBoot, as the widget's
// main does): its inbox and the layout Go reads (wasm/protocol/inbox.go),
// the wake-ups, and the acks of frames.

import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";

await import("../trickle-worker.js");
const start = globalThis.__trickleStart;

// The smallest WebAssembly module (magic and version), as the .wasm.
const WASM = "data:application/wasm;base64,AGFzbQEAAAA=";

// boot starts the worker script's Go side on a port that records what it
// posts, and returns the helpers Go would get, what Go was told
// (messages) and how often it was woken.
async function boot(page) {
  const port = { posted: [], onmessage: null, postMessage(m) { this.posted.push(m); } };
  const go = { helpers: null, messages: [], wakes: 0 };
  globalThis.Go = class {
    importObject = {};
    run() {
      go.helpers = globalThis.__trickleBoot(
        (m) => go.messages.push(m),
        () => go.wakes++,
      );
    }
  };
  await start(port, WASM, "worker", page);
  assert.notEqual(go.helpers, null, `Go did not boot: ${port.posted.join(" ")}`);
  return { port, go };
}

// decode reads take()'s bytes as wasm/protocol/inbox.go does.
function decode(buf) {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const takenAt = v.getFloat64(0, true);
  const n = v.getUint32(8, true);
  const chunks = [];
  let off = 12 + 12 * n;
  for (let i = 0; i < n; i++) {
    const len = v.getUint32(12 + 12 * i, true);
    const at = v.getFloat64(16 + 12 * i, true);
    chunks.push({ bytes: buf.slice(off, off + len), at });
    off += len;
  }
  assert.equal(off, buf.length, "the bytes end where the chunks say");
  return { takenAt, chunks };
}

// The decoder reads Go's own batch (wasm/protocol's golden file) as Go
// does, so what it reads of the worker's batches is what Go reads.
test("decode reads the batch Go's layout describes", async () => {
  const { readFileSync } = await import("node:fs");
  const fx = JSON.parse(readFileSync(new URL("../../../wasm/protocol/testdata/inbox.json", import.meta.url), "utf8"));
  const got = decode(new Uint8Array(Buffer.from(fx.batch, "base64")));
  assert.equal(got.takenAt, fx.took);
  assert.deepEqual(got.chunks.map((c) => [new TextDecoder().decode(c.bytes), c.at]), fx.chunks.map((c) => [c.data, c.arrived]));
});

const bytes = (s) => new TextEncoder().encode(s);
const text = (b) => new TextDecoder().decode(b);

// body is a response body that hands out the given chunks, then ends.
function body(chunks) {
  return new ReadableStream({
    pull(c) {
      if (chunks.length === 0) c.close();
      else c.enqueue(chunks.shift());
    },
  });
}

function ended() {
  let done;
  const p = new Promise((resolve) => (done = resolve));
  return { end: (err) => done(err), p };
}

test("the inbox hands over every chunk once, with its length and arrival time, in the layout Go reads", async () => {
  const { go } = await boot();
  const e = ended();
  const parts = ["data: one\n\n", "data: tw", "o\n\n", "é", ""].map(bytes);
  const inbox = go.helpers.readBody(body([...parts]), e.end);
  assert.equal(await e.p, null, "the body ended without an error");
  const before = performance.now();
  const { takenAt, chunks } = decode(inbox.take());
  assert.deepEqual(
    chunks.map((c) => text(c.bytes)),
    parts.map(text),
  );
  let last = -Infinity;
  for (const c of chunks) {
    assert.ok(c.at >= last && c.at <= takenAt, "arrival times in order, none after the take");
    last = c.at;
  }
  assert.ok(takenAt >= before, "the take's time is when it was taken");
  assert.equal(inbox.take(), null, "nothing twice");
});

test("a take holds only what arrived since the last one, however large", async () => {
  const { go } = await boot();
  const inbox = go.helpers.wsInbox({});
  const big = new Uint8Array(10_000).map((_, i) => i % 251);
  inbox.push(bytes("a"));
  assert.deepEqual(
    decode(inbox.take()).chunks.map((c) => text(c.bytes)),
    ["a"],
  );
  inbox.push(big);
  inbox.push(bytes("z"));
  const { chunks } = decode(inbox.take());
  assert.equal(chunks.length, 2);
  assert.deepEqual(chunks[0].bytes, big, "grown past its first 4 KiB, the bytes are intact");
  assert.equal(text(chunks[1].bytes), "z");
});

test("a WebSocket's text and binary messages reach the inbox as bytes, until it closes", async () => {
  const { go } = await boot();
  const ws = {};
  const inbox = go.helpers.wsInbox(ws);
  ws.onmessage({ data: '{"t":"é"}' });
  ws.onmessage({ data: new Uint8Array([1, 2, 3]).buffer });
  const { chunks } = decode(inbox.take());
  assert.deepEqual(
    chunks.map((c) => [...c.bytes]),
    [[...bytes('{"t":"é"}')], [1, 2, 3]],
  );
  inbox.close();
  ws.onmessage({ data: "late" });
  assert.equal(inbox.take(), null, "nothing after close");
});

test("a closed inbox cancels its body", async () => {
  const { go } = await boot();
  let cancelled = false;
  let pulls = 0;
  const stream = new ReadableStream({
    pull(c) {
      pulls++;
      c.enqueue(bytes("x"));
    },
    cancel() {
      cancelled = true;
    },
  });
  const e = ended();
  const inbox = go.helpers.readBody(stream, e.end);
  inbox.close();
  assert.equal(await e.p, null);
  assert.equal(cancelled, true);
  assert.ok(pulls >= 1);
});

test("no body ends at once, without an error", async () => {
  const { go } = await boot();
  const e = ended();
  const inbox = go.helpers.readBody(null, e.end);
  assert.equal(await e.p, null);
  assert.equal(inbox.take(), null);
});

test("chunks of one task wake Go once; while a frame is in flight they wait for its ack", async () => {
  const { go, port } = await boot();
  const inbox = go.helpers.wsInbox({});
  inbox.push(bytes("a"));
  inbox.push(bytes("b"));
  await Promise.resolve();
  assert.equal(go.wakes, 1, "one wake-up for the chunks of one task");

  // Go posts a frame: until the page acknowledges it, bytes do not wake Go.
  assert.equal(go.helpers.post('{"t":"frame","u":[]}', true), true, "the frame is in flight");
  assert.deepEqual(port.posted.at(-1), '{"t":"frame","u":[]}');
  inbox.push(bytes("c"));
  await Promise.resolve();
  assert.equal(go.wakes, 1, "no wake-up while the frame is in flight");
  port.onmessage({ data: "ack:1234.5" });
  assert.deepEqual(go.messages.at(-1), "ack+wake:1234.5", "the ack says bytes are waiting");

  // With nothing waiting the ack is plain, and other messages pass as they are.
  go.helpers.post("{}", true);
  port.onmessage({ data: "ack:99" });
  assert.deepEqual(go.messages.at(-1), "ack:99");
  port.onmessage({ data: { j: '{"t":"stop"}' } });
  assert.deepEqual(go.messages.at(-1), { j: '{"t":"stop"}' });
});

test("on the page's thread, bytes ask the page for a frame and frames go straight to it", async () => {
  const page = { wants: 0, frames: [], want() { this.wants++; }, frame(s) { this.frames.push(s); }, tick: null };
  const { go, port } = await boot(page);
  const inbox = go.helpers.wsInbox({});
  inbox.push(bytes("a"));
  assert.equal(page.wants, 1);
  assert.equal(go.helpers.post('{"t":"frame"}', true), false, "a frame handed over is not in flight");
  assert.deepEqual(page.frames, ['{"t":"frame"}']);
  assert.equal(port.posted.length, 0, "nothing went through the port");
  page.tick();
  assert.equal(go.wakes, 1, "the page's tick has Go build its frame");
});

test("a .wasm that does not compile is reported on the port", async () => {
  const port = { posted: [], postMessage(m) { this.posted.push(m); } };
  await start(port, "data:application/wasm;base64,AAAA", "worker");
  assert.equal(port.posted.length, 1);
  const m = JSON.parse(port.posted[0]);
  assert.equal(m.t, "fail");
  assert.match(m.message, /WebAssembly/);
});

test("a .wasm the server does not have is reported with its URL and status", async (t) => {
  const server = http.createServer((req, res) => {
    res.statusCode = 404;
    res.end("not here");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/trickle.x.wasm`;
  const port = { posted: [], postMessage(m) { this.posted.push(m); } };
  await start(port, url, "worker");
  assert.deepEqual(port.posted.map((s) => JSON.parse(s)), [{ t: "fail", message: `loading ${url}: HTTP 404` }]);
});
