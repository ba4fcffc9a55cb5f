// Trickle's Go side host: runs the widget's Go program (compiled to
// WebAssembly) in a dedicated Web Worker, or — the fallback, when the page
// cannot make a worker — on the page's main thread, imported by trickle.js.
// Either way Go talks to the page through one message port (the worker's
// own, or a MessageChannel's), so both modes run the same code; only the
// frames' pacing differs (see start).
//
// It holds only mechanical helpers that spare Go a crossing per network
// chunk: an inbox that gathers a connection's chunks until Go's next frame
// takes them all, the wake-up that tells Go bytes arrived, and the
// adoption of a request the page sent before Go was ready (adopt). Every
// decision is Go's (wasm/, wasm/element).
//
// A classic script (importScripts) and a module (import()) alike: it only
// assigns globals explicitly. Its one import, the contract's constants, is
// bundled in by the build (wasm/internal/build), which writes it as a
// classic script.
import { MSG_ALIVE, MSG_FAIL, WORKER_NAME } from "./contract.js";

(() => {
  "use strict";
  const g = globalThis;

  // Inbox holds a connection's bytes until Go's next frame takes them,
  // with each chunk's length and arrival time (for the metrics). take()
  // hands everything over as one Uint8Array, little-endian: the
  // performance.now() of the take (float64), the number of chunks
  // (uint32), then per chunk its length (uint32) and arrival time
  // (float64), then the bytes (wasm/protocol/inbox.go reads it).
  class Inbox {
    #wake;
    #bytes = new Uint8Array(4096);
    #used = 0;
    #chunks = [];
    closed = false;

    constructor(wake) {
      this.#wake = wake;
    }

    // push adds a chunk that arrived now, or at epoch ms at (a chunk the
    // page read before Go was ready: an early answer's).
    push(chunk, at) {
      if (this.#used + chunk.length > this.#bytes.length) {
        const grown = new Uint8Array(Math.max(2 * this.#bytes.length, this.#used + chunk.length));
        grown.set(this.#bytes.subarray(0, this.#used));
        this.#bytes = grown;
      }
      this.#bytes.set(chunk, this.#used);
      this.#used += chunk.length;
      this.#chunks.push(chunk.length, at === undefined ? performance.now() : at - performance.timeOrigin);
      this.#wake();
    }

    take() {
      const n = this.#chunks.length / 2;
      if (n === 0) return null;
      const head = 12 + 12 * n;
      const out = new Uint8Array(head + this.#used);
      const view = new DataView(out.buffer);
      view.setFloat64(0, performance.now(), true);
      view.setUint32(8, n, true);
      for (let i = 0; i < n; i++) {
        view.setUint32(12 + 12 * i, this.#chunks[2 * i], true);
        view.setFloat64(16 + 12 * i, this.#chunks[2 * i + 1], true);
      }
      out.set(this.#bytes.subarray(0, this.#used), head);
      this.#used = 0;
      this.#chunks.length = 0;
      return out;
    }

    close() {
      if (!this.closed) this.onclose?.();
      this.closed = true;
      this.#used = 0;
      this.#chunks.length = 0;
    }
  }

  // booting is the boot in progress on this thread: Go finds its helpers
  // through one global (__trickleBoot), so a second build started on the
  // same thread (the page's highlighting build beside the default one)
  // waits until the first has taken its own.
  let booting = Promise.resolve();

  // start boots Go on this thread with port as its line to the page, and
  // reports a failure to boot on the port.
  //
  // Pacing. In a worker, bytes wake Go at once (one microtask gathers the
  // chunks of one task); Go posts its frame shortly before the page's next
  // animation frame (widget.Pacer), which the page acknowledges from that
  // animation frame with its time ("ack:<epoch ms>"). While a frame is
  // posted and not yet applied, bytes wait and go in the next one: one
  // message per page frame. On the main thread (page set: trickle.js's
  // direct line), bytes ask the page for an animation frame instead, and
  // the page has Go build its frame there (page.tick) and takes it at once
  // (page.frame), so it is computed and applied in the same animation
  // frame.
  async function start(port, wasmURL, thread, page) {
    const before = booting;
    let done;
    booting = new Promise((resolve) => (done = resolve));
    try {
      await before;
      await boot(port, wasmURL, thread, page);
    } finally {
      done();
    }
  }

  async function boot(port, wasmURL, thread, page) {
    let goWake = null;
    let inFlight = false; // a frame has not reached the page yet
    let pending = false; // bytes arrived meanwhile
    let queued = false;
    const wake = () => {
      if (page) {
        page.want();
        return;
      }
      if (inFlight) {
        pending = true;
        return;
      }
      if (queued || !goWake) return;
      queued = true;
      queueMicrotask(() => {
        queued = false;
        goWake();
      });
    };
    if (page) page.tick = () => goWake?.();
    let instance = null; // Go's WebAssembly instance, once instantiated
    const helpers = {
      thread,
      // wasmMemory is the size of Go's WebAssembly memory in bytes (it
      // grows and never shrinks), for the stats command.
      wasmMemory: () => instance?.exports.mem.buffer.byteLength ?? 0,
      // post sends a message to the page; frame says it is a frame, which
      // the page acknowledges once applied (a worker's) or takes at once
      // (the main thread's). It reports whether the frame is in flight.
      post(s, frame) {
        if (frame && page) {
          page.frame(s);
          return false;
        }
        if (frame) inFlight = true;
        port.postMessage(s);
        return frame;
      },
      now: () => performance.timeOrigin + performance.now(),
      // cancel sends a Stop's DELETE with headers (the request's own:
      // [name, value] pairs) and hands done what came back: { status,
      // body } (the stream's info with what it cost), or { error } when
      // no response came. done is called exactly once, so Go can release
      // it.
      cancel(url, headers, done) {
        fetch(url, { method: "DELETE", keepalive: true, headers })
          .then(
            (r) => r.text().then((body) => ({ status: r.status, body }), () => ({ status: r.status, body: "" })),
            (err) => ({ status: 0, body: "", error: String(err?.message ?? err) || "fetch failed" }),
          )
          .then(done);
      },
      idle(fn, timeout) {
        if (typeof g.requestIdleCallback === "function") g.requestIdleCallback(fn, { timeout });
        else setTimeout(fn, 50);
      },
      readBody(body, end) {
        const inbox = new Inbox(wake);
        if (!body) {
          queueMicrotask(() => end(null));
          return inbox;
        }
        const reader = body.getReader();
        (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            if (inbox.closed) {
              reader.cancel().catch(() => {});
              return;
            }
            inbox.push(value);
          }
        })().then(() => end(null), (err) => end(err ?? new Error("read failed")));
        return inbox;
      },
      // adopt takes over an early answer (early/early.js: the request the
      // page sent before Go was ready): its chunks so far, then the rest of
      // its body, into an inbox as readBody's; end as readBody's. A stopped
      // one ends when Go closes it (the stop command follows its ask).
      adopt(early, end) {
        const inbox = new Inbox(wake);
        for (const [chunk, at] of early.chunks) inbox.push(chunk, at);
        const body = early.body;
        if (!body) {
          if (early.stopped) inbox.onclose = () => queueMicrotask(() => end(null));
          else queueMicrotask(() => end(early.end === "done" ? null : new Error(early.end)));
          return inbox;
        }
        const reader = body.getReader();
        inbox.onclose = () => reader.cancel().catch(() => {});
        (async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (done || inbox.closed) return;
            inbox.push(value);
          }
        })().then(() => end(null), (err) => end(err ?? new Error("read failed")));
        return inbox;
      },
      wsInbox(ws) {
        const inbox = new Inbox(wake);
        const utf8 = new TextEncoder();
        ws.onmessage = (ev) => {
          if (inbox.closed) return;
          inbox.push(typeof ev.data === "string" ? utf8.encode(ev.data) : new Uint8Array(ev.data));
        };
        return inbox;
      },
    };
    const booted = new Promise((resolve) => {
      // Go calls this once, with its handlers, and gets the helpers back.
      g.__trickleBoot = (onMessage, onWake) => {
        goWake = onWake;
        port.onmessage = (ev) => {
          if (typeof ev.data === "string" && ev.data.startsWith("ack:")) {
            inFlight = false;
            onMessage((pending ? "ack+wake:" : "ack:") + ev.data.slice(4));
            pending = false;
            return;
          }
          onMessage(ev.data);
        };
        resolve();
        return helpers;
      };
    });
    try {
      const go = new g.Go();
      let result;
      try {
        result = await WebAssembly.instantiateStreaming(fetchWasm(wasmURL), go.importObject);
      } catch (err) {
        // A server that sends the .wasm without Content-Type
        // application/wasm breaks instantiateStreaming; fall back to bytes.
        const response = await fetch(wasmURL);
        if (!response.ok) throw new Error(`loading ${wasmURL}: HTTP ${response.status}`);
        result = await WebAssembly.instantiate(await response.arrayBuffer(), go.importObject);
      }
      instance = result.instance;
      go.run(result.instance);
      await booted;
      delete g.__trickleBoot;
    } catch (err) {
      port.postMessage(JSON.stringify({ t: MSG_FAIL, message: bootError(err, wasmURL) }));
    }
  }

  // bootError says why Go could not start, naming what the page must
  // change: the CSP directive, or the file that did not load.
  function bootError(err, wasmURL) {
    const m = String(err?.message ?? err);
    if (/content.security.policy|unsafe-eval/i.test(m)) {
      return `the page's Content-Security-Policy does not allow WebAssembly: add 'wasm-unsafe-eval' to its script-src (the browser said: ${m})`;
    }
    return m.includes(wasmURL) ? m : `loading ${wasmURL}: ${m}`;
  }

  const inWorker = typeof g.WorkerGlobalScope === "function" && g instanceof g.WorkerGlobalScope;

  // The page names the worker after the .wasm it will boot ("trickle
  // <url>", host.js), so that its download starts with the worker's first
  // line: not after the page's answer to alive and the toolchain's script
  // (a round trip each on a first visit; bench/browser -measure first).
  let ahead = null;
  if (inWorker && typeof g.name === "string" && g.name.startsWith(WORKER_NAME)) {
    const url = g.name.slice(WORKER_NAME.length);
    ahead = { url, res: fetch(url) };
    ahead.res.catch(() => {}); // reported when the boot awaits it
  }

  // fetchWasm is the .wasm's response: the one started ahead, once.
  function fetchWasm(url) {
    if (ahead?.url === url) {
      const { res } = ahead;
      ahead = null;
      return res;
    }
    return fetch(url);
  }

  if (inWorker) {
    // The page's first message says where the toolchain's wasm_exec.js and
    // the .wasm are (absolute URLs: a blob: worker has no base of its own).
    g.onmessage = (ev) => {
      g.onmessage = null;
      try {
        g.importScripts(ev.data.wasmExec);
      } catch (err) {
        g.postMessage(JSON.stringify({ t: MSG_FAIL, message: `loading ${ev.data.wasmExec}: ${err?.message ?? err}` }));
        return;
      }
      start(g, ev.data.wasm, "worker");
    };
    g.postMessage(JSON.stringify({ t: MSG_ALIVE }));
  } else {
    g.__trickleStart = start;
  }
})();
