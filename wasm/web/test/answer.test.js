// An element's Answer (answer.js) on a jsdom element: what reaches the live
// regions at once (early) and how the status waits for the sentence before
// it, and what one update does to the element (apply).

import { readFileSync } from "node:fs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { installGlobals, mount, window } from "./dom.js";

installGlobals();
const answerJS = await import("../answer.js");
const { ANNOUNCER_KEEP } = await import("../announce.js");

// The status spacing Go sends in its ready message (a11y.MinGap).
const READY = JSON.parse(readFileSync(new URL("../../../wasm/protocol/testdata/ready.json", import.meta.url), "utf8"));
const MIN_GAP_MS = READY.min_gap_ms;

const answer = () => mount(answerJS, { minGap: MIN_GAP_MS });

// written resolves with the time the node's text is first set to want.
function written(node, want) {
  return new Promise((resolve) => {
    const check = () => {
      if (node.textContent === want) {
        obs.disconnect();
        resolve(performance.now());
      }
    };
    const obs = new window.MutationObserver(check);
    obs.observe(node, { childList: true, characterData: true, subtree: true });
    check();
  });
}

test("an answer attaches to its host under a number of its own", () => {
  const one = answer();
  const two = answer();
  assert.notEqual(one.a.id, two.a.id);
  assert.deepEqual(one.sent, [{ t: "attach", id: one.a.id }]);
});

test("a sentence goes into the announcer at once; the status after it waits the least gap", async () => {
  const { a, part } = answer();
  // Taken before the sentence is written: the answer's own clock reads
  // later, and its status waits the gap from there.
  const saidAt = performance.now();
  a.early({ id: a.id, reset: true, say: "<p>The answer is 42.</p>" });
  assert.equal(part("announcer").innerHTML, "<p>The answer is 42.</p>");
  a.early({ id: a.id, status: "Answer complete." });
  assert.equal(part("sr-status").textContent, "", "not in the same moment as the sentence");
  const at = await written(part("sr-status"), "Answer complete.");
  assert.ok(at - saidAt >= MIN_GAP_MS - 1, `status after ${at - saidAt} ms`);
});

// What a screen reader hears of a log is what is added to it: a recorder
// of additions and removals (a MutationObserver, as the accessibility
// tree sees the region change) holds that every sentence was added once,
// in order, none rewritten, and the log never holds more than
// ANNOUNCER_KEEP nodes however long the answer.
test("the announcer log keeps the last sentences only, and every one was added once, in order", async () => {
  const { a, part } = answer();
  const log = part("announcer");
  const added = [];
  let removedLast = false;
  const obs = new window.MutationObserver((records) => {
    for (const r of records) {
      for (const n of r.addedNodes) added.push(n.textContent);
      for (const n of r.removedNodes) if (n === log.lastChild || r.nextSibling === null) removedLast = true;
    }
  });
  obs.observe(log, { childList: true, characterData: true, subtree: true });
  let max = 0;
  const want = [];
  a.early({ id: a.id, reset: true });
  for (let i = 0; i < 500; i++) {
    // One sentence a frame, or several.
    const k = 1 + (i % 3);
    const said = Array.from({ length: k }, (_, j) => `Sentence ${i}.${j}.`);
    want.push(...said);
    a.early({ id: a.id, say: said.map((t) => `<p>${t}</p>`).join("") });
    max = Math.max(max, log.childNodes.length);
  }
  await new Promise((r) => setTimeout(r, 0));
  obs.disconnect();
  assert.deepEqual(added, want, "each sentence added once, in order");
  assert.equal(removedLast, false, "only the oldest are taken out");
  assert.equal(max, ANNOUNCER_KEEP, "the log is bounded");
  assert.deepEqual([...log.childNodes].map((n) => n.textContent), want.slice(-ANNOUNCER_KEEP), "the last sentences stay");
});

test("a status with no sentence before it is written at once", () => {
  const { a, part } = answer();
  a.early({ id: a.id, status: "Answering." });
  assert.equal(part("sr-status").textContent, "Answering.");
});

test("a new answer drops the status still waiting, and clears the regions", async () => {
  const { a, part } = answer();
  const heard = [];
  const obs = new window.MutationObserver(() => heard.push(part("sr-status").textContent));
  obs.observe(part("sr-status"), { childList: true, characterData: true, subtree: true });
  a.early({ id: a.id, say: "<p>One.</p>" });
  a.early({ id: a.id, status: "Old." });
  a.early({ id: a.id, reset: true });
  assert.equal(part("announcer").textContent, "");
  a.early({ id: a.id, say: "<p>Two.</p>" });
  // Another element's status, due after any a could still write: once it
  // is written, whatever a had pending is past due.
  const other = answer();
  other.a.early({ id: other.a.id, say: "<p>Other.</p>" });
  other.a.early({ id: other.a.id, status: "Other done." });
  await written(other.part("sr-status"), "Other done.");
  await Promise.resolve(); // the observer's last records
  obs.disconnect();
  assert.deepEqual(heard.filter(Boolean), [], "the old status never came");
  assert.equal(part("sr-status").textContent, "");
});

test("an update starts, streams and ends the answer on the element", () => {
  const { a, el, part } = answer();
  const events = [];
  el.addEventListener("trickle-end", (e) => events.push(e.detail));
  let resolved = null;
  a.calls.set(1, (s) => (resolved = s));
  a.apply({ id: a.id, reset: true, state: "streaming", p: { a: "", path: [], keep: 0, text: "", html: "<p>Hi</p>" }, text: "Hi" });
  assert.equal(part("content").getAttribute("aria-busy"), "true", "the content is busy while it streams");
  assert.equal(el.hasAttribute("aria-busy"), false, "the element, which holds the live regions, never is");
  for (const region of el.querySelectorAll('[role="status"], [role="log"], [aria-live]')) {
    assert.equal(region.closest('[aria-busy="true"]'), null, "no live region inside a busy one");
  }
  assert.equal(el.getAttribute("data-status"), "streaming");
  assert.equal(part("content").innerHTML, '<div data-trickle="tail"><p>Hi</p></div>');
  a.apply({ id: a.id, p: { a: "<p>Hi there.</p>", path: [], keep: -1, text: "", html: "", final: true }, text: " there.", state: "done", end: { status: "done", rows: [["Tokens", "2"]] }, ev: [["trickle-end", { status: "done" }]], resolve: "done", n: 1 });
  assert.equal(part("content").innerHTML, '<div data-trickle="settled"><p>Hi there.</p></div>');
  assert.equal(a.text, "Hi there.");
  assert.equal(a.state, "done");
  assert.equal(el.hasAttribute("aria-busy"), false);
  assert.equal(part("content").hasAttribute("aria-busy"), false, "not busy once the answer ended");
  assert.equal(el.getAttribute("data-status"), "done");
  assert.equal(part("metrics").innerHTML, "<dt>Tokens</dt><dd>2</dd>");
  assert.equal(part("metrics").hidden, false);
  assert.deepEqual(events, [{ status: "done" }]);
  assert.equal(resolved, "done");
  assert.equal(a.calls.size, 0);
});

test("a failed answer shows its notice and, when it can, Retry", () => {
  const { a, part, sent } = answer();
  a.apply({ id: a.id, reset: true, p: { a: "", path: [], keep: 0, text: "", html: "" } });
  a.apply({ id: a.id, p: { a: "", path: [], keep: -1, text: "", html: "", final: true }, end: { status: "failed", notice: "The relay is unreachable.", retry: true } });
  assert.equal(part("notice").hidden, false);
  assert.equal(part("notice").dataset.kind, "failed");
  assert.equal(part("notice-text").textContent, "The relay is unreachable.");
  assert.equal(part("retry").hidden, false);
  part("retry").click();
  assert.equal(sent.at(-1).t, "retry");
  assert.equal(sent.at(-1).id, a.id);
});

test("a retired answer only settles its calls and writes nothing", () => {
  const { a, part, sent } = answer();
  let resolved = null;
  a.calls.set(3, (s) => (resolved = s));
  a.retire();
  assert.deepEqual(sent.at(-1), { t: "detach", id: a.id });
  a.early({ id: a.id, say: "<p>Late.</p>", status: "Late." });
  a.apply({ id: a.id, reset: true, p: { a: "<p>x</p>", path: [], keep: -1, text: "", html: "" }, resolve: "stopped", n: 3 });
  assert.equal(part("announcer").textContent, "");
  assert.equal(part("sr-status").textContent, "");
  assert.equal(part("content").innerHTML, "");
  assert.equal(resolved, "stopped");
});

test("an answer that cites ends with its markers in place and its numbered sources, cleared by the next answer", () => {
  const { a, part } = answer();
  a.apply({ id: a.id, reset: true, state: "streaming", p: { a: "", path: [], keep: 0, text: "", html: "<p>Tea.</p>" }, text: "Tea." });
  assert.equal(part("sources").hidden, true, "no sources while it streams");
  const marked = '<p>Tea.<a href="https://tea.example/a" rel="noopener noreferrer nofollow ugc">[1]</a></p><pre><code>x</code></pre>';
  const sources = '<p data-trickle="sources-heading">Sources</p><ol data-trickle="sources-list"><li data-trickle="source" data-n="1"><a href="https://tea.example/a" rel="noopener noreferrer nofollow ugc" target="_blank">Tea</a> <span data-trickle="source-host">tea.example</span></li></ol>';
  a.apply({ id: a.id, p: { a: "<p>Tea.</p>", path: [], keep: -1, text: "", html: "", final: true, marked }, sources, state: "done", end: { status: "done" } });
  const content = part("content");
  assert.equal(content.querySelector("a").textContent, "[1]", "the marker links to its source");
  assert.equal(content.querySelector("a").getAttribute("href"), "https://tea.example/a");
  assert.ok(content.querySelector('[data-trickle="code-toolbar"]'), "the replaced content is decorated again");
  assert.equal(part("sources").hidden, false);
  assert.equal(part("sources").querySelectorAll("li").length, 1);
  a.apply({ id: a.id, reset: true, p: { a: "", path: [], keep: 0, text: "", html: "" } });
  assert.equal(part("sources").hidden, true);
  assert.equal(part("sources").innerHTML, "");
});
