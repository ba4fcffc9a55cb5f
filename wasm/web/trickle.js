// Trickle's loader: defines <trickle-answer> and forwards every call to the
// Go program compiled to WebAssembly. What to show, say, request and resume
// is decided in Go (wasm/); this file boots it, builds the element's empty
// parts so the live regions exist before anything is said into them,
// forwards calls, and holds the mechanical helpers (BROWSER) that spare Go
// a crossing per network chunk, per DOM node or per scroll event.
//
// The build (wasm/internal/build) replaces the quoted placeholders below
// with content-hashed file names.

const WASM = new URL("__TRICKLE_WASM__", import.meta.url);
const WASM_EXEC = new URL("__TRICKLE_WASM_EXEC__", import.meta.url);
const CSS = new URL("__TRICKLE_CSS__", import.meta.url);
// The highlighting variant of the widget and its stylesheet: fetched instead
// (and in addition) only when the page has a <trickle-answer highlight>.
const HIGHLIGHT_WASM = new URL("__TRICKLE_HIGHLIGHT_WASM__", import.meta.url);
const HIGHLIGHT_CSS = new URL("__TRICKLE_HIGHLIGHT_CSS__", import.meta.url);

let booting = null;

// patchTail applies a render.TailPatch to the live tail.
function patchTail(tail, path, keep, text, html) {
  let el = tail;
  if (path) for (const i of path.split(",")) el = el.childNodes[+i];
  if (keep === 0) {
    el.innerHTML = html;
    return;
  }
  while (el.childNodes.length > keep) el.lastChild.remove();
  if (text) el.lastChild.appendData(text);
  if (html) el.insertAdjacentHTML("beforeend", html);
}

// Helpers Go calls with one crossing where doing the same from Go would
// take one per node, per network chunk or per timer. Go computes every
// change of the answer, chooses every request and reads every byte.
const BROWSER = {
  // patchAnswer applies one frame to the answer: the newly settled HTML
  // before the live tail, then the tail's patch (render.TailPatch: follow
  // path, keep the first `keep` child nodes, extend the last one's text,
  // insert html at the end; keep -1: the tail did not change), or, on the
  // final frame, the tail goes — or, with unwrap, its nodes stay in place
  // as settled blocks and only their wrapper goes (Go found the settled
  // HTML equal to the tail's).
  patchAnswer(tail, settled, path, keep, text, html, final, unwrap) {
    if (settled) tail.insertAdjacentHTML("beforebegin", settled);
    if (final && !unwrap) {
      tail.remove();
      return;
    }
    if (keep >= 0) patchTail(tail, path, keep, text, html);
    if (final) tail.replaceWith(...tail.childNodes);
  },

  // frames returns schedule(): one call of run (Go's frame) at the next
  // animation frame, however often it is asked for before. A hidden page
  // gets no animation frames, so a timer stands in (at once when hidden,
  // after 250 ms if the page is hidden after the request).
  frames(run) {
    let pending = false;
    let timer = 0;
    const fire = () => {
      if (!pending) return;
      pending = false;
      clearTimeout(timer);
      run();
    };
    return () => {
      if (pending) return;
      pending = true;
      if (document.hidden) {
        timer = setTimeout(fire, 50);
        return;
      }
      requestAnimationFrame(fire);
      timer = setTimeout(fire, 250);
    };
  },

  // follow keeps the newest text of a streaming answer in view while the
  // reader is at the bottom (within 8 px) of the element, and never moves
  // a reader who scrolled up: they get the "jump to latest" button
  // instead. It scrolls from a ResizeObserver, after the browser's own
  // layout of a frame (reading scrollHeight right after the frame's DOM
  // writes would force a second layout), and handles the scroll events
  // itself: following costs no entry into Go. start() begins an answer;
  // end(grew) is the final frame (it scrolls at once, so the answer is in
  // view when ask() resolves); grew() is for browsers without
  // ResizeObserver, after every frame that added something.
  follow(el, jump, parts) {
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
    el.addEventListener("scroll", () => {
      following = el.scrollHeight - el.scrollTop - el.clientHeight <= 8;
      if (following) showJump(false);
    }, { passive: true });
    jump?.addEventListener("click", () => {
      following = true;
      toEnd();
      showJump(false);
    });
    let observes = false;
    if (typeof ResizeObserver === "function") {
      const ro = new ResizeObserver(grew);
      for (const p of parts) if (p) ro.observe(p);
      observes = true;
    }
    return {
      observes,
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
    };
  },

  // readBody reads a fetch body into a new Inbox, asking for a frame when
  // bytes arrive, and calls end(error) (end(null) for a clean end) after
  // the last chunk. Go takes the bytes at its next frame: one entry into
  // Go per frame instead of one per network chunk.
  readBody(body, schedule, end) {
    const inbox = new Inbox(schedule);
    if (!body) {
      queueMicrotask(() => end(null));
      return inbox;
    }
    const reader = body.getReader();
    (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || inbox.closed) return;
        inbox.push(value);
      }
    })().then(() => end(null), (err) => end(err ?? new Error("read failed")));
    return inbox;
  },

  // wsInbox puts every message of a WebSocket (one SSE event each) into a
  // new Inbox, as bytes.
  wsInbox(ws, schedule) {
    const inbox = new Inbox(schedule);
    const utf8 = new TextEncoder();
    ws.onmessage = (ev) => {
      if (inbox.closed) return;
      inbox.push(typeof ev.data === "string" ? utf8.encode(ev.data) : new Uint8Array(ev.data));
    };
    return inbox;
  },
};

// Inbox holds a connection's bytes until Go's next frame takes them, with
// each chunk's length and arrival time (for the metrics: time to first
// byte, gaps between tokens). take() hands everything over as one
// Uint8Array, little-endian: the performance.now() of the take (float64),
// the number of chunks (uint32), then per chunk its length (uint32) and
// arrival time (float64), then the bytes (wasm/inbox.go reads it).
class Inbox {
  #schedule;
  #bytes = new Uint8Array(4096);
  #used = 0;
  #chunks = [];
  closed = false;

  constructor(schedule) {
    this.#schedule = schedule;
  }

  push(chunk) {
    if (this.#used + chunk.length > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(2 * this.#bytes.length, this.#used + chunk.length));
      grown.set(this.#bytes.subarray(0, this.#used));
      this.#bytes = grown;
    }
    this.#bytes.set(chunk, this.#used);
    this.#used += chunk.length;
    this.#chunks.push(chunk.length, performance.now());
    this.#schedule();
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
    this.closed = true;
    this.#used = 0;
    this.#chunks.length = 0;
  }
}

// boot loads wasm_exec.js (from the toolchain that built the .wasm) and the
// widget once per page, and resolves to the Go side's API object.
function boot() {
  booting ??= (async () => {
    await import(WASM_EXEC.href);
    const go = new globalThis.Go();
    const api = new Promise((resolve) => {
      // Go calls this once with its API and gets the DOM helpers back.
      globalThis.__trickleBoot = (goApi) => {
        resolve(goApi);
        return BROWSER;
      };
    });
    let result;
    try {
      result = await WebAssembly.instantiateStreaming(fetch(WASM), go.importObject);
    } catch (err) {
      // A server that sends the .wasm without Content-Type application/wasm
      // breaks instantiateStreaming; fall back to bytes.
      const response = await fetch(WASM);
      if (!response.ok) throw new Error(`trickle: loading ${WASM}: HTTP ${response.status}`);
      result = await WebAssembly.instantiate(await response.arrayBuffer(), go.importObject);
    }
    go.run(result.instance).then(() => {
      booting = null;
    });
    const ready = await api;
    delete globalThis.__trickleBoot;
    return ready;
  })();
  return booting;
}

function addStylesheet() {
  if (document.querySelector("link[data-trickle-css]")) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = CSS.href;
  link.dataset.trickleCss = "";
  // First in <head>, so the page's own rules win at equal specificity.
  document.head.prepend(link);
}

// The element's parts, in the light DOM so the page's CSS applies. The
// announcer and status regions must be in the document, empty, before
// anything is announced: screen readers ignore live regions that arrive
// together with their content.
const PARTS = `<div data-trickle="thinking" hidden><details><summary>Thinking</summary><div data-trickle="thinking-text"></div></details></div><div data-trickle="content"></div><div data-trickle="tools" hidden></div><div data-trickle="notice" hidden><span data-trickle="notice-text"></span> <button type="button" data-trickle="retry" hidden>Retry</button></div><button type="button" data-trickle="jump" hidden>Jump to latest</button><dl data-trickle="metrics" hidden></dl><div data-trickle="status" role="status"></div><div data-trickle="announcer" role="log" aria-live="polite" aria-relevant="additions"></div>`;

function ensureParts(el) {
  if (el.querySelector(':scope > [data-trickle="content"]')) return;
  el.innerHTML = PARTS;
}

class TrickleAnswer extends HTMLElement {
  #handle = null;
  #headers = {};

  connectedCallback() {
    ensureParts(this);
    this.#attach().catch((err) => {
      this.dispatchEvent(new CustomEvent("trickle-error", {
        bubbles: true,
        detail: { status: "failed", message: `Trickle failed to load: ${err?.message ?? err}` },
      }));
    });
  }

  disconnectedCallback() {
    // Moving the element reconnects it in the same task; only a real
    // removal stops the answer.
    queueMicrotask(() => {
      if (!this.isConnected) this.#handle?.stop();
    });
  }

  async #attach() {
    const api = await boot();
    if (!this.#handle) {
      ensureParts(this);
      this.#handle = api.attach(this);
    }
    return this.#handle;
  }

  /** Starts an answer to a prompt (string) or a request body (object);
   *  resolves with the final status. */
  ask(promptOrBody) {
    return this.#attach().then((h) => h.ask(promptOrBody));
  }

  /** Streams the response of an arbitrary fetch(url, init); resolves with
   *  the final status. */
  stream(url, init = {}) {
    return this.#attach().then((h) => h.stream(String(url), init));
  }

  /** Stops the answer: aborts the request and asks the relay to cancel. */
  stop() {
    this.#handle?.stop();
  }

  /** Asks again with the last request. */
  retry() {
    return this.#attach().then((h) => h.retry());
  }

  get status() {
    return this.#handle ? this.#handle.status() : "idle";
  }

  get text() {
    return this.#handle ? this.#handle.text() : "";
  }

  /** The relay's id for the current answer's stream ("" when the endpoint
   *  is not a Trickle relay). */
  get streamId() {
    return this.#handle ? this.#handle.streamId() : "";
  }

  get metrics() {
    return this.#handle ? JSON.parse(this.#handle.metrics()) : null;
  }

  /** Extra request headers (e.g. Authorization) sent with every ask. */
  get headers() {
    return this.#headers;
  }

  set headers(value) {
    this.#headers = { ...(value ?? {}) };
  }
}

addStylesheet();
if (!customElements.get("trickle-answer")) {
  customElements.define("trickle-answer", TrickleAnswer);
}

/** Resolves once the WebAssembly side has started. */
export function ready() {
  return boot().then(() => undefined);
}

export { TrickleAnswer };
