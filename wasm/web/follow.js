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
export function follow(el, jump, parts) {
  let following = true;
  let streaming = false;
  let jumpShown = false;
  const showJump = (show) => {
    if (show !== jumpShown && jump) {
      jumpShown = show;
      jump.hidden = !show;
    }
  };
  const toEnd = () => {
    el.scrollTop = el.scrollHeight;
  };
  const grew = () => {
    if (!streaming) return;
    if (following) toEnd();
    else showJump(true);
  };
  const onScroll = () => {
    following = el.scrollHeight - el.scrollTop - el.clientHeight <= 8;
    if (following) showJump(false);
  };
  const onJump = () => {
    following = true;
    toEnd();
    showJump(false);
  };
  el.addEventListener("scroll", onScroll, { passive: true });
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
      streaming = true;
      showJump(false);
    },
    end(added) {
      streaming = false;
      if (following) toEnd();
      else if (added) showJump(true);
    },
    grew,
    stop() {
      ro?.disconnect();
      el.removeEventListener("scroll", onScroll);
      jump?.removeEventListener("click", onJump);
    },
  };
}
