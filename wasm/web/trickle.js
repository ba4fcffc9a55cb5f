// Trickle's loader: defines <trickle-answer>. The widget's Go program
// (compiled to WebAssembly) runs in a dedicated Web Worker, one per page,
// shared by every element: it reads the network, parses, renders and
// decides. This file, on the page's main thread, only does what must touch
// the DOM: it builds each element's parts, forwards calls to Go as
// commands, applies the frames Go sends back in requestAnimationFrame,
// writes announcements into the live region the moment they arrive,
// follows the answer while the reader is at the bottom, and dispatches the
// element's events.
//
// Where no worker can be made (a Content-Security-Policy without
// worker-src blob: for a page on another origin, an old browser) or
// worker="off" asks for it, the same Go code runs on this thread instead,
// talking through a MessageChannel: both modes share every line but where
// Go runs. el.metrics.thread says which, and the console says once why.
//
// The build (wasm/internal/build) replaces the quoted placeholders below
// with content-hashed file names.

const WASM = new URL("__TRICKLE_WASM__", import.meta.url);
const WASM_EXEC = new URL("__TRICKLE_WASM_EXEC__", import.meta.url);
const WORKER = new URL("__TRICKLE_WORKER__", import.meta.url);
const CSS = new URL("__TRICKLE_CSS__", import.meta.url);
// The same stylesheet's text, which the build puts here: the page applies
// it from this file, without a second request (CSS is the fallback).
const CSS_TEXT = "__TRICKLE_CSS_TEXT__";
// The highlighting variant of the widget and its stylesheet: fetched instead
// (and in addition) only when the page has a <trickle-answer highlight>.
const HIGHLIGHT_WASM = new URL("__TRICKLE_HIGHLIGHT_WASM__", import.meta.url);
const HIGHLIGHT_CSS = new URL("__TRICKLE_HIGHLIGHT_CSS__", import.meta.url);

// A worker that has not run its first line by then is taken as blocked
// (some engines report a CSP refusal of a blob: worker with no error).
const WORKER_START_MS = 4000;

const epochNow = () => performance.timeOrigin + performance.now();

// patchTail applies a render.TailPatch to the live tail.
function patchTail(tail, path, keep, text, html) {
  let el = tail;
  for (const i of path) el = el.childNodes[i];
  if (keep === 0) {
    el.innerHTML = html;
    return;
  }
  while (el.childNodes.length > keep) el.lastChild.remove();
  if (text) el.lastChild.appendData(text);
  if (html) el.insertAdjacentHTML("beforeend", html);
}

// patchAnswer applies one frame to the answer: the newly settled HTML
// before the live tail, then the tail's patch (keep -1: the tail did not
// change), or, on the final frame, the tail goes — or, with unwrap, its
// nodes stay in place as settled blocks and only their wrapper goes (Go
// found the settled HTML equal to the tail's).
function patchAnswer(tail, p) {
  if (p.a) tail.insertAdjacentHTML("beforebegin", p.a);
  if (p.final && !p.unwrap) {
    tail.remove();
    return;
  }
  if (p.keep >= 0) patchTail(tail, p.path, p.keep, p.text, p.html);
  if (p.final) tail.replaceWith(...tail.childNodes);
}

// follow keeps the newest text of a streaming answer in view while the
// reader is at the bottom (within 8 px) of the element, and never moves a
// reader who scrolled up: they get the "jump to latest" button instead. It
// scrolls from a ResizeObserver, after the browser's own layout of a frame
// (reading scrollHeight right after the frame's DOM writes would force a
// second layout). start() begins an answer; end(grew) is the final frame
// (it scrolls at once, so the answer is in view when ask() resolves);
// grew() is for browsers without ResizeObserver; stop() lets go.
function follow(el, jump, parts) {
  let following = true;
  let streaming = false;
  let jumpShown = false;
  const showJump = (show) => {
    if (show !== jumpShown && jump) {
      jumpShown = show;
      jump.hidden = !show;
    }
  };
  const toEnd = () => {
    el.scrollTop = el.scrollHeight;
  };
  const grew = () => {
    if (!streaming) return;
    if (following) toEnd();
    else showJump(true);
  };
  const onScroll = () => {
    following = el.scrollHeight - el.scrollTop - el.clientHeight <= 8;
    if (following) showJump(false);
  };
  const onJump = () => {
    following = true;
    toEnd();
    showJump(false);
  };
  el.addEventListener("scroll", onScroll, { passive: true });
  jump?.addEventListener("click", onJump);
  let ro = null;
  if (typeof ResizeObserver === "function") {
    ro = new ResizeObserver(grew);
    for (const p of parts) if (p) ro.observe(p);
  }
  return {
    observes: ro !== null,
    start() {
      following = true;
      streaming = true;
      showJump(false);
    },
    end(added) {
      streaming = false;
      if (following) toEnd();
      else if (added) showJump(true);
    },
    grew,
    stop() {
      ro?.disconnect();
      el.removeEventListener("scroll", onScroll);
      jump?.removeEventListener("click", onJump);
    },
  };
}

// Host is the page's end of the line to Go: it boots one build of the
// widget (in a worker, or here), queues commands until Go is ready, and
// applies Go's frames. A page has one Host per build it uses (see hostFor).
class Host {
  thread = null;
  failure = ""; // why Go could not start, once it is known
  onMain = false; // Go runs (or is starting) on this thread
  #port = null;
  #ready = false;
  #queue = []; // commands sent before Go was ready
  #frames = []; // frame messages waiting for the next animation frame
  #scheduled = false;
  #tick = null; // main-thread mode: has Go build its frame now
  #timer = 0;
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
    if (onMain || [...document.querySelectorAll("trickle-answer")].some((el) => el.getAttribute("worker") === "off")) {
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
  // before Go is ready it waits in the queue.
  send(cmd, init) {
    const data = { j: JSON.stringify(cmd), init };
    if (this.#ready) this.#port.postMessage(data);
    else this.#queue.push({ cmd, data });
  }

  stats() {
    return new Promise((resolve) => {
      this.#stats.push(resolve);
      this.send({ t: "stats" });
    });
  }

  #startWorker() {
    let w;
    let blobURL = "";
    try {
      if (WORKER.origin === location.origin) {
        w = new Worker(WORKER.href);
      } else {
        // A worker's script must be of the page's origin: a blob: of the
        // page's that imports the relay's script (classic scripts load
        // across origins; the .wasm is fetched under CORS).
        const src = `importScripts(${JSON.stringify(WORKER.href)});`;
        blobURL = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
        w = new Worker(blobURL);
      }
    } catch (err) {
      if (blobURL) URL.revokeObjectURL(blobURL);
      this.#startMain(`the page cannot start a Web Worker (${err?.message ?? err})`);
      return;
    }
    let settled = false;
    const fallBack = (why) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      w.terminate();
      if (blobURL) URL.revokeObjectURL(blobURL);
      this.#startMain(why);
    };
    const timer = setTimeout(() => fallBack(`the Web Worker did not start within ${WORKER_START_MS} ms (a Content-Security-Policy without worker-src?)`), WORKER_START_MS);
    w.onerror = (ev) => {
      ev.preventDefault();
      fallBack(`the Web Worker failed to start (${ev.message || "its script did not load: a Content-Security-Policy without worker-src or script-src for the relay?"})`);
    };
    w.onmessage = (ev) => {
      const m = JSON.parse(ev.data);
      if (m.t === "alive") {
        clearTimeout(timer);
        if (blobURL) URL.revokeObjectURL(blobURL);
        w.postMessage({ wasmExec: WASM_EXEC.href, wasm: this.wasm.href });
        return;
      }
      if (m.t === "fail" && !settled) {
        fallBack(`the widget did not load in the Web Worker (${m.message})`);
        return;
      }
      if (m.t === "ready") {
        settled = true;
        w.onerror = null;
      }
      this.#receive(m);
    };
    this.#port = w;
  }

  async #startMain(why) {
    this.onMain = true;
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

  // failed: Go could not start anywhere; every call made so far fails
  // with the reason, and so will the next ones.
  #failed(message) {
    const msg = `Trickle failed to load: ${message}`;
    this.#readyReject(new Error(msg));
    this.failure = msg;
    for (const { cmd } of this.#queue) {
      const st = this.els.get(cmd.id);
      if (st && cmd.n) st.reject(cmd.n, msg);
    }
    this.#queue = [];
  }

  #receive(m) {
    switch (m.t) {
      case "frame":
        for (const u of m.u) this.els.get(u.id)?.early(u);
        this.#frames.push(m.u);
        this.#schedule();
        break;
      case "say":
        // Announcements due while a frame was on its way: into the live
        // regions now, nothing to apply in a frame.
        for (const u of m.u) this.els.get(u.id)?.early(u);
        break;
      case "ready":
        this.thread = m.thread;
        this.#ready = true;
        for (const { data } of this.#queue) this.#port.postMessage(data);
        this.#queue = [];
        this.#readyResolve();
        break;
      case "warm":
        warmParser(m.html);
        break;
      case "stats":
        this.#stats.shift()?.({ ...m, pageElements: this.els.size });
        break;
      case "fail":
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
  // frame (at: its time), in order, each element's updates merged where
  // they can be (mergeUpdates): a backlog is one update per element. On
  // the main thread, Go first builds its frame here, so what arrived is
  // computed and applied in this same animation frame; a worker is told
  // that its frame was applied, and when: it times its next frame from
  // the page's animation frames.
  #apply(at) {
    if (!this.#scheduled) return;
    // Still scheduled while Go builds: its frame asks for no other one.
    this.#tick?.();
    this.#scheduled = false;
    clearTimeout(this.#timer);
    const frames = this.#frames;
    this.#frames = [];
    const trace = globalThis.__trickleTrace;
    for (const u of mergeUpdates(frames)) {
      const st = this.els.get(u.id);
      if (!st) continue;
      st.apply(u);
      if (u.gone) this.els.delete(u.id);
      if (Array.isArray(trace) && u.arr) trace.push({ arrived: u.arr, applied: epochNow(), thread: this.thread });
    }
    if (!this.#tick && frames.length > 0) this.#port.postMessage(`ack:${performance.timeOrigin + at}`);
  }
}

// mergeUpdates flattens frames (each a list of updates) into the updates
// to apply, in order, folding each element's update into its previous one
// when that one only streamed (no end, events, settling or removal): the
// DOM then changes once per element per animation frame however many
// frames arrived.
function mergeUpdates(frames) {
  if (frames.length === 1) return frames[0];
  const out = [];
  const open = new Map(); // id → index in out of its update still open to merging
  for (const updates of frames) {
    for (const u of updates) {
      const i = open.get(u.id);
      const merged = i === undefined ? null : mergeUpdate(out[i], u);
      if (merged) {
        out[i] = merged;
      } else {
        // Updates of one element stay in order: once one is not merged,
        // the next may only merge into it.
        open.set(u.id, out.length);
        out.push(u);
      }
    }
  }
  return out;
}

// mergeUpdate is the update that applies a then b, or null when there is
// none that is as cheap: a must only stream (its events, ending, promise
// and removal happen between the two), b must not start a new answer, and
// their answer patches must fold into one (mergePatch).
function mergeUpdate(a, b) {
  if (a.end || a.ev || a.resolve || a.gone || b.reset) return null;
  let p = a.p ?? b.p;
  if (a.p && b.p) {
    p = mergePatch(a.p, b.p);
    if (!p) return null;
  }
  const m = { ...a, ...b, reset: a.reset, p };
  if (!p) delete m.p;
  if (a.thinking && b.thinking) m.thinking = a.thinking + b.thinking;
  if (a.text && b.text) m.text = a.text + b.text;
  if (a.arr && b.arr) m.arr = Math.min(a.arr, b.arr);
  return m;
}

// mergePatch folds two answer patches (patchAnswer) into one, or returns
// null. The settled HTML only ever goes before the tail and tail patches
// only change the tail, so the settled parts concatenate; the tail's
// patches fold when the second replaces what the first touched (keep 0 at
// the same node or an ancestor of it), when the first did not touch the
// tail, or when both only append text at the same node.
function mergePatch(a, b) {
  if (a.final) return null;
  const m = { ...b, a: a.a + b.a };
  if (b.keep < 0) {
    if (a.keep >= 0) Object.assign(m, { path: a.path, keep: a.keep, text: a.text, html: a.html });
    return m;
  }
  if (a.keep < 0) return m;
  const prefix = b.path.length <= a.path.length && b.path.every((n, i) => n === a.path[i]);
  if (b.keep === 0 && prefix) return m;
  const same = a.path.length === b.path.length && prefix;
  if (same && a.keep > 0 && b.keep === a.keep && !a.html) {
    m.text = a.text + b.text;
    return m;
  }
  return null;
}

// warmParser parses HTML once into an element that is never attached, at
// the page's first idle moment: Chrome's first HTML fragment parse of a
// page took 5 ms in the benchmark, inside the first frame.
function warmParser(html) {
  const run = () => document.createElement("div").insertAdjacentHTML("beforeend", html);
  if (typeof requestIdleCallback === "function") requestIdleCallback(run, { timeout: 2000 });
  else setTimeout(run, 50);
}

// A page runs the default build of the widget, without chroma, unless it
// asks for highlighting. The first element to connect starts the first
// Host: with the highlighting build when some element of the page has the
// highlight attribute then (a page that highlights says so in its HTML,
// and every element shares that one build, which highlights only the
// elements that ask). When an element asks for highlighting later (it
// connects with the attribute, or has it at ask()) and the page runs the
// default build, a second Host starts the highlighting build for it, once:
// its own worker, or beside the first on this thread.
let firstHost = null;
let highlightHost = null;

function hostFor(highlight) {
  if (!firstHost) {
    const hl = highlight || document.querySelector("trickle-answer[highlight]") !== null;
    firstHost = new Host(hl ? HIGHLIGHT_WASM : WASM, hl, false);
    if (hl) highlightHost = firstHost;
  }
  if (!highlight) return firstHost;
  return (highlightHost ??= new Host(HIGHLIGHT_WASM, true, firstHost.onMain));
}

const hosts = () => [firstHost, highlightHost].filter((h, i, all) => h && all.indexOf(h) === i);

// Every element of the page has its own number, whichever Host serves it:
// Go derives the element's footnote ids from it (trickle-N-fn:1), so two
// answers never share one.
let elementIds = 0;

// The element's parts, in the light DOM so the page's CSS applies. The
// announcer and status regions must be in the document, empty, before
// anything is announced: screen readers ignore live regions that arrive
// together with their content.
const PARTS = `<div data-trickle="thinking" hidden><details><summary>Thinking</summary><div data-trickle="thinking-text"></div></details></div><div data-trickle="content"></div><div data-trickle="tools" hidden></div><div data-trickle="notice" hidden><span data-trickle="notice-text"></span> <button type="button" data-trickle="retry" hidden>Retry</button></div><button type="button" data-trickle="jump" hidden>Jump to latest</button><dl data-trickle="metrics" hidden></dl><div data-trickle="status" aria-hidden="true"></div><div data-trickle="sr-status" role="status"></div><div data-trickle="announcer" role="log" aria-live="polite" aria-relevant="additions"></div>`;

function ensureParts(el) {
  if (el.querySelector(':scope > [data-trickle="content"]')) return;
  el.innerHTML = PARTS;
}

// Answer is an element's state on the page: its parts, what Go last said
// (text, status, stream id, metrics) and its calls waiting to settle.
// MIN_GAP_MS is the least time between a sentence and the status after
// it in the live regions (a11y.MinGap).
const MIN_GAP_MS = 300;

class Answer {
  highlighter = null; // the page's (code, lang) => html, or null
  text = "";
  state = "idle";
  streamId = "";
  metrics = null;
  calls = new Map(); // call number → resolve
  tail = null;
  saidAt = -Infinity; // when the last sentence was written (performance.now())
  pendingStatus = undefined; // a status waiting for MIN_GAP_MS after it
  statusTimer = 0;

  retired = false; // the element moved to another Host (see retire)

  constructor(h, el) {
    this.host = h;
    this.el = el;
    this.id = ++elementIds;
    const q = (part) => el.querySelector(`:scope > [data-trickle="${part}"], :scope [data-trickle="${part}"]`);
    this.content = q("content");
    this.thinking = q("thinking");
    this.thinkingText = q("thinking-text");
    this.tools = q("tools");
    this.notice = q("notice");
    this.noticeText = q("notice-text");
    this.retryBtn = q("retry");
    this.metricsDL = q("metrics");
    this.status = q("status"); // visible: the element's state at once
    this.srStatus = q("sr-status") ?? this.status; // heard: after the last sentence
    this.announcer = q("announcer");
    this.follower = follow(el, q("jump"), [this.content, this.thinking, this.tools]);
    this.onRetry = () => h.send({ t: "retry", id: this.id, n: 0, at: epochNow() });
    this.retryBtn?.addEventListener("click", this.onRetry);
    h.els.set(this.id, this);
    h.send({ t: "attach", id: this.id });
  }

  // retire hands the element over to another Host (its next answer needs
  // the highlighting build): this Go side lets it go, and whatever it still
  // sends for it only settles its calls; the page's DOM is the new
  // Answer's.
  retire() {
    this.retired = true;
    clearTimeout(this.statusTimer); // the status region is the new Answer's
    this.follower.stop();
    this.retryBtn?.removeEventListener("click", this.onRetry);
    this.host.send({ t: "detach", id: this.id });
  }

  // call sends an ask/stream/retry and returns the promise of its final
  // status.
  call(cmd, init) {
    const n = this.host.newCall();
    const p = new Promise((resolve) => this.calls.set(n, resolve));
    if (this.host.failure) {
      this.reject(n, this.host.failure);
      return p;
    }
    this.host.send({ ...cmd, id: this.id, n, at: epochNow() }, init);
    return p;
  }

  // reject fails call n before it started an answer.
  reject(n, message) {
    this.dispatch("trickle-error", { status: "failed", message });
    const resolve = this.calls.get(n);
    this.calls.delete(n);
    resolve?.("failed");
  }

  dispatch(name, detail) {
    this.el.dispatchEvent(new CustomEvent(name, { bubbles: true, composed: true, detail }));
  }

  // request is what Go needs of the page to build the request.
  request() {
    const attr = (name) => (this.el.getAttribute(name) ?? "").trim();
    const headers = this.el.headers ?? {};
    return {
      url: new URL(attr("endpoint") || "/v1/chat/completions", document.baseURI).href,
      ws: attr("ws-endpoint"),
      transport: attr("transport"),
      dialect: attr("dialect"),
      announce: attr("announce"),
      model: attr("model"),
      images: attr("image-origins"),
      origin: location.origin,
      metrics: this.el.hasAttribute("show-metrics"),
      highlight: this.el.hasAttribute("highlight"),
      headers: Object.entries(headers).map(([k, v]) => [k, String(v)]),
    };
  }

  // early writes a frame's announcements and status into the live regions
  // at once, not at the next animation frame.
  //
  // A status is heard at least MIN_GAP_MS after the sentence before it, by
  // this page's clock: Go spaces them so, but the sentence may reach the
  // page later than Go decided it (frames are posted paced to the page's
  // frames, a worker under load), and a status written too soon after it
  // cuts the sentence short in a screen reader.
  early(u) {
    if (this.retired) return;
    if (u.reset) {
      clearTimeout(this.statusTimer);
      this.pendingStatus = undefined;
      this.saidAt = -Infinity;
      this.srStatus.textContent = "";
      this.announcer.textContent = "";
    }
    if (u.say) {
      this.announcer.insertAdjacentHTML("beforeend", u.say);
      this.saidAt = performance.now();
      if (this.pendingStatus !== undefined) this.sayStatus();
    }
    if (u.status !== undefined) {
      this.pendingStatus = u.status;
      this.sayStatus();
    }
  }

  // sayStatus writes the pending status once MIN_GAP_MS have passed since
  // the last sentence, or waits for it.
  sayStatus() {
    clearTimeout(this.statusTimer);
    const wait = this.saidAt + MIN_GAP_MS - performance.now();
    if (wait > 0) {
      this.statusTimer = setTimeout(() => this.sayStatus(), wait);
      return;
    }
    this.srStatus.textContent = this.pendingStatus;
    this.pendingStatus = undefined;
  }

  // apply applies one update (in the page's animation frame).
  apply(u) {
    if (this.retired) {
      if (u.resolve) this.calls.get(u.n)?.(u.resolve);
      return;
    }
    if (u.reset) {
      this.content.innerHTML = '<div data-trickle="tail"></div>';
      this.tail = this.content.firstElementChild;
      this.thinkingText.textContent = "";
      this.thinking.hidden = true;
      this.tools.innerHTML = "";
      this.tools.hidden = true;
      this.notice.hidden = true;
      this.notice.removeAttribute("data-kind");
      this.retryBtn.hidden = true;
      this.metricsDL.hidden = true;
      this.follower.start();
      this.el.setAttribute("aria-busy", "true");
      this.el.setAttribute("data-status", "streaming");
      this.text = "";
    }
    let grew = false;
    if (u.p) {
      const before = this.tail.previousSibling;
      patchAnswer(this.tail, u.p);
      // Newly settled blocks get their toolbars (and the page's
      // highlighter) in this same task, before the browser paints them.
      if (u.p.a || u.p.unwrap) decorate(this, before, u.p.final ? null : this.tail);
      grew = !!u.p.a || u.p.keep >= 0;
    }
    if (u.thinking) {
      this.thinking.hidden = false;
      this.thinkingText.insertAdjacentText("beforeend", u.thinking);
      grew = true;
    }
    if (u.tools !== undefined) {
      this.tools.innerHTML = u.tools;
      this.tools.hidden = u.tools === "";
      grew = true;
    }
    // The visible status line shows the element's state in the same frame
    // as the answer; what a screen reader hears (sr-status, early) keeps
    // its spoken order and says the end only after the last sentence.
    if (u.reset && this.status !== this.srStatus) this.status.textContent = "";
    if (u.shown !== undefined && this.status !== this.srStatus) this.status.textContent = u.shown;
    if (u.text) this.text += u.text;
    if (u.state) this.state = u.state;
    if (u.sid !== undefined) this.streamId = u.sid;
    if (u.m) this.metrics = u.m;
    if (u.stalled !== undefined) {
      // On the element for the page; on the tail for the stylesheet (a
      // change there restyles the tail, not the whole answer).
      this.el.toggleAttribute("data-trickle-stalled", u.stalled);
      if (this.tail?.isConnected) this.tail.toggleAttribute("data-trickle-stalled", u.stalled);
    }
    if (u.end) {
      const e = u.end;
      this.el.removeAttribute("aria-busy");
      this.el.removeAttribute("data-trickle-stalled");
      this.el.setAttribute("data-status", e.status);
      if (e.notice) {
        this.noticeText.textContent = e.notice;
        this.notice.setAttribute("data-kind", e.status);
        this.notice.hidden = false;
        this.retryBtn.hidden = !e.retry;
      }
      if (e.rows) {
        const rows = e.rows.flatMap(([k, v]) => {
          const dt = document.createElement("dt");
          const dd = document.createElement("dd");
          dt.textContent = k;
          dd.textContent = v;
          return [dt, dd];
        });
        this.metricsDL.replaceChildren(...rows);
        this.metricsDL.hidden = false;
      }
      this.follower.end(grew);
    } else if (grew && !this.follower.observes) {
      this.follower.grew();
    }
    if (u.ev) for (const [name, detail] of u.ev) this.dispatch(name, detail);
    if (u.resolve) {
      const resolve = this.calls.get(u.n);
      this.calls.delete(u.n);
      resolve?.(u.resolve);
    }
    if (u.gone) {
      this.follower.stop();
      this.retryBtn?.removeEventListener("click", this.onRetry);
    }
  }
}

// addHighlightStylesheet adds the highlighting variant's colours, once.
function addHighlightStylesheet() {
  if (document.querySelector("link[data-trickle-highlight-css]")) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = HIGHLIGHT_CSS.href;
  link.dataset.trickleHighlightCss = "";
  document.querySelector("[data-trickle-css]")?.after(link) ?? document.head.prepend(link);
}

// addStylesheet adds the widget's stylesheet once, first in <head>, so the
// page's own rules win at equal specificity: a <style> holding CSS_TEXT,
// in place before the element's parts are first laid out. A page whose
// Content-Security-Policy refuses inline styles (the <style> gets no sheet)
// gets the stylesheet's file instead.
function addStylesheet() {
  if (document.querySelector("[data-trickle-css]")) return;
  const style = document.createElement("style");
  style.dataset.trickleCss = "";
  style.textContent = CSS_TEXT;
  document.head.prepend(style);
  if (style.sheet) return;
  style.remove();
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = CSS.href;
  link.dataset.trickleCss = "";
  document.head.prepend(link);
}

class TrickleAnswer extends HTMLElement {
  #answer = null;
  #headers = {};

  connectedCallback() {
    if (this.hasAttribute("highlight")) addHighlightStylesheet();
    // A page that sets color-scheme (on :root or an ancestor) is followed;
    // otherwise the stylesheet's default follows the reader's preference.
    const scheme = getComputedStyle(this.parentElement ?? document.documentElement).colorScheme;
    if (scheme && scheme !== "normal") this.dataset.trickleScheme = "inherit";
    ensureParts(this);
    this.#attach();
  }

  disconnectedCallback() {
    // Moving the element reconnects it in the same task; only a real
    // removal releases it (its answer stops, its call settles).
    queueMicrotask(() => {
      if (this.isConnected || !this.#answer) return;
      const a = this.#answer;
      this.#answer = null;
      a.host.send({ t: "detach", id: a.id });
    });
  }

  #attach() {
    if (!this.#answer) {
      ensureParts(this);
      this.#answer = new Answer(hostFor(this.hasAttribute("highlight")), this);
    }
    return this.#answer;
  }

  // #attachFor is #attach for a new answer: an element that has the
  // highlight attribute now but is served by the default build moves to
  // the highlighting build's Host (its answer in progress, if any, stops
  // as a new ask would stop it).
  #attachFor() {
    const a = this.#attach();
    if (!this.hasAttribute("highlight") || a.host.highlights) return a;
    addHighlightStylesheet();
    a.retire();
    const b = new Answer(hostFor(true), this);
    b.highlighter = a.highlighter;
    this.#answer = b;
    return b;
  }

  /** Starts an answer to a prompt (string) or a request body (object);
   *  resolves with the final status. */
  ask(promptOrBody) {
    const a = this.#attachFor();
    let cmd;
    try {
      cmd = { t: "ask", ...a.request() };
      if (typeof promptOrBody === "string") cmd.prompt = promptOrBody;
      else if (typeof promptOrBody === "object") cmd.body = JSON.parse(JSON.stringify(promptOrBody));
      else cmd.type = typeof promptOrBody;
    } catch (err) {
      return this.#fail(a, err);
    }
    return a.call(cmd);
  }

  /** Streams the response of an arbitrary fetch(url, init); resolves with
   *  the final status. */
  stream(url, init = {}) {
    const a = this.#attachFor();
    let cmd;
    let req;
    try {
      cmd = { t: "stream", ...a.request(), url: new URL(String(url), document.baseURI).href };
      req = { ...(init ?? {}) };
      if (req.headers instanceof Headers) req.headers = [...req.headers.entries()];
      if (req.signal) {
        req.signal.addEventListener("abort", () => this.stop(), { once: true });
        delete req.signal;
      }
      // The init crosses to Go's thread as a structured clone: fail here,
      // where the page can see it, if it cannot.
      structuredClone(req);
    } catch (err) {
      return this.#fail(a, err);
    }
    return a.call(cmd, req);
  }

  #fail(a, err) {
    const n = a.host.newCall();
    const p = new Promise((resolve) => a.calls.set(n, resolve));
    a.reject(n, `trickle: ${err?.message ?? err}`);
    return p;
  }

  /** Stops the answer: aborts the request and asks the relay to cancel. */
  stop() {
    const a = this.#answer;
    if (a) a.host.send({ t: "stop", id: a.id });
  }

  /** Asks again with the last request. */
  retry() {
    return this.#attach().call({ t: "retry" });
  }

  get status() {
    return this.#answer ? this.#answer.state : "idle";
  }

  /** The answer's markdown so far, in step with what is on screen. */
  get text() {
    return this.#answer ? this.#answer.text : "";
  }

  /** The relay's id for the current answer's stream ("" when the endpoint
   *  is not a Trickle relay). */
  get streamId() {
    return this.#answer ? this.#answer.streamId : "";
  }

  /** What the widget measured about the answer; thread says where its Go
   *  side runs ("worker" or "main"). */
  get metrics() {
    const m = this.#answer?.metrics;
    return m ? { ...m } : null;
  }

  /** The page's own syntax highlighter, (code, lang) => HTML, called once
   *  per settled code block that the widget did not highlight itself; its
   *  output keeps only <span class>. */
  get highlighter() {
    return this.#attach().highlighter;
  }

  set highlighter(fn) {
    this.#attach().highlighter = typeof fn === "function" ? fn : null;
  }

  /** Extra request headers (e.g. Authorization) sent with every ask. */
  get headers() {
    return this.#headers;
  }

  set headers(value) {
    this.#headers = { ...(value ?? {}) };
  }
}

// ---- Reading aids (issue 13): what a settled block gets once, in the task
// that inserts it. The settled HTML stays goldmark's; toolbars are siblings.

// decorate walks the newly settled nodes between after (exclusive; null:
// the content's first child) and before (exclusive; null: to the end):
// each code block gets its toolbar and the page's highlighter, each table
// its Copy table button.
function decorate(answer, after, before) {
  const content = answer.content;
  for (let n = after ? after.nextSibling : content.firstChild; n && n !== before; n = n.nextSibling) {
    if (n.nodeType !== 1 || n.dataset.trickle) continue;
    const pres = n.tagName === "PRE" ? [n] : n.querySelectorAll("pre");
    for (const pre of pres) codeBlock(answer, pre);
    const tables = n.tagName === "TABLE" ? [n] : n.querySelectorAll("table");
    for (const table of tables) tableBlock(answer, table);
  }
}

function codeBlock(answer, pre) {
  const code = pre.firstElementChild;
  if (!code || code.tagName !== "CODE") return;
  const lang = /(?:^|\s)language-(\S+)/.exec(code.className)?.[1] ?? "";
  if (answer.highlighter && !code.firstElementChild) highlightWith(answer.highlighter, code, lang);
  const bar = document.createElement("div");
  bar.dataset.trickle = "code-toolbar";
  const name = document.createElement("span");
  name.dataset.trickle = "code-lang";
  name.textContent = lang;
  const btn = document.createElement("button");
  btn.type = "button";
  btn.dataset.trickle = "copy";
  btn.setAttribute("aria-label", "Copy code");
  btn.textContent = "Copy";
  btn.addEventListener("click", () => {
    copied(answer, navigator.clipboard.writeText(code.textContent));
  });
  bar.append(name, btn);
  pre.before(bar);
}

function tableBlock(answer, table) {
  const bar = document.createElement("div");
  bar.dataset.trickle = "table-toolbar";
  const btn = document.createElement("button");
  btn.type = "button";
  btn.dataset.trickle = "copy-table";
  btn.textContent = "Copy table";
  btn.addEventListener("click", () => {
    const cell = (c) => c.textContent.replace(/[\t\r\n]+/g, " ").trim();
    const tsv = [...table.rows].map((r) => [...r.cells].map(cell).join("\t")).join("\n") + "\n";
    const item = new ClipboardItem({
      "text/plain": new Blob([tsv], { type: "text/plain" }),
      "text/html": new Blob([table.outerHTML], { type: "text/html" }),
    });
    copied(answer, navigator.clipboard.write([item]));
  });
  bar.append(btn);
  table.before(bar);
}

// copied says "Copied" once in the status region when the clipboard took
// it, or why not.
function copied(answer, promise) {
  promise.then(
    () => say(answer, "Copied"),
    (err) => {
      console.error("trickle: copying failed:", err);
      say(answer, "Copy failed: the browser refused the clipboard.");
    },
  );
}

function say(answer, text) {
  const s = answer.srStatus;
  // The same words again are a new announcement: clear first.
  s.textContent = "";
  requestAnimationFrame(() => (s.textContent = text));
}

// highlightWith runs the page's highlighter on a settled code block. Its
// output is model-derived: only <span class="…"> survives, any other
// element becomes its text, and the result must keep the block's text.
function highlightWith(highlighter, code, lang) {
  const text = code.textContent;
  let html;
  try {
    html = highlighter(text, lang);
  } catch (err) {
    console.error(`trickle: the page's highlighter threw on a ${lang || "plain"} code block; it stays plain:`, err);
    return;
  }
  if (typeof html !== "string") {
    console.error(`trickle: the page's highlighter returned ${typeof html}, not an HTML string; the block stays plain`);
    return;
  }
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  const clean = sanitizeSpans(tpl.content);
  if (clean.textContent !== text) {
    console.error("trickle: the page's highlighter changed the code's text; the block stays plain");
    return;
  }
  code.replaceChildren(clean);
}

// sanitizeSpans copies a parsed fragment keeping text and <span> elements
// with their class only.
function sanitizeSpans(from) {
  const out = document.createDocumentFragment();
  for (const n of from.childNodes) {
    if (n.nodeType === 3) out.append(n.data);
    else if (n.nodeType === 1 && n.namespaceURI === "http://www.w3.org/1999/xhtml" && n.localName === "span") {
      const span = document.createElement("span");
      const cls = n.getAttribute("class");
      if (cls) span.className = cls;
      span.append(sanitizeSpans(n));
      out.append(span);
    } else if (n.nodeType === 1) {
      out.append(sanitizeSpans(n.localName === "template" ? n.content : n));
    }
  }
  return out;
}

addStylesheet();
if (!customElements.get("trickle-answer")) {
  customElements.define("trickle-answer", TrickleAnswer);
}

/** Resolves once the widget's Go side has started (in its worker, or on
 *  this thread). */
export function ready() {
  hostFor(false);
  return Promise.all(hosts().map((h) => h.ready())).then(() => {});
}

/** Counts for tests and diagnostics, summed over the page's builds: the
 *  Go side's elements, live js.Funcs and goroutines, the page's elements;
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
    thread: all[0].thread,
    builds: hosts().map((h) => (h.highlights ? "highlight" : "default")),
  };
}

export { TrickleAnswer };
