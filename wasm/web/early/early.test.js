// The early answer (early.js) against a real HTTP server on loopback: the
// request it sends is request.js's, its text comes as it is read, and its
// handover gives Go every byte of the body exactly once — the chunks read
// so far, then the rest of the body — whenever Go becomes ready: before
// the response, while a read waits, after the end. Stop aborts the request
// and asks the relay to stop its stream.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startEarly, streamURL } from "./early.js";
import { earlyRequest } from "./request.js";

const ev = (s) => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: s } }] })}\n\n`;
const EVENTS = ["Hel", "lo, ", "wor", "ld."].map(ev).concat(["data: [DONE]\n\n"]);

// serve answers each chat request with EVENTS, one per next() call of the
// test, and records the requests it got.
async function serve(t) {
  const got = [];
  let respond = null;
  const waiting = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      got.push({ method: req.method, url: req.url, headers: req.headers, body });
      if (req.method !== "POST") return res.end();
      res.writeHead(200, { "Content-Type": "text/event-stream", "X-Trickle-Stream": "s1" });
      res.flushHeaders();
      req.on("close", () => (respond.closed = true));
      respond = { res, next: 0, closed: false };
      for (const w of waiting.splice(0)) w();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}`;
  const responded = () => (respond ? Promise.resolve() : new Promise((r) => waiting.push(r)));
  // send writes the next event (or ends the body after the last).
  const send = async () => {
    await responded();
    if (respond.next === EVENTS.length) return respond.res.end();
    respond.res.write(EVENTS[respond.next++]);
  };
  return { base, got, send, responded, state: () => respond };
}

const cmd = (base) => ({ t: "ask", url: `${base}/v1/chat/completions`, model: "", dialect: "", headers: [["Authorization", "Bearer k"]], prompt: "Hi" });

// all reads the handover's bytes: its chunks, then the rest of its body.
async function all(value) {
  const parts = value.chunks.map(([b]) => b);
  if (value.body) {
    const r = value.body.getReader();
    for (;;) {
      const { done, value: b } = await r.read();
      if (done) break;
      parts.push(b);
    }
  }
  return Buffer.concat(parts).toString();
}

const until = async (f) => {
  while (!f()) await new Promise((r) => setTimeout(r, 5));
};

test("the early request is request.js's, sent at once", async (t) => {
  const s = await serve(t);
  const c = cmd(s.base);
  const e = startEarly(c, () => {});
  await s.responded();
  const want = earlyRequest(c);
  const [r] = s.got;
  assert.equal(r.method, "POST");
  assert.equal(r.body, want.init.body);
  assert.equal(r.headers.authorization, "Bearer k");
  assert.equal(r.headers["content-type"], "application/json");
  assert.equal(r.headers.accept, "text/event-stream");
  await s.send();
  const { value } = await e.handover();
  value.body?.cancel();
});

for (const at of [0, 1, 2, 3, 5, 6]) {
  test(`a handover after ${at} events gives every byte once and the text read so far`, async (t) => {
    const s = await serve(t);
    let shown = "";
    const e = startEarly(cmd(s.base), (x) => (shown += x));
    for (let i = 0; i < at; i++) await s.send();
    if (at > 0) await until(() => shown.length > 0 || at === 5 || at === 6);
    await new Promise((r) => setTimeout(r, 20)); // let the reads catch up or wait
    const { value, transfer } = await e.handover();
    assert.equal(value.ok, true);
    assert.equal(value.status, 200);
    assert.equal(value.stream, "s1");
    assert.equal(value.stopped, false);
    const ended = at === EVENTS.length + 1;
    assert.equal(value.end, ended ? "done" : "");
    assert.equal(transfer.length, ended ? 0 : 1, "the rest of the body goes over, unless it ended");
    for (let i = at; i <= EVENTS.length; i++) s.send();
    assert.equal(await all(value), EVENTS.join(""), "every byte once, in order");
    assert.ok("Hello, world.".startsWith(shown), `the early text ${JSON.stringify(shown)} is the answer's`);
    for (const [, arrived] of value.chunks) assert.ok(arrived > performance.timeOrigin, "chunks carry their arrival time (epoch ms)");
  });
}

test("stop aborts the request, keeps what was read and asks the relay to stop the stream", async (t) => {
  const s = await serve(t);
  let shown = "";
  const e = startEarly(cmd(s.base), (x) => (shown += x));
  await s.send();
  await until(() => shown === "Hel");
  e.stop();
  await until(() => s.state().closed);
  await until(() => s.got.some((r) => r.method === "DELETE"));
  const del = s.got.find((r) => r.method === "DELETE");
  assert.equal(del.url, "/v1/streams/s1");
  assert.equal(del.headers.authorization, "Bearer k", "the DELETE carries the request's headers (Stop under auth)");
  assert.equal(del.headers["content-type"], undefined, "but not its body's");
  const { value, transfer } = await e.handover();
  assert.equal(value.stopped, true);
  assert.equal(value.body, null);
  assert.equal(transfer.length, 0);
  assert.equal(await all(value), EVENTS[0], "the bytes read before Stop still go to Go");
  assert.equal(shown, "Hel", "no text after Stop");
});

test("a failed request is handed over as failed, with why", async () => {
  const e = startEarly(cmd("http://127.0.0.1:1"), () => {});
  const { value } = await e.handover();
  assert.equal(value.failed, true);
  assert.ok(value.end.length > 0);
  assert.deepEqual(value.chunks, []);
});

test("an ask Go builds differently, or over a WebSocket, is not started early", () => {
  assert.equal(startEarly({ ...cmd("http://127.0.0.1:1"), transport: "websocket" }, () => {}), null);
  assert.equal(startEarly({ t: "ask", url: "http://127.0.0.1:1/", model: "", headers: [], body: [1] }, () => {}), null);
});

test("the stream's URL is the relay's header resolved against the request, else under the endpoint's prefix", () => {
  const res = (url, ref) => ({ url, headers: { get: (h) => (h === "X-Trickle-Stream-URL" ? ref : null) } });
  const cases = [
    ["https://site.test/v1/chat/completions?answer=short", null, "https://site.test/v1/streams/s1"],
    ["https://site.test/ai/v1/chat/completions?answer=short", "../streams/s1", "https://site.test/ai/v1/streams/s1"],
    ["https://site.test/ai/v1/chat/completions", null, "https://site.test/ai/v1/streams/s1"],
    ["https://site.test/chat", "streams/s1", "https://site.test/streams/s1"],
    ["https://site.test/ai/v1/chat/completions", "https://evil.test/x", "https://site.test/ai/v1/streams/s1"],
    ["https://site.test/ai/v1/chat/completions", "//evil.test/x", "https://site.test/ai/v1/streams/s1"],
  ];
  for (const [url, ref, want] of cases) assert.equal(streamURL(res(url, ref), "s1"), want, `${url} with ${ref}`);
});
