// What a screen reader hears of an element's answer, written the moment
// a frame arrives, not at the next animation frame: the announcer log's
// sentences (and their units read aloud, speech.js) and the spoken status
// (answer.js owns the regions; notify.js says them through ariaNotify
// where the browser has it).

import { UPDATE_RESET, UPDATE_SAY, UPDATE_SPEAK, UPDATE_STATUS } from "./contract.js";
import { speakerOf } from "./speech.js";

// ANNOUNCER_KEEP is how many of the announcer's nodes (one a sentence or
// unit Go confirmed) stay in the log. A screen reader takes a live
// region's additions as they come and queues them: the nodes it was given
// are not read again (aria-relevant="additions"), so what was said is
// trimmed from the front and the visually hidden log does not grow with
// the answer. The last ones stay for a reader that reads the log after
// the event, or reviews it.
export const ANNOUNCER_KEEP = 32;

// trimLog takes the oldest nodes out of the announcer, one at a time (a
// removal, never a rewrite: nothing is said twice), down to
// ANNOUNCER_KEEP.
export function trimLog(log) {
  for (let n = log.childNodes.length - ANNOUNCER_KEEP; n > 0; n--) log.firstChild.remove();
}

/**
 * Voice writes one Answer's announcements and status into its live
 * regions. A status is heard at least the host's minGap (a11y.MinGap, from
 * Go's ready message) after the sentence before it, by this page's clock:
 * Go spaces them so, but the sentence may reach the page later than Go
 * decided it (frames are posted paced to the page's frames, a worker under
 * load), and a status written too soon after it cuts the sentence short in
 * a screen reader.
 */
export class Voice {
  #a; // the Answer
  #saidAt = -Infinity; // when the last sentence was written (performance.now())
  #pending = undefined; // a status waiting for the host's minGap after it
  #timer = 0;

  constructor(answer) {
    this.#a = answer;
  }

  // hear writes update u's announcements and status (a reset empties the
  // regions first, and drops what was queued to be read aloud).
  hear(u) {
    const a = this.#a;
    const { [UPDATE_RESET]: reset, [UPDATE_SAY]: say, [UPDATE_STATUS]: status } = u;
    if (reset) {
      this.stop();
      this.#saidAt = -Infinity;
      a.srStatus.textContent = "";
      a.announcer.textContent = "";
      speakerOf(a.el).reset(); // a new answer: what was queued goes
    }
    if (say) {
      const last = a.announcer.lastChild;
      a.announcer.insertAdjacentHTML("beforeend", say);
      // Each new paragraph is one announcement, as the log reads them.
      if (a.notify) for (let n = last ? last.nextSibling : a.announcer.firstChild; n; n = n.nextSibling) a.notify(n.textContent);
      trimLog(a.announcer);
      // Read aloud: the units the announcements join, one an utterance.
      speakerOf(a.el).said(u[UPDATE_SPEAK] ?? []);
      this.#saidAt = performance.now();
      if (this.#pending !== undefined) this.#sayStatus();
    }
    if (status !== undefined) {
      this.#pending = status;
      this.#sayStatus();
    }
  }

  // stop drops the status still waiting (the regions are another's now,
  // or a new answer begins).
  stop() {
    clearTimeout(this.#timer);
    this.#pending = undefined;
  }

  // #sayStatus writes the pending status once minGap ms have passed since
  // the last sentence, or waits for it.
  #sayStatus() {
    const a = this.#a;
    clearTimeout(this.#timer);
    const wait = this.#saidAt + a.host.minGap - performance.now();
    if (wait > 0) {
      this.#timer = setTimeout(() => this.#sayStatus(), wait);
      return;
    }
    a.srStatus.textContent = this.#pending;
    if (a.notify && this.#pending) a.notify(this.#pending);
    this.#pending = undefined;
  }
}
