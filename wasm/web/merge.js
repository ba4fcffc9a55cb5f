// Frame merging: a backlog of Go's frames becomes one update per element,
// so the DOM changes once per element per animation frame however many
// frames arrived. Pure functions over the frame messages' updates
// (wasm/protocol.Update); test/merge.test.js holds their tests.
//
// An update's keys are the contract's (contract.js: UPDATE_*, PATCH_*),
// never spelled here.

import {
  PATCH_APPEND,
  PATCH_FINAL,
  PATCH_HTML,
  PATCH_KEEP,
  PATCH_PATH,
  PATCH_TEXT,
  PATCH_TRIM,
  UPDATE_ARRIVED,
  UPDATE_END,
  UPDATE_EVENTS,
  UPDATE_GONE,
  UPDATE_ID,
  UPDATE_PATCH,
  UPDATE_RESET,
  UPDATE_RESOLVE,
  UPDATE_TEXT,
  UPDATE_THINKING,
} from "./contract.js";

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
      const i = open.get(u[UPDATE_ID]);
      const merged = i === undefined ? null : mergeUpdate(out[i], u);
      if (merged) {
        out[i] = merged;
      } else {
        // Updates of one element stay in order: once one is not merged,
        // the next may only merge into it.
        open.set(u[UPDATE_ID], out.length);
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
  if (a[UPDATE_END] || a[UPDATE_EVENTS] || a[UPDATE_RESOLVE] || a[UPDATE_GONE] || b[UPDATE_RESET]) return null;
  const ap = a[UPDATE_PATCH];
  const bp = b[UPDATE_PATCH];
  let p = ap ?? bp;
  if (ap && bp) {
    p = mergePatch(ap, bp);
    if (!p) return null;
  }
  const m = { ...a, ...b, [UPDATE_RESET]: a[UPDATE_RESET], [UPDATE_PATCH]: p };
  if (!p) delete m[UPDATE_PATCH];
  // What only grows joins; the rest is b's, the newer.
  for (const k of [UPDATE_THINKING, UPDATE_TEXT]) if (a[k] && b[k]) m[k] = a[k] + b[k];
  if (a[UPDATE_ARRIVED] && b[UPDATE_ARRIVED]) m[UPDATE_ARRIVED] = Math.min(a[UPDATE_ARRIVED], b[UPDATE_ARRIVED]);
  return m;
}

// mergePatch folds two answer patches (patchAnswer) into one, or returns
// null. The settled HTML only ever goes before the tail and tail patches
// only change the tail, so the settled parts concatenate; the tail's
// patches fold when the second replaces what the first touched (keep 0 at
// the same node or an ancestor of it), when the first did not touch the
// tail, or when both only trim and append text at the same node (what the
// second trims comes off the first's text, then off the node's).
export function mergePatch(a, b) {
  if (a[PATCH_FINAL]) return null;
  const m = { ...b, [PATCH_APPEND]: a[PATCH_APPEND] + b[PATCH_APPEND] };
  const ak = a[PATCH_KEEP];
  const bk = b[PATCH_KEEP];
  if (bk < 0) {
    // b left the tail as it was: a's tail patch stands.
    if (ak >= 0) for (const k of [PATCH_PATH, PATCH_KEEP, PATCH_TEXT, PATCH_HTML, PATCH_TRIM]) m[k] = a[k];
    if (m[PATCH_TRIM] === undefined) delete m[PATCH_TRIM];
    return m;
  }
  if (ak < 0) return m;
  const ap = a[PATCH_PATH];
  const bp = b[PATCH_PATH];
  const prefix = bp.length <= ap.length && bp.every((n, i) => n === ap[i]);
  if (bk === 0 && prefix) return m;
  const same = ap.length === bp.length && prefix;
  if (same && ak > 0 && bk === ak && !a[PATCH_HTML]) {
    const at = a[PATCH_TEXT];
    const bt = b[PATCH_TRIM] ?? 0;
    const cut = Math.min(bt, at.length);
    const trim = (a[PATCH_TRIM] ?? 0) + bt - cut;
    m[PATCH_TEXT] = at.slice(0, at.length - cut) + b[PATCH_TEXT];
    if (trim) m[PATCH_TRIM] = trim;
    else delete m[PATCH_TRIM];
    return m;
  }
  return null;
}
