// The host: the page's end of the line to Go. It boots a build of the
// widget in a Web Worker (boot.js; where none can be made, on this thread),
// queues commands until Go is ready (an ask meanwhile is started here and
// shown early, then handed to Go: early/early.js), and hands Go's frames
// to the elements' Answers in the page's animation frames. hostFor picks
// the Host an element's build runs on.

import { WASM, WASM_EXEC, WORKER } from "./assets.js";
import { builds } from "./builds.js";
import {
  ATTR_WORKER,
  KIND_ASK,
  KIND_DETACH,
  KIND_RETRY,
  KIND_STATS,
  KIND_STOP,
  MSG_FAIL,
  MSG_FRAME,
  MSG_READY,
  MSG_SAY,
  MSG_STATS,
  MSG_WARM,
  UPDATE_ARRIVED,
  UPDATE_END,
  UPDATE_GONE,
  UPDATE_ID,
  UPDATE_RESOLVE,
  VERSION,
} from "./contract.js";
import { mergeUpdates } from "./merge.js";
import { startEarly } from "./early/early.js";
import { refusals } from "./csp.js";
import { startWorker, warmParser } from "./boot.js";

// An answer's changes reach the page at most this often (ms): every
// other frame of a 60 Hz display, every fourth at 120 Hz. What arrives
// between is merged into the next applied frame, so the page's style and
// layout passes per answer follow the answer's duration, not how the
// worker's frames fall against the display's (bench/browser counts them;
// docs/PERFORMANCE.md). FRAME_SLACK_MS takes in the display's jitter.
export const FRAME_MS = 1000 / 30;
const FRAME_SLACK_MS = 4;

// tooSoon says whether an animation frame at `at` comes too soon after
// the one that last applied frames (applied) to apply what waits: under
// the cadence, unless what waits ends an answer (ending: its final text
// shows in the next animation frame) or the page is hidden (a timer
// stands in for animation frames).
export function tooSoon(at, applied, ending, hidden) {
  return !ending && !hidden && at - applied < FRAME_MS - FRAME_SLACK_MS;
}

export const epochNow = () => performance.timeOrigin + performance.now();

// PROTOCOL_VERSION is the page↔Go protocol this loader speaks
// (wasm/protocol.Version, sent in Go's ready message; contract.js's
// VERSION): a .wasm from another build is refused with a message, not
// misread.
export const PROTOCOL_VERSION = VERSION;

// Host is the page's end of the line to Go: it boots one build of the
// widget (in a worker, or here), queues commands until Go is ready, and
// applies Go's frames. A page has one Host per build it uses (see hostFor).
class Host {
  thread = null;
  // minGap is the least time, in ms, between a sentence and the status
  // after it in the live regions (a11y.MinGap), from Go's ready message.
  minGap = 0;
  failure = ""; // why Go could not start, once it is known
  onMain = false; // Go runs (or is starting) on this thread
  #port = null;
  #ready = false;
  #queue = []; // commands sent before Go was ready
  #early = new Map(); // id → the element's early answer (early/early.js)
  #handing = new Map(); // id → its handover to Go, until posted
  #frames = []; // frame messages waiting for the next animation frame
  #scheduled = false;
  #ending = false; // a frame waiting to be applied ends an answer
  #tick = null; // main-thread mode: has Go build its frame now
  #timer = 0;
  #applied = -Infinity; // when frames were last applied (animation frame time)
  #stats = [];
  #warned = false;
  els = new Map(); // id → element state
  #calls = 0;
  #whenReady;
  #readyResolve;
  #readyReject;

  // wasm is the build's URL; highlights says it is the highlighting build;
  // onMain starts Go on this thread at once (a worker="off" element, or
  // the page's other Host runs there).
  constructor(wasm, highlights, onMain) {
    this.wasm = wasm;
    this.highlights = highlights;
    this.#whenReady = new Promise((resolve, reject) => {
      this.#readyResolve = resolve;
      this.#readyReject = reject;
    });
    this.#whenReady.catch(() => {});
    if (onMain || [...document.querySelectorAll("trickle-answer")].some((el) => el.getAttribute(ATTR_WORKER) === "off")) {
      this.#startMain(null);
    } else {
      this.#startWorker();
    }
  }

  ready() {
    return this.#whenReady;
  }

  newCall() {
    return ++this.#calls;
  }

  // send posts a command (JSON) and a stream()'s RequestInit beside it;
  // before Go is ready it waits in the queue. An ask waiting there is
  // started at once by the page (early/early.js), its text shown as it
  // comes, and handed over to Go with the command; the element's next
  // command before then stops it.
  send(cmd, init) {
    const data = { j: JSON.stringify(cmd), init };
    const stops = cmd.t === KIND_ASK || cmd.t === KIND_RETRY || cmd.t === KIND_STOP || cmd.t === KIND_DETACH;
    if (stops) {
      this.#early.get(cmd.id)?.stop();
      this.#early.delete(cmd.id);
    }
    if (this.#ready) {
      this.#post({ cmd, data, early: null });
      return;
    }
    let early = null;
    const st = this.els.get(cmd.id);
    if (cmd.t === KIND_ASK && st && (early = startEarly(cmd, (t, at) => st.view.text(early, t, at)))) {
      this.#early.set(cmd.id, early);
      st.view.start(early);
    }
    this.#queue.push({ cmd, data, early });
  }

  // #post sends a command to Go, an early answer's connection with its
  // ask. A handover waits for the early request's response, so the
  // element's commands after it wait for it too (another element's do
  // not).
  #post({ cmd, data, early }) {
    const id = cmd.id;
    const before = this.#handing.get(id);
    if (!early && !before) {
      this.#port.postMessage(data);
      return;
    }
    const p = (before ?? Promise.resolve()).then(async () => {
      if (!early) {
        this.#port.postMessage(data);
        return;
      }
      const { value, transfer } = await early.handover();
      if (this.#early.get(id) === early) this.#early.delete(id);
      try {
        this.#port.postMessage({ ...data, early: value }, transfer);
      } catch (err) {
        // Not expected (startEarly checked the transfer): Go sends the
        // request again rather than lose the answer.
        console.warn(`trickle: the early answer could not be handed over (${err?.message ?? err}); asking again`);
        early.stop();
        this.#port.postMessage(data);
      }
    });
    this.#handing.set(id, p);
    p.finally(() => {
      if (this.#handing.get(id) === p) this.#handing.delete(id);
    });
  }

  stats() {
    return new Promise((resolve) => {
      this.#stats.push(resolve);
      this.send({ t: KIND_STATS });
    });
  }

  #startWorker() {
    this.#port = startWorker(this.wasm, (m) => this.#receive(m), (why) => this.#startMain(why));
  }

  async #startMain(why) {
    this.onMain = true;
    this.#whyMain = why ?? "";
    if (why && !this.#warned) {
      this.#warned = true;
      console.warn(`trickle: the widget runs on the page's main thread: ${why}`);
    }
    try {
      await import(WASM_EXEC.href);
      await import(WORKER.href);
      const channel = new MessageChannel();
      channel.port1.onmessage = (ev) => this.#receive(JSON.parse(ev.data));
      this.#port = channel.port1;
      // Frames skip the channel: Go builds one in the page's animation
      // frame (tick) and hands it over at once (frame), to be applied in
      // that same animation frame; bytes arriving ask for one (want).
      const page = {
        want: () => this.#schedule(),
        frame: (s) => {
          try {
            this.#receive(JSON.parse(s));
          } catch (err) {
            // Reported, but never thrown back into Go.
            queueMicrotask(() => {
              throw err;
            });
          }
        },
        tick: null,
      };
      this.#tick = () => page.tick?.();
      globalThis.__trickleStart(channel.port2, this.wasm.href, "main", page);
    } catch (err) {
      this.#failed(`${err?.message ?? err}`);
    }
  }

  // #whyMain is why Go runs on this thread (the worker's failure), kept
  // for the message should it fail here too.
  #whyMain = "";

  // failed: Go could not start anywhere; every call made so far fails
  // with the reason, and so will the next ones.
  #failed(message) {
    let before = "";
    if (this.#whyMain) {
      before = this.#whyMain.includes(message) ? " (in the Web Worker, then on the page's main thread)" : ` (the Web Worker first: ${this.#whyMain})`;
    }
    const msg = `Trickle failed to load: ${message}${before}${refusals()}`;
    this.#readyReject(new Error(msg));
    this.failure = msg;
    for (const { cmd, early } of this.#queue) {
      early?.stop();
      const st = this.els.get(cmd.id);
      if (early) st?.view.end(); // Go will not show it: the text goes too
      if (st && cmd.n) st.unavailable(cmd.n, msg);
    }
    this.#queue = [];
    this.#early.clear();
  }

  #receive(m) {
    switch (m.t) {
      case MSG_FRAME:
        for (const u of m.u) {
          this.els.get(u[UPDATE_ID])?.early(u);
          // An answer's end is shown in the next animation frame, not
          // held for the cadence: the final text a frame after the last
          // token (the worker posts it at once too: host_js.go).
          if (u[UPDATE_END] !== undefined || u[UPDATE_RESOLVE] !== undefined) this.#ending = true;
        }
        this.#frames.push(m.u);
        this.#schedule();
        break;
      case MSG_SAY:
        // Announcements due while a frame was on its way: into the live
        // regions now, nothing to apply in a frame.
        for (const u of m.u) this.els.get(u[UPDATE_ID])?.early(u);
        break;
      case MSG_READY:
        if (m.v !== PROTOCOL_VERSION) {
          this.#failed(`the loader speaks protocol ${PROTOCOL_VERSION} and the .wasm protocol ${m.v ?? "unknown"}: they come from different builds (serve trickle.js and its .wasm from one build)`);
          break;
        }
        this.thread = m.thread;
        this.minGap = m.min_gap_ms;
        this.#ready = true;
        for (const item of this.#queue) this.#post(item);
        this.#queue = [];
        this.#readyResolve();
        break;
      case MSG_WARM:
        warmParser(m.html);
        break;
      case MSG_STATS:
        this.#stats.shift()?.({ ...m, pageElements: this.els.size });
        break;
      case MSG_FAIL:
        this.#failed(m.message);
        break;
    }
  }

  // #schedule asks for one animation frame to apply what arrived. A hidden
  // page gets no animation frames, so a timer stands in (at once when
  // hidden, after 250 ms if the page is hidden meanwhile).
  #schedule() {
    if (this.#scheduled) return;
    this.#scheduled = true;
    if (document.hidden) {
      this.#timer = setTimeout(() => this.#apply(performance.now()), 50);
      return;
    }
    requestAnimationFrame((at) => this.#apply(at));
    this.#timer = setTimeout(() => this.#apply(performance.now()), 250);
  }

  // #apply applies every frame that arrived since the last animation
  // frame (at: its time), no sooner than FRAME_MS after the last time it
  // did, in order, each element's updates merged where
  // they can be (mergeUpdates): a backlog is one update per element. On
  // the main thread, Go first builds its frame here, so what arrived is
  // computed and applied in this same animation frame; a worker is told
  // that its frame was applied, and when: it times its next frame from
  // the page's animation frames.
  #apply(at) {
    if (!this.#scheduled) return;
    if (tooSoon(at, this.#applied, this.#ending, document.hidden)) {
      // Too soon after the last: the next display frame will do.
      requestAnimationFrame((t) => this.#apply(t));
      return;
    }
    this.#applied = at;
    this.#ending = false;
    // Still scheduled while Go builds: its frame asks for no other one.
    this.#tick?.();
    this.#scheduled = false;
    clearTimeout(this.#timer);
    const frames = this.#frames;
    this.#frames = [];
    const trace = globalThis.__trickleTrace;
    // What the answers of this frame share: where the reader's selection
    // is, asked once (selection.js frameMayHold).
    const shared = {};
    for (const u of mergeUpdates(frames)) {
      const id = u[UPDATE_ID];
      const st = this.els.get(id);
      if (!st) continue;
      st.apply(u, shared);
      if (u[UPDATE_GONE]) this.els.delete(id);
      const arrived = u[UPDATE_ARRIVED];
      if (Array.isArray(trace) && arrived) trace.push({ arrived, applied: epochNow(), thread: this.thread });
    }
    if (!this.#tick && frames.length > 0) this.#port.postMessage(`ack:${performance.timeOrigin + at}`);
  }
}

// A page runs the default build of the widget, without chroma, unless it
// asks for highlighting. The first element to connect starts the first
// Host: with the highlighting build when some element of the page has the
// highlight attribute then (a page that highlights says so in its HTML,
// and every element shares that one build, which highlights only the
// elements that ask). When an element asks for highlighting later (it
// connects with the attribute, or has it at ask()) and the page runs the
// default build, a second Host starts the highlighting build for it, once:
// its own worker, or beside the first on this thread. Without a
// highlighting build (builds.js) every element runs on the default one.
let firstHost = null;
let highlightHost = null;

export function hostFor(highlight) {
  const hlBuild = builds.highlight;
  if (!firstHost) {
    const hl = hlBuild !== null && (highlight || document.querySelector("trickle-answer[highlight]") !== null);
    firstHost = new Host(hl ? hlBuild.wasm : WASM, hl, false);
    if (hl) highlightHost = firstHost;
  }
  if (!highlight || !hlBuild) return firstHost;
  return (highlightHost ??= new Host(hlBuild.wasm, true, firstHost.onMain));
}

const hosts = () => [firstHost, highlightHost].filter((h, i, all) => h && all.indexOf(h) === i);

/** Resolves once the widget's Go side has started (in its worker, or on
 *  this thread). */
export function ready() {
  hostFor(false);
  return Promise.all(hosts().map((h) => h.ready())).then(() => {});
}

/** Counts for tests and diagnostics, summed over the page's builds: the
 *  Go side's elements, live js.Funcs and goroutines, the page's elements,
 *  Go's heap in use (heapInuse), the bytes Go took from its WebAssembly
 *  memory (goSys), that memory's size (wasmMemory: it never shrinks) and
 *  its collections so far (numGC);
 *  the thread the first build runs on, and which builds run ("default",
 *  "highlight"). */
export async function stats() {
  await ready();
  const all = await Promise.all(hosts().map((h) => h.stats()));
  const sum = (k) => all.reduce((n, s) => n + s[k], 0);
  return {
    elements: sum("elements"),
    funcs: sum("funcs"),
    goroutines: sum("goroutines"),
    pageElements: sum("pageElements"),
    heapInuse: sum("heap_inuse"),
    goSys: sum("sys"),
    wasmMemory: sum("wasm_memory"),
    numGC: sum("num_gc"),
    thread: all[0].thread,
    builds: hosts().map((h) => (h.highlights ? "highlight" : "default")),
  };
}
