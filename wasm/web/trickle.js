// Trickle's loader: defines <trickle-answer> and forwards every call to the
// Go program compiled to WebAssembly. All behaviour lives in Go (wasm/); this
// file only boots it, builds the element's empty parts so the live regions
// exist before anything is said into them, and forwards calls.
//
// The build (wasm/internal/build) replaces the quoted placeholders below
// with content-hashed file names.

const WASM = new URL("__TRICKLE_WASM__", import.meta.url);
const WASM_EXEC = new URL("__TRICKLE_WASM_EXEC__", import.meta.url);
const CSS = new URL("__TRICKLE_CSS__", import.meta.url);

let booting = null;

// DOM helpers Go calls with one crossing where doing the same from Go would
// take one per node. They decide nothing: Go computes every change.
const DOM = {
  // patchAnswer applies one frame to the answer: the newly settled HTML
  // before the live tail, then the tail's patch (render.TailPatch: follow
  // path, keep the first `keep` child nodes, extend the last one's text,
  // insert html at the end; keep -1: the tail did not change), or, on the
  // final frame, the tail goes.
  patchAnswer(tail, settled, path, keep, text, html, final) {
    if (settled) tail.insertAdjacentHTML("beforebegin", settled);
    if (final) {
      tail.remove();
      return;
    }
    if (keep < 0) return;
    let el = tail;
    if (path) for (const i of path.split(",")) el = el.childNodes[+i];
    if (keep === 0) {
      el.innerHTML = html;
      return;
    }
    while (el.childNodes.length > keep) el.lastChild.remove();
    if (text) el.lastChild.appendData(text);
    if (html) el.insertAdjacentHTML("beforeend", html);
  },
};

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
        return DOM;
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
