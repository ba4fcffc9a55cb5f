// Tail patching: how one frame's answer patch (render.TailPatch and the
// newly settled HTML) changes the answer's DOM. Pure DOM functions,
// test/patch.test.js holds their tests. A patch's keys are the contract's
// (contract.js: PATCH_*).

import { PATCH_APPEND, PATCH_FINAL, PATCH_HTML, PATCH_KEEP, PATCH_PATH, PATCH_TEXT, PATCH_TRIM, PATCH_UNWRAP } from "./contract.js";

// patchTail applies a render.TailPatch to the live tail: trim is how many
// UTF-16 code units leave the end of the last kept text node before text
// is appended to it (an open code fence's last line goes on in place).
export function patchTail(tail, path, keep, text, html, trim = 0) {
  let el = tail;
  for (const i of path) el = el.childNodes[i];
  if (keep === 0) {
    el.innerHTML = html;
    return;
  }
  while (el.childNodes.length > keep) el.lastChild.remove();
  if (trim) {
    // One change of the node's data, not two: the browser copies it each time.
    const t = el.lastChild;
    t.replaceData(t.length - trim, trim, text);
  } else if (text) el.lastChild.appendData(text);
  if (html) el.insertAdjacentHTML("beforeend", html);
}

// GROUP_BLOCKS is how many of the answer's top-level settled blocks one
// settled group (<div data-trickle="settled">) holds. The groups are what
// the stylesheet gives content-visibility: auto, so a settled group off
// screen costs no style, layout or paint as the answer grows, and the
// browser lays out one box per group, not one per block, when the tail
// changes. Few blocks per group would make the browser check many groups
// against the viewport each frame; many would leave the live group large.
// The grouping depends on the blocks alone, never on how frames fell, so
// a streamed answer's DOM equals its one-shot rendering's.
export const GROUP_BLOCKS = 32;

// blocksIn counts the blocks placed in each group (toolbars and diagrams
// the page's side adds later are not blocks Go wrote).
const blocksIn = new WeakMap();

// settle places nodes, in order, at the end of the settled groups before
// tail, opening a new group before the tail whenever the last one holds
// GROUP_BLOCKS elements; it returns the top-level elements placed.
export function settle(tail, nodes) {
  const doc = tail.ownerDocument;
  let group = tail.previousSibling;
  if (group?.nodeType !== 1 || group.getAttribute("data-trickle") !== "settled" || !blocksIn.has(group)) group = null;
  let n = group ? blocksIn.get(group) : 0;
  let fresh = false; // the group is new: it goes in filled, one insertion
  let batch = [];
  const placed = [];
  const flush = () => {
    if (batch.length) group.append(...batch);
    if (fresh) tail.before(group);
    batch = [];
    fresh = false;
    blocksIn.set(group, n);
  };
  for (const node of nodes) {
    const block = node.nodeType === 1;
    if (!group || (block && n === GROUP_BLOCKS)) {
      if (group) flush();
      group = doc.createElement("div");
      group.dataset.trickle = "settled";
      fresh = true;
      n = 0;
    }
    if (block) {
      n++;
      placed.push(node);
    }
    batch.push(node);
  }
  if (group) flush();
  return placed;
}

// settleHTML is settle for the settled HTML of a frame.
function settleHTML(tail, html) {
  const tpl = tail.ownerDocument.createElement("template");
  tpl.innerHTML = html;
  return settle(tail, [...tpl.content.childNodes]);
}

// patchAnswer applies one frame to the answer: the newly settled HTML
// into the settled groups before the live tail, then the tail's patch
// (keep -1: the tail did not change), or, on the final frame, the tail
// goes — or, with unwrap, its nodes are kept as settled blocks and only
// their wrapper goes (Go found the settled HTML equal to the tail's). It
// returns the top-level elements that settled in this frame.
export function patchAnswer(tail, p) {
  const { [PATCH_APPEND]: settled, [PATCH_FINAL]: final, [PATCH_KEEP]: keep } = p;
  const placed = settled ? settleHTML(tail, settled) : [];
  if (final && !p[PATCH_UNWRAP]) {
    tail.remove();
    return placed;
  }
  if (keep >= 0) patchTail(tail, p[PATCH_PATH], keep, p[PATCH_TEXT], p[PATCH_HTML], p[PATCH_TRIM]);
  if (final) {
    placed.push(...settle(tail, [...tail.childNodes]));
    tail.remove();
  }
  return placed;
}

// patchRemoves says whether applying p to tail would take nodes out of
// the document (the tail's own, or the tail itself), or text out of a
// node (a trim): the only patches a selection's end can be lost to or
// moved by. The others only add — settled HTML before the tail, text at
// the end of a node, nodes after the ones kept — and leave every point of
// a selection where it was. It reads the DOM's
// tree only, nothing that needs style or layout, so the frame need not
// ask the browser for the selection (which lays out first) when it only
// adds.
export function patchRemoves(tail, p) {
  const keep = p[PATCH_KEEP];
  if (p[PATCH_FINAL]) return true;
  if (keep < 0) return false;
  if (keep === 0 || p[PATCH_TRIM] > 0) return true;
  let el = tail;
  for (const i of p[PATCH_PATH]) el = el.childNodes[i];
  return el.childNodes.length > keep;
}
