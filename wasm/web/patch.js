// Tail patching: how one frame's answer patch (render.TailPatch and the
// newly settled HTML) changes the answer's DOM. Pure DOM functions,
// test/patch.test.js holds their tests.

// patchTail applies a render.TailPatch to the live tail.
export function patchTail(tail, path, keep, text, html) {
  let el = tail;
  for (const i of path) el = el.childNodes[i];
  if (keep === 0) {
    el.innerHTML = html;
    return;
  }
  while (el.childNodes.length > keep) el.lastChild.remove();
  if (text) el.lastChild.appendData(text);
  if (html) el.insertAdjacentHTML("beforeend", html);
}

// patchAnswer applies one frame to the answer: the newly settled HTML
// before the live tail, then the tail's patch (keep -1: the tail did not
// change), or, on the final frame, the tail goes — or, with unwrap, its
// nodes stay in place as settled blocks and only their wrapper goes (Go
// found the settled HTML equal to the tail's).
export function patchAnswer(tail, p) {
  if (p.a) tail.insertAdjacentHTML("beforebegin", p.a);
  if (p.final && !p.unwrap) {
    tail.remove();
    return;
  }
  if (p.keep >= 0) patchTail(tail, p.path, p.keep, p.text, p.html);
  if (p.final) tail.replaceWith(...tail.childNodes);
}

// patchRemoves says whether applying p to tail would take nodes out of
// the document (the tail's own, or the tail itself): the only patches a
// selection's end can be lost to. The others only add — settled HTML
// before the tail, text at the end of a node, nodes after the ones kept —
// and leave every point of a selection where it was. It reads the DOM's
// tree only, nothing that needs style or layout, so the frame need not
// ask the browser for the selection (which lays out first) when it only
// adds.
export function patchRemoves(tail, p) {
  if (p.final) return true;
  if (p.keep < 0) return false;
  if (p.keep === 0) return true;
  let el = tail;
  for (const i of p.path) el = el.childNodes[i];
  return el.childNodes.length > p.keep;
}
