package browsertest

import "fmt"

// SelectionScript defines window.trickleSelection(el, where, endpoint) in
// a page: the reader's selection while an answer streams, as a page script
// any engine runs (wasm/e2e drives it in Chromium, wasm/engines in
// Firefox). It asks el for the endpoint's answer; once the live tail's
// last block is a growing paragraph it selects, where is
//
//   - "settled": the whole settled block before the tail;
//   - "tail": characters 5 to 30 of the growing paragraph;
//   - "across": from the start of the last settled block to character 20
//     of the growing paragraph.
//
// Then it reads the selection back 2 s later (and notes whether the answer
// was still streaming), again once the paragraph it began in has settled,
// and after the end. It resolves with a SelectionResult as JSON.
const SelectionScript = `
window.trickleSelection = async (el, where, endpoint) => {
  const content = el.querySelector('[data-trickle="content"]');
  const tail = () => content.querySelector('[data-trickle="tail"]');
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // The character i of node's text, as a DOM point.
  const point = (node, i) => {
    const w = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    let seen = 0;
    for (let t = w.nextNode(); t; t = w.nextNode()) {
      if (i <= seen + t.data.length) return [t, i - seen];
      seen += t.data.length;
    }
    throw new Error("no character " + i + " in " + node.outerHTML);
  };
  // A paragraph of prose: one that starts with a pipe is a table's
  // header row until its delimiter row comes (then its text changes: the
  // pipes go), which no selection could keep.
  const growing = () => {
    const p = tail()?.lastElementChild;
    return p && p.tagName === "P" && p.textContent.length >= 40 && !p.textContent.trimStart().startsWith("|") ? p : null;
  };
  // The settled block just before the tail, the last of its settled
  // group (the toolbars beside code blocks and tables are the widget's,
  // not the answer's).
  const settled = () => {
    let n = tail()?.previousElementSibling;
    if (n?.dataset.trickle === "settled") n = n.lastElementChild;
    while (n && n.hasAttribute("data-trickle")) n = n.previousElementSibling;
    return n && n.textContent.trim().length > 0 ? n : null;
  };
  el.setAttribute("endpoint", endpoint);
  let ended = "";
  const done = el.ask("selection").then((s) => (ended = s));
  const deadline = performance.now() + 30000;
  while (!(el.status === "streaming" && el.text.length >= 1500 && growing() && settled())) {
    if (ended) throw new Error("the answer ended (" + ended + ") before a paragraph grew in the tail");
    if (performance.now() > deadline) throw new Error("no growing paragraph in the tail within 30 s: " + el.status + ", " + el.text.length + " chars");
    await sleep(5);
  }
  const sel = document.getSelection();
  const p = growing();
  const s = settled();
  if (where === "settled") {
    const r = document.createRange();
    r.selectNodeContents(s);
    sel.removeAllRanges();
    sel.addRange(r);
  } else if (where === "tail") {
    const [a, ao] = point(p, 5);
    const [f, fo] = point(p, 30);
    sel.setBaseAndExtent(a, ao, f, fo);
  } else if (where === "across") {
    const [a, ao] = point(s, 0);
    const [f, fo] = point(p, 20);
    sel.setBaseAndExtent(a, ao, f, fo);
  } else {
    throw new Error("where: " + where);
  }
  const out = { where, want: sel.toString(), inTail: !!tail()?.contains(sel.focusNode) };
  await sleep(2000);
  out.at2s = sel.toString();
  out.statusAt2s = el.status;
  // The paragraph the selection ends in settles (if 2 s did not see it).
  while (tail()?.contains(sel.focusNode) && performance.now() < deadline) await sleep(20);
  out.settled = !tail()?.contains(sel.focusNode);
  out.atSettle = sel.toString();
  out.status = await done;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  out.atEnd = sel.toString();
  out.focusInAnswer = content.contains(sel.focusNode);
  return JSON.stringify(out);
};
`

// SelectionCases are the places SelectionScript selects in, each a case
// of its own (one selection at a time).
var SelectionCases = []string{"settled", "tail", "across"}

// SelectionEndpoint is the simulated model's answer SelectionScript asks
// for, relative to the relay: the 20 KB sample for about 8 s (8
// characters a token, 3 ms apart), long enough for a selection made early
// to be read back 2 s later while the answer still streams.
const SelectionEndpoint = "/v1/chat/completions?answer=sample-20k&token_chars=8&gap_ms=3"

// SelectionResult is what window.trickleSelection resolves with.
type SelectionResult struct {
	Where      string `json:"where"`
	Want       string `json:"want"`       // the selection's text when it was made
	InTail     bool   `json:"inTail"`     // its focus was in the live tail then
	At2s       string `json:"at2s"`       // its text 2 s later
	StatusAt2s string `json:"statusAt2s"` // the element's status then
	Settled    bool   `json:"settled"`    // its focus's paragraph settled while it lasted
	AtSettle   string `json:"atSettle"`   // its text once it had
	Status     string `json:"status"`     // how the answer ended
	AtEnd      string `json:"atEnd"`      // its text after the end
	InAnswer   bool   `json:"focusInAnswer"`
}

// Err says how the result breaks the contract, or nil: the selection
// ended in the live tail when it was made (but for "settled"), and
// selected the same text 2 s later while the answer still streamed, once
// its paragraph had settled, and after the end, still in the answer.
func (r SelectionResult) Err() error {
	switch {
	case r.Want == "":
		return fmt.Errorf("%s: nothing was selected (%+v)", r.Where, r)
	case r.InTail != (r.Where != "settled"):
		return fmt.Errorf("%s: the selection's focus was in the live tail: %v (%+v)", r.Where, r.InTail, r)
	case r.StatusAt2s != "streaming":
		return fmt.Errorf("%s: the answer was %s 2 s later, not streaming: the check came too late (%+v)", r.Where, r.StatusAt2s, r)
	case r.At2s != r.Want:
		return fmt.Errorf("%s: after 2 s of streaming the selection was %q, not %q", r.Where, r.At2s, r.Want)
	case !r.Settled:
		return fmt.Errorf("%s: the selection's paragraph never settled (%+v)", r.Where, r)
	case r.AtSettle != r.Want:
		return fmt.Errorf("%s: after its paragraph settled the selection was %q, not %q", r.Where, r.AtSettle, r.Want)
	case r.Status != "complete":
		return fmt.Errorf("%s: the answer ended %s (%+v)", r.Where, r.Status, r)
	case r.AtEnd != r.Want || !r.InAnswer:
		return fmt.Errorf("%s: after the end the selection was %q (in the answer: %v), not %q", r.Where, r.AtEnd, r.InAnswer, r.Want)
	}
	return nil
}
