// The early view of an element's answer (early.js: the request the page
// sent before Go was ready): the answer's plain text, in a node after the
// tail, hidden from screen readers (Go announces the answer from its start
// once it renders it), until Go's frames show the answer (answer.js).

export class EarlyView {
  #a; // the element's Answer
  #of = null; // the early answer shown
  #pending = "";
  #firstAt = 0; // when the bytes of its first text arrived (epoch ms)
  node = null; // the view's node, once it has text

  constructor(answer) {
    this.#a = answer;
  }

  // shown says whether an early answer is shown (or about to be).
  get shown() {
    return this.#of !== null;
  }

  // length is how much text the view shows.
  get length() {
    return this.node?.textContent.length ?? 0;
  }

  // start begins the view of a new early answer, and tells the page the
  // answer started (trickle-start), after ask() returns, as Go would: Go,
  // which is not there yet, will not tell it again.
  start(early) {
    const a = this.#a;
    this.end();
    this.#of = early;
    if (a.follows) a.follower.start();
    queueMicrotask(() => {
      if (this.#of !== early || early.sealed || early.started) return;
      early.started = true;
      // What Go's first frame will say, said now: a listener reading
      // el.status hears what the event does.
      a.state = "streaming";
      a.el.setAttribute("data-status", "streaming");
      a.dispatch("trickle-start", { status: "streaming" });
    });
  }

  // text shows more of the early answer's text (its bytes arrived at epoch
  // ms at), in the next animation frame, as Go's frames are. The frame
  // that paints the answer's first text tells the page
  // (trickle-first-token) at once, not when Go takes over seconds later on
  // a slow network: a page that hides its spinner then never shows it over
  // the text. Its times are the metrics' (Go's): from the ask() to when
  // those bytes arrived. The early view does not read thinking, so after
  // thinking ttft_ms is the answer's first token, and Go's metrics count
  // the thinking.
  text(early, t, at) {
    const a = this.#a;
    if (early !== this.#of || a.retired) return;
    if (!this.#firstAt) this.#firstAt = at;
    if (!this.#pending) {
      requestAnimationFrame(() => {
        if (this.#of !== early) return;
        if (!this.node) {
          this.node = document.createElement("div");
          this.node.dataset.trickle = "early";
          this.node.setAttribute("aria-hidden", "true");
          this.node.append("");
          a.content.append(this.node);
          a.content.setAttribute("data-trickle-early", "");
        }
        this.node.firstChild.appendData(this.#pending);
        this.#pending = "";
        if (!a.follower.observes) a.follower.grew();
        if (!early.firstToken && !early.sealed) {
          early.firstToken = true;
          const ms = Math.round((this.#firstAt - early.at) * 100) / 100;
          early.firstTokenMs = ms;
          a.dispatch("trickle-first-token", { ttft_ms: ms, ttfat_ms: ms });
        }
      });
    }
    this.#pending += t;
  }

  // end takes the view away: Go shows the answer now.
  end() {
    this.#of = null;
    this.#pending = "";
    this.#firstAt = 0;
    this.node?.remove();
    this.node = null;
    this.#a.content.removeAttribute("data-trickle-early");
  }
}
