// The reader's selection across frames. Settled blocks are never touched,
// so a selection in them lasts by itself. The live tail is patched every
// frame: a patch that removes the nodes an end of the selection sits in
// (a block settling, an inline element closing, a table row replaced)
// would leave the browser to collapse that end onto their parent. So,
// before a frame, each end in the tail is noted as a character offset from
// the tail's start (its text, as the page shows it); after the frame, the
// same offset is found again from the same place (the first node that was
// in the tail, now settled or still live) and the selection put back. The
// text before an offset does not change as the answer grows, except where
// markdown re-reads it (an emphasis closing drops its asterisks): then the
// selected text is looked for near where it was. Pure DOM functions,
// test/selection.test.js holds their tests.

// selectionEnds is where the page's selection ends: its anchor and focus
// nodes, none when nothing is selected. A frame that patches several
// answers asks once (frameMayHold) rather than once per answer: asking
// brings the page's style and layout up to date, and after one answer's
// writes that is a layout forced for each answer that follows.
export function selectionEnds(doc) {
  const sel = doc.getSelection?.();
  if (!sel || sel.rangeCount === 0) return [];
  return [sel.anchorNode, sel.focusNode].filter((n) => n !== null);
}

// frameMayHold reports whether the selection may have an end in tail,
// asking the page at most once a frame (frame: an object the frame's
// answers share; without one, always true: holdSelection asks itself).
// An end in one answer's tail stays there whatever the other answers'
// patches do, so the frame's first answer's look serves every one.
export function frameMayHold(frame, tail) {
  if (!frame) return true;
  frame.ends ??= selectionEnds(tail.ownerDocument);
  return frame.ends.some((n) => tail.contains(n));
}

// holdSelection notes the ends of the page's selection that are in tail;
// null when there are none (no selection, or one wholly outside it), which
// is every frame while the reader selects nothing.
export function holdSelection(tail) {
  const sel = tail.ownerDocument.getSelection?.();
  if (!sel || sel.rangeCount === 0) return null;
  const { anchorNode, focusNode } = sel;
  const inA = anchorNode !== null && tail.contains(anchorNode);
  const inF = focusNode !== null && tail.contains(focusNode);
  if (!inA && !inF) return null;
  const all = textFrom(tail.firstChild);
  return {
    sel,
    was: [anchorNode, sel.anchorOffset, focusNode, sel.focusOffset],
    text: sel.toString(),
    anchor: inA ? offsetIn(all, anchorNode, sel.anchorOffset) : { node: anchorNode, offset: sel.anchorOffset },
    focus: inF ? offsetIn(all, focusNode, sel.focusOffset) : { node: focusNode, offset: sel.focusOffset },
  };
}

// restoreSelection puts a held selection back after a frame. from is the
// node the tail's text now starts at (the first node after the settled
// block the tail followed, or the content's first node); the text runs
// from there to the content's end.
export function restoreSelection(held, from) {
  if (!held || !from) return;
  const { sel, was } = held;
  // A frame that only added text leaves the selection as it was.
  const now = [sel.anchorNode, sel.anchorOffset, sel.focusNode, sel.focusOffset];
  if (now.every((v, i) => v === was[i]) && was[0].isConnected && was[2].isConnected) return;
  const text = held.text;
  const all = textFrom(from);
  const a = placed(held.anchor, all);
  const f = placed(held.focus, all);
  if (!a || !f) return;
  try {
    sel.setBaseAndExtent(a.node, a.offset, f.node, f.offset);
  } catch {
    return; // an offset the node no longer has: leave the browser's
  }
  if (sel.toString() === text || held.anchor.at === undefined || held.focus.at === undefined) return;
  // Both ends were in the tail and the text between them changed: the
  // markdown re-read something before them. Select the same text nearest
  // to where it was.
  const s = Math.min(held.anchor.at, held.focus.at);
  const i = nearest(all.text, text, s);
  if (i < 0) return;
  const p = pointAt(all, i);
  const q = pointAt(all, i + text.length);
  const [x, y] = held.anchor.at <= held.focus.at ? [p, q] : [q, p];
  sel.setBaseAndExtent(x.node, x.offset, y.node, y.offset);
}

// offsetIn is the point's offset in the tail's text (all, its textFrom),
// as { at }: in a text node it counts, its own offset; anywhere else (an
// element, or a newline between blocks), where the next counted text
// starts.
function offsetIn(all, node, offset) {
  if (node.nodeType === 3) {
    const t = all.nodes.find((n) => n.node === node);
    if (t) return { at: t.start + offset };
  }
  const r = node.ownerDocument.createRange();
  r.setStart(node, offset);
  const t = all.nodes.find((n) => r.comparePoint(n.node, 0) >= 0);
  return { at: t ? t.start : all.text.length };
}

// placed turns a held end back into a point: an end outside the tail is
// where it was, an end in it is found at its offset.
function placed(e, all) {
  if (e.at === undefined) return e.node && e.node.isConnected ? e : null;
  return pointAt(all, e.at);
}

// textFrom lists the text nodes from node from on, in order, with
// their text joined: the answer's own text, not the toolbars, diagrams or
// early view the widget adds ([data-trickle] parts other than the tail
// and the settled groups).
// With the tail's first node it is the tail's text.
function textFrom(from) {
  const nodes = [];
  let text = "";
  const visit = (n) => {
    if (n.nodeType === 3) {
      // The newlines goldmark writes between blocks are not text the
      // reader sees, and come and go as a list turns loose.
      if (/^\n+$/.test(n.data) && !n.parentNode.closest("pre")) return;
      nodes.push({ node: n, start: text.length });
      text += n.data;
      return;
    }
    if (n.nodeType !== 1) return;
    const part = n.getAttribute("data-trickle");
    if (part !== null && part !== "tail" && part !== "settled") return;
    for (let c = n.firstChild; c; c = c.nextSibling) visit(c);
  };
  // From inside a settled group the text runs on past the group's end,
  // through the groups after it and the tail.
  for (let n = from; n; ) {
    visit(n);
    let next = n.nextSibling;
    for (let p = n.parentNode; !next && p?.nodeType === 1 && p.getAttribute("data-trickle") === "settled"; p = p.parentNode) next = p.nextSibling;
    n = next;
  }
  return { nodes, text };
}

// pointAt is the DOM point at character i of a textFrom list: in the text
// node that holds it (at a boundary between two, the end of the first, as
// a selection made by hand would be).
function pointAt({ nodes, text }, i) {
  if (nodes.length === 0) return null;
  i = Math.max(0, Math.min(i, text.length));
  let lo = 0;
  let hi = nodes.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (nodes[mid].start < i) lo = mid;
    else hi = mid - 1;
  }
  const n = nodes[lo];
  return { node: n.node, offset: Math.min(i - n.start, n.node.data.length) };
}

// nearest is the index of the occurrence of s in text closest to at, or -1.
function nearest(text, s, at) {
  if (s === "") return -1;
  const after = text.indexOf(s, at);
  const before = text.lastIndexOf(s, at);
  if (after < 0) return before;
  if (before < 0) return after;
  return at - before <= after - at ? before : after;
}
