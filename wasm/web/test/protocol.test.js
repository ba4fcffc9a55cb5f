// The page↔Go protocol from the page's side, against the golden files Go's
// tests write and check (wasm/protocol/testdata): the ready message's
// version and status spacing, and a real element's frames for one answer,
// applied by the page's own code, showing what Go rendered.

import { readFileSync } from "node:fs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { document, installGlobals } from "./dom.js";

installGlobals();
const { PROTOCOL_VERSION } = await import("../host.js");
const { mergeUpdates } = await import("../merge.js");
const { Answer, ensureParts } = await import("../answer.js");

const fixture = (name) => JSON.parse(readFileSync(new URL(`../../../wasm/protocol/testdata/${name}`, import.meta.url), "utf8"));

test("the loader speaks the protocol version Go sends in ready", () => {
  const ready = fixture("ready.json");
  assert.equal(ready.t, "ready");
  assert.equal(ready.v, PROTOCOL_VERSION, "wasm/protocol.Version and host.js's PROTOCOL_VERSION differ");
  assert.ok(Number.isFinite(ready.min_gap_ms) && ready.min_gap_ms > 0, "ready carries the status spacing");
});

// apply feeds the fixture's messages to a real Answer as the Host does:
// announcements at once, the frame's updates merged and applied; wrap
// sees each update first.
function apply(messages, merged, wrap = (u) => u) {
  const el = document.createElement("div");
  ensureParts(el);
  document.body.append(el);
  const host = { els: new Map(), send() {}, minGap: fixture("ready.json").min_gap_ms };
  const a = new Answer(host, el);
  const ends = [];
  el.addEventListener("trickle-end", (e) => ends.push(e.detail));
  let settled = null;
  a.calls.set(1, (status) => (settled = status));
  const frames = messages.map((m) => {
    assert.equal(m.t, "frame");
    for (const u of m.u) assert.equal(u.id, 1, "the fixture's element is number 1");
    return m.u.map((u) => wrap({ ...u, id: a.id }));
  });
  const batches = merged ? [frames] : frames.map((f) => [f]);
  for (const batch of batches) {
    for (const f of batch) for (const u of f) a.early(u);
    for (const u of mergeUpdates(batch)) a.apply(u);
  }
  return { a, el, ends, settled };
}

// normal is html as this DOM serializes it.
function normal(html) {
  const t = document.createElement("template");
  t.innerHTML = html;
  return t.innerHTML;
}

function content(el) {
  const c = el.querySelector('[data-trickle="content"]').cloneNode(true);
  for (const b of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) b.remove();
  for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
  return c.innerHTML;
}

for (const merged of [false, true]) {
  test(`a real element's frames${merged ? ", merged into one," : ""} show what Go rendered`, () => {
    const fx = fixture("frames.json");
    assert.ok(fx.messages.length >= 3, "the fixture streams over several frames");
    assert.equal(JSON.stringify(fx.messages).includes('"content"'), false, "Go left the content out: the page had the text");
    const { a, el, ends, settled } = apply(fx.messages, merged);
    assert.equal(a.text, fx.text);
    assert.equal(a.state, fx.status);
    assert.equal(a.streamId, "s");
    assert.equal(content(el), normal(fx.html));
    assert.equal(el.getAttribute("data-status"), fx.status);
    assert.equal(settled, fx.status, "ask()'s promise settles with the answer");
    assert.equal(ends.length, 1);
    assert.equal(ends[0].status, fx.status);
    assert.equal(a.message.content, fx.text, "the message is the answer's markdown");
    assert.equal(ends[0].message.content, fx.text, "trickle-end's message too");
    assert.notEqual(ends[0].message, a.message, "each its own object");
    assert.equal(a.message.status, fx.status);
    assert.equal(a.message.incomplete, false);
    assert.ok(el.querySelector('[data-trickle="code-toolbar"]'), "the code block got its toolbar");
  });
}

// The page reads an update's, a patch's and an ending's keys only as the
// contract names them (contract.js, from wasm/protocol's tables): each
// update of the fixture, its patch and its ending are watched while the
// page's own code applies them, and every key it reads must be one Go
// writes. A key spelled in a module (u.sid where Go writes another) reads
// a name the contract lacks and fails here.
test("the page reads no update, patch or ending key the contract lacks", async () => {
  const contract = await import("../contract.js");
  const known = (prefix) => new Set(Object.entries(contract).filter(([k]) => k.startsWith(prefix)).map(([, v]) => v));
  const keys = { update: known("UPDATE_"), patch: known("PATCH_"), end: known("END_") };
  assert.ok(keys.update.has("id") && keys.patch.has("a") && keys.end.has("msg"), "contract.js has the tables' keys");
  const read = { update: new Set(), patch: new Set(), end: new Set() };
  const stranger = [];
  const watch = (obj, kind) =>
    new Proxy(obj, {
      get(target, key, receiver) {
        if (typeof key === "string") {
          read[kind].add(key);
          if (!keys[kind].has(key)) stranger.push(`${kind}.${key}`);
        }
        return Reflect.get(target, key, receiver);
      },
    });
  const fx = fixture("frames.json");
  // One frame a batch: mergeUpdates hands the updates on as they are.
  const { a } = apply(fx.messages, false, (u) => {
    if (u[contract.UPDATE_PATCH]) u[contract.UPDATE_PATCH] = watch(u[contract.UPDATE_PATCH], "patch");
    if (u[contract.UPDATE_END]) u[contract.UPDATE_END] = watch(u[contract.UPDATE_END], "end");
    return watch(u, "update");
  });
  assert.equal(a.text, fx.text, "the answer was applied");
  assert.deepEqual(stranger, [], "keys the contract does not have");
  for (const k of ["p", "text", "state", "sid", "m", "end", "ev", "resolve", "n", "say", "status"]) assert.ok(read.update.has(k), `the page read the update's ${k}`);
  for (const k of ["a", "keep", "final"]) assert.ok(read.patch.has(k), `the page read the patch's ${k}`);
  for (const k of ["status", "msg"]) assert.ok(read.end.has(k), `the page read the ending's ${k}`);
});

// The page applies an answer's changes at most every other frame of a
// 60 Hz display, except the frame that ends an answer, which goes in the
// next animation frame whatever the cadence (the worker posts it at once
// too: element.Pacer.End), and a hidden page's, where a timer stands in.
test("the cadence holds every frame but an answer's end and a hidden page's", async () => {
  const { tooSoon, FRAME_MS } = await import("../host.js");
  const display = 1000 / 60;
  for (let frames = 1; frames <= 4; frames++) {
    const at = 1000 + frames * display;
    const soon = frames * display < FRAME_MS - 4;
    assert.equal(tooSoon(at, 1000, false, false), soon, `${frames} display frames after the last applied`);
    assert.equal(tooSoon(at, 1000, true, false), false, `an end, ${frames} display frames after`);
    assert.equal(tooSoon(at, 1000, false, true), false, `a hidden page, ${frames} display frames after`);
  }
  assert.equal(tooSoon(1000 + display, 1000, false, false), true, "the next display frame is too soon");
  assert.equal(tooSoon(1000 + 2 * display, 1000, false, false), false, "the one after it is not");
});

// An ended answer's message from Go comes without its content when the
// page's text is it; with one (Go could not vouch for the text: a piece of
// it was not valid UTF-8 by itself), that content stands.
test("an ended answer's message takes the page's text as its content only where Go left it out", async () => {
  const { withContent } = await import("../answer.js");
  const m = withContent({ role: "assistant", status: "complete", tool_calls: [] }, "# Hi\n");
  assert.deepEqual(Object.keys(m), ["role", "content", "status", "tool_calls"], "content second, as Go writes it");
  assert.equal(m.content, "# Hi\n");
  const own = { role: "assistant", content: "caf\u00e9", status: "complete" };
  assert.equal(withContent(own, "caf\ufffd\ufffd"), own);
  assert.equal(withContent({ role: "assistant", content: "", status: "stopped" }, "x").content, "", "an empty content is a content");
});
