// The early request against Go's: every fixture in testdata/requests.json
// holds an ask command as trickle.js sends it and the fetch Go starts for
// it (wasm/element/early_request_test.go writes them from
// widget.Command.Request).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { earlyRequest } from "./request.js";

const fixtures = JSON.parse(readFileSync(new URL("testdata/requests.json", import.meta.url), "utf8"));

test("the fixtures cover prompts, bodies, headers and refusals", () => {
  assert.ok(fixtures.cases.length >= 10);
  assert.ok(fixtures.cases.some((c) => c.want === null));
  assert.ok(fixtures.cases.some((c) => JSON.parse(c.cmd).body && c.want));
});

for (const c of fixtures.cases) {
  test(`${c.name}: the same fetch as Go's`, () => {
    const cmd = JSON.parse(c.cmd);
    // The fixture is what the page sends: JSON.stringify's own text.
    assert.equal(JSON.stringify(cmd), c.cmd, "the fixture's command is written as JSON.stringify writes it");
    const got = earlyRequest(cmd);
    if (c.want === null) {
      assert.equal(got, null, "Go sends no fetch for it, and neither does the early request");
      return;
    }
    assert.deepEqual({ url: got.url, ...got.init }, c.want);
  });
}

test("a string Go would read differently (a lone surrogate) is left to Go", () => {
  const base = { t: "ask", url: "http://127.0.0.1/v1/chat/completions", model: "", headers: [] };
  assert.equal(earlyRequest({ ...base, prompt: "a\ud800" }), null);
  assert.equal(earlyRequest({ ...base, body: { ["k\udc00"]: 1 } }), null);
  assert.notEqual(earlyRequest({ ...base, prompt: "🍵" }), null);
});
