// Frame merging: a backlog of Go's frames becomes one update per element,
// so the DOM changes once per element per animation frame however many
// frames arrived. Pure functions over the frame messages' updates
// (wasm/protocol.Update); test/merge.test.js holds their tests.

// mergeUpdates flattens frames (each a list of updates) into the updates
// to apply, in order, folding each element's update into its previous one
// when that one only streamed (no end, events, settling or removal): the
// DOM then changes once per element per animation frame however many
// frames arrived.
export function mergeUpdates(frames) {
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
export function mergeUpdate(a, b) {
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
export function mergePatch(a, b) {
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
