// Importing the entries and the element's module on a server (Node: no
// document, HTMLElement or customElements, as in server-side rendering)
// throws nothing and defines nothing. No DOM is installed in this file.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

test("this process has no DOM", () => {
  assert.equal(typeof document, "undefined");
  assert.equal(typeof HTMLElement, "undefined");
  assert.equal(typeof customElements, "undefined");
});

test("the element's module exports the class and defines nothing", async () => {
  const m = await import("../element.js");
  assert.deepEqual(Object.keys(m), ["TrickleAnswer"]);
  assert.equal(typeof m.TrickleAnswer, "function");
  assert.equal(typeof customElements, "undefined");
});

for (const entry of ["index.js", "highlight.js", "trickle.js"]) {
  test(`importing ${entry} on a server throws nothing and exports the page API`, async () => {
    const m = await import(`../${entry}`);
    assert.deepEqual(Object.keys(m).sort(), ["TrickleAnswer", "TrickleChat", "ready", "stats"]);
    assert.equal(typeof globalThis.document, "undefined", "nothing made a document");
  });
}

// imports lists the modules a module imports statically, and theirs.
function imports(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  const src = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
  for (const m of src.matchAll(/^(?:import|export)\b[^;]*?["']\.\/([\w-]+\.js)["']/gms)) imports(m[1], seen);
  return seen;
}

test("only the highlighting entry reaches the highlighting build's files", () => {
  assert.ok(imports("highlight.js").has("highlight-assets.js"));
  assert.ok(imports("trickle.js").has("highlight-assets.js"));
  for (const entry of ["index.js", "element.js"]) {
    const all = imports(entry);
    assert.ok(all.has("assets.js"), `${entry} reaches the default build`);
    assert.ok(!all.has("highlight-assets.js"), `${entry} must not reach highlight-assets.js: a page that never highlights would ship its .wasm`);
  }
});

// registered imports entry in a fresh Node and says whether the
// highlighting build was registered.
async function registered(entry) {
  const code = `await import(${JSON.stringify(new URL(`../${entry}`, import.meta.url).href)});
const { builds } = await import(${JSON.stringify(new URL("../builds.js", import.meta.url).href)});
process.stdout.write(String(builds.highlight?.wasm.href ?? null));`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", code]);
  return stdout;
}

test("importing the highlighting entry registers its build; the plain entry does not", async () => {
  assert.equal(await registered("index.js"), "null");
  assert.match(await registered("highlight.js"), /__TRICKLE_HIGHLIGHT_WASM__$/, "the placeholder the build fills");
});
