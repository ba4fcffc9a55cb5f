// How the reader hears an answer: ariaNotify() where the browser has it,
// the answer's live regions elsewhere, chosen at run time for each element
// (the method on the element, else on the document). The words, their
// order and their once-only are Go's either way: the announcer still
// holds each sentence as it is said and the status region the status, as
// a record the page and the tests read; with ariaNotify they are plain
// hidden text, no longer live, so nothing is heard twice.

// notifier is el's way to speak text now: a function, or null where the
// browser has no ariaNotify (the live regions speak).
export function notifier(el) {
  // ChromeOS's Chromium has the method but speaks none of it (MDN's
  // compatibility data, 2026-09): the live regions speak there.
  if (/\bCrOS\b/.test(el.ownerDocument?.defaultView?.navigator?.userAgent ?? "")) return null;
  const own = el.ariaNotify;
  if (typeof own === "function") return (text) => own.call(el, text);
  const doc = el.ownerDocument;
  const its = doc?.ariaNotify;
  if (typeof its === "function") return (text) => its.call(doc, text);
  return null;
}

// quiet takes the live roles off the regions that ariaNotify speaks for.
export function quiet(announcer, status) {
  for (const a of ["role", "aria-live", "aria-relevant"]) announcer?.removeAttribute(a);
  status?.removeAttribute("role");
}
