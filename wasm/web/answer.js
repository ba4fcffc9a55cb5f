// The per-element Answer state: an element's parts, what Go last said of
// its answer (text, status, stream id, metrics), its calls waiting to
// settle, and how its updates reach the DOM: announcements and status at
// once (early), the rest in the page's animation frame (apply).

import {
  COMMAND_ATTRIBUTES,
  END_DETAIL,
  END_MESSAGE,
  END_NOTICE,
  END_RETRY,
  END_ROWS,
  END_STATUS,
  KIND_ATTACH,
  KIND_DETACH,
  KIND_RETRY,
  PATCH_APPEND,
  PATCH_KEEP,
  PATCH_MARKED,
  STR_FAILED,
  STR_UNAVAILABLE,
  UPDATE_END,
  UPDATE_EVENTS,
  UPDATE_GONE,
  UPDATE_METRICS,
  UPDATE_N,
  UPDATE_PATCH,
  UPDATE_RESET,
  UPDATE_RESOLVE,
  UPDATE_SHOWN,
  UPDATE_SOURCES,
  UPDATE_STALLED,
  UPDATE_STATE,
  UPDATE_STREAM_ID,
  UPDATE_TEXT,
  UPDATE_THINKING,
  UPDATE_TOOLS,
} from "./contract.js";
import { follow } from "./follow.js";
import { epochNow } from "./host.js";
import { patchAnswer, patchRemoves } from "./patch.js";
import { frameMayHold, holdSelection, restoreSelection } from "./selection.js";
import { decorate, decorateBlocks } from "./reading.js";
import { notifier, quiet } from "./notify.js";
import { replaced, wordOf } from "./strings.js";
import { EarlyView } from "./early/view.js";
import { Voice } from "./announce.js";

// Every element of the page has its own number, whichever Host serves it:
// Go derives the element's footnote ids from it (trickle-N-fn:1), so two
// answers never share one.
let elementIds = 0;

// The element's parts, in the light DOM so the page's CSS applies. The
// announcer and status regions must be in the document, empty, before
// anything is announced: screen readers ignore live regions that arrive
// together with their content.
const PARTS = `<div data-trickle="thinking" hidden><details><summary>Thinking</summary><div data-trickle="thinking-text"></div></details></div><div data-trickle="content"></div><div data-trickle="tools" hidden></div><div data-trickle="sources" hidden></div><div data-trickle="notice" hidden><span data-trickle="notice-text"></span> <button type="button" data-trickle="retry" hidden>Retry</button></div><button type="button" data-trickle="jump" hidden>Jump to latest</button><dl data-trickle="metrics" hidden></dl><div data-trickle="status" aria-hidden="true"></div><div data-trickle="sr-status" role="status"></div><div data-trickle="announcer" role="log" aria-live="polite" aria-relevant="additions"></div>`;

export function ensureParts(el) {
  if (el.querySelector(':scope > [data-trickle="content"]')) return;
  el.innerHTML = PARTS;
}

// withContent is an ended answer's message m (Go's, END_MESSAGE or
// trickle-end's) with its content: Go leaves the content out when it is
// the answer's text as the page has it (text, el.text), so that a long
// answer's end does not carry the whole text again (wasm/protocol.Ending).
export function withContent(m, text) {
  return m.content === undefined ? { role: m.role, content: text, ...m } : m;
}

// UNFOLLOWED stands in for follow()'s follower where the element does not
// follow its answer (in a chat).
const UNFOLLOWED = { observes: true, start() {}, end() {}, grew() {}, stop() {} };

// Answer is an element's state on the page: its parts, what Go last said
// (text, status, stream id, metrics) and its calls waiting to settle.
export class Answer {
  highlighter = null; // the page's (code, lang) => html, or null
  math = null; // the page's (tex, {display}) => MathML string or Node, or null
  diagram = null; // the page's (lang, source) => SVG string or Node (or a promise), or null
  diagramLanguages = ["mermaid"];
  text = "";
  state = "idle";
  streamId = "";
  metrics = null;
  message = null; // the ended answer as an assistant message (the ending's END_MESSAGE)
  showing = null; // a stored message set to be shown, until Go has shown it
  calls = new Map(); // call number → resolve
  tail = null;

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
    this.sources = q("sources");
    this.notice = q("notice");
    this.noticeText = q("notice-text");
    this.retryBtn = q("retry");
    this.metricsDL = q("metrics");
    this.status = q("status"); // visible: the element's state at once
    this.srStatus = q("sr-status") ?? this.status; // heard: after the last sentence
    this.announcer = q("announcer");
    // The early answer's plain text while Go is not ready (early/view.js).
    this.view = new EarlyView(this);
    // What a screen reader hears, at once (announce.js).
    this.voice = new Voice(this);
    // ariaNotify where the browser has it: the regions become a silent
    // record (notify.js).
    this.notify = notifier(el);
    if (this.notify) quiet(this.announcer, this.srStatus === this.status ? null : this.srStatus);
    // An answer in a chat leaves following to the chat (follows): it
    // needs no observer of its own, one fewer for each turn of a thread.
    this.follower = this.follows ? follow(el, q("jump"), [this.content, this.thinking, this.tools, this.sources]) : UNFOLLOWED;
    this.onRetry = () => h.send({ t: KIND_RETRY, id: this.id, n: 0, at: epochNow() });
    this.retryBtn?.addEventListener("click", this.onRetry);
    h.els.set(this.id, this);
    h.send({ t: KIND_ATTACH, id: this.id });
  }

  // follows says whether the element follows its own answer: not in a
  // chat, whose thread scrolls and follows for it (the element does not
  // scroll there), and where reading the element's geometry at the end of
  // each answer would lay out the page once per turn of a restored thread.
  get follows() {
    return !this.el.parentElement?.closest("trickle-chat");
  }

  // retire hands the element over to another Host (its next answer needs
  // the highlighting build): this Go side lets it go, and whatever it still
  // sends for it only settles its calls; the page's DOM is the new
  // Answer's.
  retire() {
    this.retired = true;
    this.voice.stop(); // the status region is the new Answer's
    this.follower.stop();
    this.retryBtn?.removeEventListener("click", this.onRetry);
    this.host.send({ t: KIND_DETACH, id: this.id });
  }

  // call sends an ask/stream/retry and returns the promise of its final
  // status.
  call(cmd, init) {
    this.showing = null;
    const n = this.host.newCall();
    const p = new Promise((resolve) => this.calls.set(n, resolve));
    if (this.host.failure) {
      this.unavailable(n, this.host.failure);
      return p;
    }
    this.host.send({ ...cmd, id: this.id, n, at: epochNow() }, init);
    return p;
  }

  // reject fails call n before it started an answer: the page's mistake
  // or a widget that could not load, which no reader is shown.
  reject(n, message) {
    console.error(message);
    this.dispatch("trickle-error", { status: "failed", message, reason: "call", detail: message });
    const resolve = this.calls.get(n);
    this.calls.delete(n);
    resolve?.("failed");
  }

  // unavailable fails call n because the widget could not start on this
  // page (a CSP, the .wasm not found, no worker nor main thread to run
  // on): the reader sees one sentence in the notice and hears it, the
  // developer gets why in trickle-error's detail and on the console.
  unavailable(n, detail) {
    console.error(detail);
    const sentence = wordOf(this.el, STR_UNAVAILABLE);
    this.state = "failed";
    this.el.setAttribute("data-status", "failed");
    this.content.removeAttribute("aria-busy");
    this.view.end();
    this.noticeText.textContent = sentence;
    this.notice.setAttribute("data-kind", "failed");
    this.notice.hidden = false;
    this.retryBtn.hidden = true;
    const failed = wordOf(this.el, STR_FAILED);
    if (this.status !== this.srStatus) this.status.textContent = failed;
    this.srStatus.textContent = `${failed} ${sentence}`;
    this.notify?.(this.srStatus.textContent);
    this.dispatch("trickle-error", { status: "failed", message: sentence, reason: "unavailable", detail });
    const resolve = this.calls.get(n);
    this.calls.delete(n);
    resolve?.("failed");
  }

  dispatch(name, detail) {
    this.el.dispatchEvent(new CustomEvent(name, { bubbles: true, composed: true, detail }));
  }

  // request is what Go needs of the page to build the request: every
  // attribute the contract sends Go (COMMAND_ATTRIBUTES: a boolean one by
  // its presence, the others trimmed, an empty one its default; the
  // endpoint resolved against the document), the page's origin, the
  // headers and strings.
  request() {
    const r = {};
    for (const [name, key, bool, dflt] of COMMAND_ATTRIBUTES) {
      r[key] = bool ? this.el.hasAttribute(name) : (this.el.getAttribute(name) ?? "").trim() || dflt;
    }
    r.url = new URL(r.url, document.baseURI).href;
    r.origin = location.origin;
    r.headers = Object.entries(this.el.headers ?? {}).map(([k, v]) => [k, String(v)]);
    r.strings = replaced(this.el);
    return r;
  }

  // early writes a frame's announcements and status into the live regions
  // at once, not at the next animation frame (announce.js).
  early(u) {
    if (!this.retired) this.voice.hear(u);
  }

  // apply applies one update (in the page's animation frame); frame is
  // shared by the answers the same animation frame patches (what the
  // frame learnt of the page's selection).
  apply(u, frame) {
    const {
      [UPDATE_RESET]: reset,
      [UPDATE_PATCH]: p,
      [UPDATE_THINKING]: thinking,
      [UPDATE_TOOLS]: tools,
      [UPDATE_SOURCES]: sources,
      [UPDATE_SHOWN]: shown,
      [UPDATE_STALLED]: stalled,
      [UPDATE_END]: end,
      [UPDATE_EVENTS]: events,
      [UPDATE_N]: n,
      [UPDATE_RESOLVE]: resolved,
    } = u;
    if (this.retired) {
      if (resolved) this.calls.get(n)?.(resolved);
      return;
    }
    if (reset) {
      this.message = this.showing;
      this.content.innerHTML = '<div data-trickle="tail"></div>';
      this.tail = this.content.firstElementChild;
      // The early view stays until Go's frames show text (below).
      if (this.view.node) this.content.append(this.view.node);
      this.thinkingText.textContent = "";
      this.thinking.hidden = true;
      this.tools.innerHTML = "";
      this.tools.hidden = true;
      this.sources.innerHTML = "";
      this.sources.hidden = true;
      this.notice.hidden = true;
      this.notice.removeAttribute("data-kind");
      this.retryBtn.hidden = true;
      this.metricsDL.hidden = true;
      // Where the reader is holds: the early view already began following.
      if (!this.view.shown && this.follows) this.follower.start();
      // Busy is said on the content only, never on the element: the
      // element holds the live regions (sr-status, announcer), and NVDA
      // holds back every change inside a busy region and does not speak
      // them when busy clears (nvaccess/nvda#20871), so the sentences
      // would never be heard. The content holds no live region.
      this.content.setAttribute("aria-busy", "true");
      this.el.setAttribute("data-status", "streaming");
      this.text = "";
    }
    let grew = false;
    if (p) {
      // Only a patch that takes nodes away can lose the reader's
      // selection; asking the browser where the selection is brings its
      // style and layout up to date, so a patch that only adds does not.
      // A tail made in this same update holds no selection yet.
      const held = !reset && patchRemoves(this.tail, p) && frameMayHold(frame, this.tail) ? holdSelection(this.tail) : null;
      const settled = patchAnswer(this.tail, p);
      // Newly settled blocks get their toolbars (and the page's
      // highlighter) in this same task, before the browser paints them.
      if (settled.length) decorateBlocks(this, settled);
      // The reader's selection in the tail outlives the frame: the tail's
      // text now starts at the first block that settled, or in the tail.
      if (held) restoreSelection(held, settled[0] ?? (this.tail.isConnected ? this.tail : null));
      grew = !!p[PATCH_APPEND] || p[PATCH_KEEP] >= 0;
      // An answer that cites comes again, whole, with its markers: a
      // citation may name a passage settled long ago.
      const marked = p[PATCH_MARKED];
      if (marked !== undefined) {
        this.content.innerHTML = marked;
        decorate(this, null, null);
        grew = true;
      }
    }
    // Go's frames take over from the early view once they show text (Go
    // has every byte the early view read, so at least its text), or at the
    // answer's end.
    if (this.view.shown && (end || (p && this.content.textContent.length > this.view.length))) this.view.end();
    if (thinking) {
      this.thinking.hidden = false;
      this.thinkingText.insertAdjacentText("beforeend", thinking);
      grew = true;
    }
    if (tools !== undefined) {
      this.tools.innerHTML = tools;
      this.tools.hidden = tools === "";
      grew = true;
    }
    if (sources !== undefined) {
      this.sources.innerHTML = sources;
      this.sources.hidden = sources === "";
      grew = true;
    }
    // The visible status line shows the element's state in the same frame
    // as the answer; what a screen reader hears (sr-status, early) keeps
    // its spoken order and says the end only after the last sentence.
    if (reset && this.status !== this.srStatus) this.status.textContent = "";
    if (shown !== undefined && this.status !== this.srStatus) this.status.textContent = shown;
    if (u[UPDATE_TEXT]) this.text += u[UPDATE_TEXT];
    if (u[UPDATE_STATE]) this.state = u[UPDATE_STATE];
    if (u[UPDATE_STREAM_ID] !== undefined) this.streamId = u[UPDATE_STREAM_ID];
    if (u[UPDATE_METRICS]) this.metrics = u[UPDATE_METRICS];
    if (stalled !== undefined) {
      // On the element for the page; on the tail for the stylesheet (a
      // change there restyles the tail, not the whole answer).
      this.el.toggleAttribute("data-trickle-stalled", stalled);
      if (this.tail?.isConnected) this.tail.toggleAttribute("data-trickle-stalled", stalled);
    }
    if (end) {
      const { [END_STATUS]: status, [END_NOTICE]: notice, [END_DETAIL]: detail, [END_ROWS]: rows, [END_MESSAGE]: message } = end;
      if (message) this.message = withContent(message, this.text);
      this.showing = null;
      this.content.removeAttribute("aria-busy");
      this.el.removeAttribute("data-trickle-stalled");
      this.el.setAttribute("data-status", status);
      // The reader sees a sentence (the notice); the developer gets the
      // technical chain, once.
      if (detail) console.error(`trickle: the answer ended ${status}: ${detail}`);
      if (notice) {
        this.noticeText.textContent = notice;
        this.notice.setAttribute("data-kind", status);
        this.notice.hidden = false;
        this.retryBtn.hidden = !end[END_RETRY];
      }
      if (rows) {
        const terms = rows.flatMap(([k, v]) => {
          const dt = document.createElement("dt");
          const dd = document.createElement("dd");
          dt.textContent = k;
          dd.textContent = v;
          return [dt, dd];
        });
        this.metricsDL.replaceChildren(...terms);
        this.metricsDL.hidden = false;
      }
      if (this.follows) this.follower.end(grew);
    } else if (grew && !this.follower.observes && this.follows) {
      this.follower.grew();
    }
    if (events) {
      for (const [name, detail] of events) {
        // A stopped answer's cost comes after its end (the relay's answer
        // to the Stop): the message takes it before the page hears of it.
        if (name === "trickle-usage") this.message = detail.message;
        if (name === "trickle-end" && detail.message) detail.message = withContent(detail.message, this.text);
        this.dispatch(name, detail);
      }
    }
    if (resolved) {
      const resolve = this.calls.get(n);
      this.calls.delete(n);
      resolve?.(resolved);
    }
    if (u[UPDATE_GONE]) {
      this.follower.stop();
      this.retryBtn?.removeEventListener("click", this.onRetry);
    }
  }
}
