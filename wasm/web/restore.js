// A stored thread shown (chat.messages): its newest turns at once, the
// older ones in idle-time batches that the page's own frames size. No
// task grows with the thread (bench/browser -measure thread).

// FIRST_BYTES is about how much markdown a restored thread shows at once,
// from its end: more than a thread's view holds. The older turns then
// come in batches, each in an idle moment once the one before is on
// screen: a batch brings as much markdown as the last batch's frames
// say fits in BATCH_MS of the page's time (measured, from BATCH_BYTES at
// first and never more than twice the last batch, at least one turn), and
// its turns are made for at most SLICE_MS of one task. The page applies
// a batch's answers in one animation frame (host.js).
const FIRST_BYTES = 6000;
const BATCH_BYTES = 6000;
const BATCH_MS = 12;
const SLICE_MS = 8;

// BLOCK_TURNS is how many older turns of a restored thread share a block
// (Thread.block): a batch lays out and paints its block and the thread's
// few dozen blocks, not every turn before it.
const BLOCK_TURNS = 32;

// shownAll resolves once each of answers shows its message (its status is
// no longer idle), looked at after each animation frame's rendering, or
// after 1 s whatever they show (an answer that could not start stays
// idle). It resolves with the longest of those frames, in ms, from its
// start to the end of its rendering: what showing them cost the page.
function shownAll(answers) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    let worst = 0;
    let start = 0;
    // A message posted in an animation frame callback comes once that
    // frame is rendered.
    const ch = new MessageChannel();
    const frame = (t) => {
      start = Math.min(t, performance.now());
      ch.port2.postMessage(0);
    };
    ch.port1.onmessage = () => {
      const now = performance.now();
      worst = Math.max(worst, now - start);
      if (answers.every((a) => a.status !== "idle") || now - t0 > 1000) {
        ch.port1.close();
        resolve(worst);
      } else requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}

// idle resolves in the page's next idle moment (within 100 ms), with
// that moment's deadline (or null).
function idle() {
  return new Promise((resolve) => {
    if (typeof requestIdleCallback === "function") requestIdleCallback(resolve, { timeout: 100 });
    else setTimeout(() => resolve(null), 0);
  });
}

/**
 * restore puts the turns of list (history.js turnsOf) on the page: the
 * newest, more than fill the thread's view, at once, the thread kept at
 * its end; the older ones after them, from the first on, each batch in
 * an idle moment once the batch before is on screen, into blocks put just
 * before the newest turns: what a batch moves down the page is those few
 * turns, not the thread. Every turn is numbered as it will be from the
 * start (Thread.pending). It returns whether older turns are still to
 * come.
 *
 * - size(t) is turn t's weight in bytes of markdown;
 * - add(t, before, answers, into) makes turn t before the turn before
 *   (null: at the end of into, or of the thread), pushes its answer (if
 *   it is one) onto answers, and returns the turn;
 * - thread is the chat's Thread, follower its follow.js follower;
 * - current() is false once the thread was set again, edited or
 *   regenerated: the restore then stops where it is;
 * - done() is called once every turn is on the page (if still current).
 */
export function restore(list, { size, add, thread, follower, current, done }) {
  let end = list.length; // list[end:] are on the page
  let tail = null; // the first of them
  let last = [];
  for (let bytes = 0; end > 0 && (tail === null || bytes < FIRST_BYTES); ) {
    const t = list[--end];
    bytes += size(t);
    tail = add(t, tail, last);
  }
  let next = 0; // list[:next] are on the page too
  thread.pending = end;
  thread.gap = tail;
  // The chat's follower keeps the thread at its end while the turns
  // come (a reader who scrolls away is left there).
  follower.start();
  thread.refresh();
  const rest = next < end;
  let block = null; // the block the older turns go into now
  let budget = BATCH_BYTES; // the next batch's markdown
  let brought = 0; // the last batch's
  const more = async () => {
    while (next < end && current()) {
      const cost = await shownAll(last);
      if (brought > 0) budget = Math.min(2 * brought, (brought * BATCH_MS) / Math.max(cost, 1));
      const deadline = await idle();
      if (!current()) return;
      const made = [];
      last = [];
      const from = next + 1;
      const t0 = performance.now();
      const room = () => performance.now() - t0 < SLICE_MS && (!deadline || deadline.didTimeout || deadline.timeRemaining() > 1);
      for (brought = 0; next < end && (made.length === 0 || (brought < budget && room())); ) {
        if (!block || block.childElementCount >= BLOCK_TURNS) block = thread.block(tail);
        const t = list[next++];
        brought += size(t);
        made.push(add(t, null, last, block));
      }
      thread.pending = end - next;
      thread.settle(made, from);
    }
    if (current()) done();
    await shownAll(last);
    if (current()) follower.end(false);
  };
  more().catch((err) => console.error(err));
  return rest;
}
