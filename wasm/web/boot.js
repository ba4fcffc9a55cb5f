// Starting the page's Go: a Web Worker for a build's .wasm, or why none
// could start (host.js then runs Go on the page's main thread); and the
// warm-up Go asks for once it runs.

import { WASM_EXEC, WORKER } from "./assets.js";
import { MSG_ALIVE, MSG_FAIL, MSG_READY, WORKER_NAME } from "./contract.js";

// A worker that has not run its first line by then is taken as blocked
// (some engines report a CSP refusal of a blob: worker with no error).
const WORKER_START_MS = 4000;

/**
 * startWorker starts Go for the .wasm at wasm (a URL) in a Web Worker and
 * returns the worker; receive(m) gets each of Go's messages (parsed). A
 * worker that cannot be made, fails to start or to load the widget, or
 * has not run within WORKER_START_MS, is given up: startMain(why) is
 * called once, with the reason (and null returned, when none could be
 * made at all).
 */
export function startWorker(wasm, receive, startMain) {
  let w;
  let blobURL = "";
  // Named after the .wasm: the worker starts its download at once.
  const opts = { name: WORKER_NAME + wasm.href };
  try {
    if (WORKER.origin === location.origin) {
      w = new Worker(WORKER.href, opts);
    } else {
      // A worker's script must be of the page's origin: a blob: of the
      // page's that imports the relay's script (classic scripts load
      // across origins; the .wasm is fetched under CORS).
      const src = `importScripts(${JSON.stringify(WORKER.href)});`;
      blobURL = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
      w = new Worker(blobURL, opts);
    }
  } catch (err) {
    if (blobURL) URL.revokeObjectURL(blobURL);
    startMain(`the page cannot start a Web Worker (${err?.message ?? err})`);
    return null;
  }
  let settled = false;
  const fallBack = (why) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    w.terminate();
    if (blobURL) URL.revokeObjectURL(blobURL);
    startMain(why);
  };
  const timer = setTimeout(() => fallBack(`the Web Worker did not start within ${WORKER_START_MS} ms (a Content-Security-Policy without worker-src?)`), WORKER_START_MS);
  w.onerror = (ev) => {
    ev.preventDefault();
    fallBack(`the Web Worker failed to start (${ev.message || "its script did not load: a Content-Security-Policy without worker-src or script-src for the relay?"})`);
  };
  w.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.t === MSG_ALIVE) {
      clearTimeout(timer);
      if (blobURL) URL.revokeObjectURL(blobURL);
      w.postMessage({ wasmExec: WASM_EXEC.href, wasm: wasm.href });
      return;
    }
    if (m.t === MSG_FAIL && !settled) {
      fallBack(`the widget did not load in the Web Worker (${m.message})`);
      return;
    }
    if (m.t === MSG_READY) {
      settled = true;
      w.onerror = null;
    }
    receive(m);
  };
  return w;
}

// warmParser parses HTML once into an element that is never attached, at
// the page's first idle moment: Chrome's first HTML fragment parse of a
// page costs far more than the later ones, and would otherwise fall in
// the answer's first frame (bench/browser).
export function warmParser(html) {
  const run = () => document.createElement("div").insertAdjacentHTML("beforeend", html);
  if (typeof requestIdleCallback === "function") requestIdleCallback(run, { timeout: 2000 });
  else setTimeout(run, 50);
}
