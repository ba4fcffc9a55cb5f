// The early answer: on a first visit the widget's .wasm is still on its way
// when the page asks, so the page sends the request itself (request.js:
// the same bytes Go would send), keeps every byte of the response for Go,
// and shows the answer's plain text meanwhile (reader.js). When Go is
// ready it adopts the connection in progress: it gets every byte from the
// first (with when each arrived) and the rest of the body as a transferred
// stream, renders the whole answer at once and announces it from the
// start. docs/notes/early-view.md says why.

import { earlyReader } from "./reader.js";
import { earlyRequest } from "./request.js";

const epochNow = () => performance.timeOrigin + performance.now();

// streamURL is where stream id of response res lives, as Go's
// widget.StreamURLs finds it: the relay's X-Trickle-Stream-URL resolved
// against the request's URL, else /v1/streams/ID under the endpoint's API
// prefix (what comes before its last /v1/).
export function streamURL(res, id) {
  const ref = res.headers.get("X-Trickle-Stream-URL");
  const at = new URL(res.url);
  at.search = at.hash = "";
  if (ref && !/^[a-z][a-z0-9+.-]*:|^\/\//i.test(ref)) return new URL(ref, at).href;
  const i = at.pathname.lastIndexOf("/v1/");
  return new URL(`${i >= 0 ? at.pathname.slice(0, i) : ""}/v1/streams/${id}`, at).href;
}

// The response headers Go reads (stream.ResponseOf), handed over with the
// body.
const HEAD = ["content-type", "content-length", "content-encoding", "x-vercel-ai-ui-message-stream"];

// The handover needs a body that can be released while a read waits and
// then be transferred to Go's thread: without both (Safari), Go sends the
// request itself, as it always did.
const canHandOver = (() => {
  try {
    const rs = new ReadableStream();
    const r = rs.getReader();
    r.read().catch(() => {});
    r.releaseLock();
    structuredClone(rs, { transfer: [rs] });
    return true;
  } catch {
    return false;
  }
})();

// startEarly starts the early answer of an ask command (before Go is
// ready), or returns null when Go must build the request itself. onText
// gets each piece of plain text as it is read, with the epoch ms its
// bytes arrived at.
export function startEarly(cmd, onText) {
  if (!canHandOver) return null;
  const req = earlyRequest(cmd);
  return req ? new EarlyAnswer(req, cmd.dialect, onText, cmd.at) : null;
}

// cancelHeaders are a Stop's DELETE's headers, as Go's (widget's
// cancelHeaders): the request's own (authorization) without those of its
// body, its resume and its answer.
export function cancelHeaders(headers) {
  const out = headers.filter(([k]) => !/^(content-type|accept|last-event-id|x-trickle-resume)$/i.test(k));
  out.push(["Accept", "application/json"]);
  return out;
}

class EarlyAnswer {
  // at is when the page called ask() (epoch ms), what the metrics count
  // from. The page tells of the answer's start and first token from the
  // early view (answer.js) while Go is not there: started and firstToken
  // say it did, and go to Go with the handover so that Go does not tell
  // them again. Once handed over (sealed), the early view tells nothing
  // more: Go does.
  at;
  started = false;
  firstToken = false;
  firstTokenMs = 0; // the ttft_ms told
  sealed = false;
  #ctl = new AbortController();
  #chunks = []; // [bytes, epoch ms of arrival]: everything read, for Go
  #res = null;
  #reader = null;
  #end = ""; // "done", or why it failed; "" while it streams
  #failed = false; // the fetch itself failed (no response)
  #stopped = false;
  #handing = false;
  #responded; // settles once the fetch has
  #loop; // settles once reading stopped
  #headers; // the request's headers a Stop's DELETE carries too

  constructor(req, dialect, onText, at) {
    this.at = at;
    this.#headers = cancelHeaders(req.init.headers);
    const text = earlyReader(dialect);
    let responded;
    this.#responded = new Promise((r) => (responded = r));
    this.#loop = (async () => {
      try {
        this.#res = await fetch(req.url, { ...req.init, signal: this.#ctl.signal });
      } catch (err) {
        this.#failed = true;
        this.#end = String(err?.message ?? err) || "fetch failed";
        return;
      } finally {
        responded();
      }
      if (!this.#res.body || this.#handing) return;
      text.head((h) => this.#res.headers.get(h));
      this.#reader = this.#res.body.getReader();
      for (;;) {
        let r;
        try {
          r = await this.#reader.read();
        } catch (err) {
          // Released for the handover (nothing was read), or aborted.
          if (!this.#handing) this.#end = String(err?.message ?? err) || "read failed";
          return;
        }
        if (r.done) {
          this.#end = "done";
          return;
        }
        const arrived = epochNow();
        this.#chunks.push([r.value, arrived]);
        if (this.#res.ok && !this.#stopped) {
          const t = text.write(r.value);
          if (t) onText(t, arrived);
        }
        if (this.#handing) return;
      }
    })();
  }

  // stop ends the early answer: the page stopped it, asked again or let
  // the element go before Go was ready. The request is aborted and the
  // relay asked to stop generating (what Go's stop does); the bytes read so
  // far still go to Go, which ends the answer as the command after the ask
  // says.
  stop() {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#ctl.abort();
    const id = this.#res?.headers.get("X-Trickle-Stream") ?? "";
    // The relay's ids are plain; another would be escaped differently from
    // Go's url.PathEscape, and Go's own stop sends its DELETE anyway.
    if (/^[\w.:-]+$/.test(id)) {
      fetch(streamURL(this.#res, id), { method: "DELETE", keepalive: true, headers: this.#headers }).catch(() => {});
    }
  }

  // handover stops reading here and returns what Go adopts, with the body
  // to transfer: the response's status and stream id, every chunk read so
  // far with its arrival time, how it ended ("" while it streams), and the
  // rest of the body (null once it ended).
  async handover() {
    await this.#responded;
    this.#handing = true;
    try {
      this.#reader?.releaseLock(); // a read in wait rejects, and nothing is lost
    } catch {
      // Not locked: reading never started or already ended.
    }
    await this.#loop;
    this.sealed = true; // from here Go tells of the answer
    const res = this.#res;
    const body = res?.body && this.#end === "" ? res.body : null;
    const value = {
      ok: res ? res.ok : false,
      status: res ? res.status : 0,
      stream: res?.headers.get("X-Trickle-Stream") ?? "",
      streamURL: res?.headers.get("X-Trickle-Stream-URL") ?? "",
      // What Go's widget.ResponseHead reads (lower-case names).
      type: res?.type ?? "",
      headers: Object.fromEntries(HEAD.map((h) => [h, res?.headers.get(h) ?? null])),
      chunks: this.#chunks,
      end: this.#end,
      failed: this.#failed,
      stopped: this.#stopped,
      started: this.started,
      firstToken: this.firstToken,
      firstTokenMs: this.firstTokenMs,
      body,
    };
    return { value, transfer: body ? [body] : [] };
  }
}
