// The words the widget shows and speaks, and the page's replacements of
// them: one object of strings for the whole page (TrickleAnswer.strings)
// and one per element (el.strings), the element's winning. English is
// built in. The words the page shows itself (Copy, Thinking, Retry, …) are
// applied here; the others (the statuses, the notices, the tool calls, the
// metrics' names) are Go's (internal/widget/strings.go, under the same
// keys and the same English, which cmd/trickle's docs tests check): the
// page's replacements go to Go with every ask.

/** Every key and its English (docs/package.md lists them). */
export const ENGLISH = Object.freeze({
  // The page's own parts.
  copy: "Copy",
  copyCode: "Copy code",
  copyTable: "Copy table",
  copied: "Copied",
  copyFailed: "Copy failed: the browser refused the clipboard.",
  thinking: "Thinking",
  jumpToLatest: "Jump to latest",
  retry: "Retry",
  unavailable: "The answer cannot be shown on this page.",
  // <trickle-chat>'s own parts.
  chatInput: "Message",
  chatSend: "Send",
  chatStop: "Stop",
  chatYou: "You said:",
  chatAssistant: "The assistant said:",
  chatRegenerate: "Regenerate",
  chatEdit: "Edit",
  chatCutOff: "[This answer was cut off before it finished.]",
  // Go's: the statuses, shown and spoken.
  responding: "Assistant is responding.",
  complete: "Answer complete.",
  stopped: "Answer stopped.",
  incomplete: "Answer incomplete.",
  failed: "Answer failed.",
  stalled: "Waiting for the model…",
  stoppedNotice: "Stopped.",
  calling: "Calling {name}",
  called: "Called {name}",
  aTool: "a tool",
  toolFailed: "Failed: {error}",
  // Go's: why an answer did not complete, one sentence each.
  refused: "The server refused the request ({status}).",
  notFound: "The server has no answer at this address ({status}).",
  rateLimited: "Too many requests ({status}): wait a moment, then retry.",
  serverError: "The server failed to answer ({status}).",
  rejected: "The server did not accept the request ({status}).",
  network: "Could not reach the server.",
  dropped: "The connection dropped and could not be resumed.",
  cutOff: "The answer ended before the model finished.",
  empty: "The server sent an empty answer.",
  unreadable: "The server's answer is in a form this page cannot read.",
  upstream: "The model's service reported an error.",
  relayFailed: "The relay serving this answer failed.",
  tooLarge: "Part of the answer was too large to read.",
  expired: "The answer expired on the server and cannot be resumed.",
  withheld: "This answer was withheld.",
  idle: "The server went silent, so the answer stops here.",
  unknown: "Something went wrong.",
  // Go's: the names of show-metrics' rows.
  metricTTFB: "Time to first byte",
  metricTTFT: "Time to first token",
  metricTTFAT: "Time to first answer token",
  metricGaps: "Gap p50 / p95",
  metricTokensPerSecond: "Tokens per second",
  metricBytes: "Bytes",
  metricBuffering: "Buffering",
  metricLongestFrame: "Longest frame",
});

let pageWide = {};
const ofElement = new WeakMap();
const styled = new WeakSet(); // elements whose stall text label() set

// checked returns the page's strings as a plain object of known keys and
// string values, or throws a TypeError that says what is wrong.
export function checked(value, where) {
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`trickle: ${where} must be an object of strings, not ${Array.isArray(value) ? "an array" : typeof value}`);
  }
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (!Object.hasOwn(ENGLISH, k)) {
      throw new TypeError(`trickle: ${where} has no key "${k}" (the keys: ${Object.keys(ENGLISH).join(", ")})`);
    }
    if (typeof v !== "string") throw new TypeError(`trickle: ${where}.${k} must be a string, not ${typeof v}`);
    out[k] = v;
  }
  return out;
}

/** The page's strings for every element (TrickleAnswer.strings). */
export function pageStrings() {
  return { ...pageWide };
}

export function setPageStrings(value) {
  pageWide = Object.freeze(checked(value, "TrickleAnswer.strings"));
  if (typeof document === "object") for (const el of document.querySelectorAll("trickle-answer")) label(el);
}

/** The element's own strings (el.strings). */
export function elementStrings(el) {
  return { ...(ofElement.get(el) ?? {}) };
}

export function setElementStrings(el, value) {
  ofElement.set(el, Object.freeze(checked(value, "strings")));
  label(el);
}

// replaced is what the page replaced for el: the page's strings, then the
// element's; undefined when nothing (what an ask sends Go).
export function replaced(el) {
  const own = ofElement.get(el);
  if (!own && Object.keys(pageWide).length === 0) return undefined;
  const r = { ...pageWide, ...own };
  return Object.keys(r).length > 0 ? r : undefined;
}

// wordOf is the word of key for el: the element's, the page's, or English.
// An empty string keeps the built-in word, as Go does.
export function wordOf(el, key) {
  return ofElement.get(el)?.[key] || pageWide[key] || ENGLISH[key];
}

// label writes the page's own words into el's parts (its thinking panel,
// retry and jump buttons and the toolbars already shown); Go's words take
// effect with the next ask.
export function label(el) {
  if (typeof el?.querySelectorAll !== "function") return;
  const w = (key) => wordOf(el, key);
  const set = (part, text, aria, inner = "") => {
    for (const n of el.querySelectorAll(`[data-trickle="${part}"]${inner}`)) {
      n.textContent = text;
      if (aria) n.setAttribute("aria-label", aria);
    }
  };
  set("thinking", w("thinking"), "", " > details > summary");
  set("retry", w("retry"));
  set("jump", w("jumpToLatest"));
  set("copy", w("copy"), w("copyCode"));
  set("copy-table", w("copyTable"));
  // The stall notice on screen is the stylesheet's (a ::after after the
  // caret), its words --trickle-stall-text: the page's, when it gave some.
  const stall = ofElement.get(el)?.stalled || pageWide.stalled;
  if (stall) {
    el.style?.setProperty("--trickle-stall-text", cssString(stall));
    styled.add(el);
  } else if (styled.delete(el)) {
    el.style?.removeProperty("--trickle-stall-text");
  }
}

// cssString quotes text as a CSS string (CSS Syntax §4.3.5: a backslash
// escapes the quote and itself; a newline cannot be in a string).
function cssString(text) {
  return `"${text.replace(/[\\"]/g, "\\$&").replace(/[\n\r\f]/g, " ")}"`;
}
