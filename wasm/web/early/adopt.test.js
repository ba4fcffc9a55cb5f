// trickle-worker.js's adopt: Go's side of an early answer's handover. The
// inbox starts with every chunk the page read (at the time each arrived),
// then takes the rest of the body as readBody would; closing it cancels
// the body; a stopped early answer ends when Go closes it.
import { test } from "node:test";
import assert from "node:assert/strict";

await import("../trickle-worker.js");
const start = globalThis.__trickleStart;
const WASM = "data:application/wasm;base64,AGFzbQEAAAA=";

async function helpers() {
  const port = { postMessage() {}, onmessage: null };
  let h = null;
  globalThis.Go = class {
    importObject = {};
    run() {
      h = globalThis.__trickleBoot(() => {}, () => {});
    }
  };
  await start(port, WASM, "worker");
  return h;
}

// take reads an inbox's batch as wasm/protocol/inbox.go does: [text, at].
function take(inbox) {
  const buf = inbox.take();
  if (!buf) return [];
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = v.getUint32(8, true);
  const out = [];
  let off = 12 + 12 * n;
  for (let i = 0; i < n; i++) {
    const len = v.getUint32(12 + 12 * i, true);
    out.push([new TextDecoder().decode(buf.slice(off, off + len)), v.getFloat64(16 + 12 * i, true)]);
    off += len;
  }
  return out;
}

const bytes = (s) => new TextEncoder().encode(s);
const ended = () => {
  let end;
  const p = new Promise((r) => (end = r));
  return { end, p };
};

test("the early chunks come first, at their arrival times, then the rest of the body", async () => {
  const h = await helpers();
  const at = performance.timeOrigin + performance.now() - 500;
  const rest = ["c", "d"];
  const body = new ReadableStream({ pull: (c) => (rest.length ? c.enqueue(bytes(rest.shift())) : c.close()) });
  const e = ended();
  const inbox = h.adopt({ chunks: [[bytes("a"), at], [bytes("b"), at + 1]], body, end: "", stopped: false }, e.end);
  assert.equal(await e.p, null, "the body ended cleanly");
  const got = take(inbox);
  assert.deepEqual(got.map(([s]) => s), ["a", "b", "c", "d"], "every byte once, in order");
  assert.ok(Math.abs(got[0][1] - (at - performance.timeOrigin)) < 1e-6, "an early chunk keeps its arrival time, on this thread's clock");
  assert.ok(got[2][1] >= got[1][1], "the rest arrives after");
});

test("an early answer that ended is ended once its chunks are in", async () => {
  const h = await helpers();
  const now = performance.timeOrigin + performance.now();
  const done = ended();
  const inbox = h.adopt({ chunks: [[bytes("x"), now]], body: null, end: "done", stopped: false }, done.end);
  assert.equal(await done.p, null);
  assert.deepEqual(take(inbox).map(([s]) => s), ["x"]);
  const failed = ended();
  h.adopt({ chunks: [], body: null, end: "network down", stopped: false }, failed.end);
  assert.equal((await failed.p).message, "network down");
});

test("a stopped early answer ends when Go closes its inbox, not before", async () => {
  const h = await helpers();
  const e = ended();
  let endedYet = false;
  e.p.then(() => (endedYet = true));
  const inbox = h.adopt({ chunks: [[bytes("x"), performance.timeOrigin]], body: null, end: "aborted", stopped: true }, e.end);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(endedYet, false, "Go's stop command, queued after the ask, ends it");
  inbox.close();
  assert.equal(await e.p, null);
});

test("closing the inbox cancels the body (and so the request)", async () => {
  const h = await helpers();
  let cancelled = false;
  const body = new ReadableStream({ pull() {}, cancel: () => (cancelled = true) });
  const e = ended();
  const inbox = h.adopt({ chunks: [], body, end: "", stopped: false }, e.end);
  inbox.close();
  await e.p;
  assert.equal(cancelled, true);
});
