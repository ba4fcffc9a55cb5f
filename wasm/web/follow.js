// Following the answer: the scroll position of a streaming answer, kept at
// its newest text while the reader is at the bottom.

// follow keeps the newest text of a streaming answer in view while the
// reader is at the bottom (within 8 px) of the element, and never moves a
// reader who scrolled up: they get the "jump to latest" button instead. It
// scrolls from a ResizeObserver, after the browser's own layout of a frame
// (reading scrollHeight right after the frame's DOM writes would force a
// second layout). start() begins an answer; end(grew) is the final frame
// (it scrolls at once, so the answer is in view when ask() resolves);
// grew() is for browsers without ResizeObserver; stop() lets go.
//
// Geometry is read only where layout is clean (the ResizeObserver's
// callback) or where the reader moved: the scroll event that follows the
// widget's own scroll to the end (one per frame while the answer grows) is
// not read — reading scrollTop there would lay out, before the frame's own
// layout, whatever changed since (the live regions, written as Go's
// messages arrive). A scroll the reader started (wheel, touch, keys,
// pointer on the scrollbar) is read at once. Anything else that moved the
// element in the same frame as the widget (a page's script, find in page)
// shares that scroll event, so the next growth, where layout is clean,
// first checks that the element is still where the widget left it.
export function follow(el, jump, parts) {
  let following = true;
  let streaming = false;
  let jumpShown = false;
  let ownScroll = false; // a scroll event of the widget's own is due
  let ownTop = -Infinity; // where the widget last scrolled to: its top
  let ownBottom = -Infinity; // and its bottom edge
  let readerMoved = false; // input that may scroll came since
  const showJump = (show) => {
    if (show !== jumpShown && jump) {
      jumpShown = show;
      jump.hidden = !show;
    }
  };
  const toEnd = () => {
    const top = el.scrollTop;
    el.scrollTop = el.scrollHeight;
    ownTop = el.scrollTop;
    ownBottom = ownTop + el.clientHeight;
    if (ownTop !== top) ownScroll = true;
  };
  // moved: something scrolled the element up from where the widget left
  // it (its top and its bottom edge both higher: the element growing or
  // shrinking on the page moves only one of them), and it is not at the
  // end: content that shrank (Go's frame taking over from the early view)
  // pulls the scroll position up to the new end, which is no reader's
  // doing.
  const moved = () =>
    el.scrollTop < ownTop - 8 && el.scrollTop + el.clientHeight < ownBottom - 8 && el.scrollHeight - el.scrollTop - el.clientHeight > 8;
  const grew = () => {
    if (!streaming) return;
    if (following && moved()) following = false;
    if (following) toEnd();
    else showJump(true);
  };
  const onScroll = () => {
    if (ownScroll && !readerMoved) {
      ownScroll = false;
      return;
    }
    ownScroll = false;
    readerMoved = false;
    following = el.scrollHeight - el.scrollTop - el.clientHeight <= 8;
    if (following) showJump(false);
  };
  const onInput = () => {
    readerMoved = true;
  };
  const inputs = ["wheel", "touchmove", "keydown", "pointerdown"];
  const onJump = () => {
    following = true;
    toEnd();
    showJump(false);
  };
  el.addEventListener("scroll", onScroll, { passive: true });
  for (const type of inputs) el.addEventListener(type, onInput, { passive: true });
  jump?.addEventListener("click", onJump);
  let ro = null;
  if (typeof ResizeObserver === "function") {
    ro = new ResizeObserver(grew);
    for (const p of parts) if (p) ro.observe(p);
  }
  return {
    observes: ro !== null,
    start() {
      following = true;
      ownTop = ownBottom = -Infinity;
      streaming = true;
      showJump(false);
    },
    end(added) {
      streaming = false;
      if (following && moved()) following = false;
      if (following) toEnd();
      else if (added) showJump(true);
    },
    grew,
    stop() {
      ro?.disconnect();
      el.removeEventListener("scroll", onScroll);
      for (const type of inputs) el.removeEventListener(type, onInput);
      jump?.removeEventListener("click", onJump);
    },
  };
}
