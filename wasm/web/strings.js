// The words the widget shows and speaks, and the page's replacements of
// them: one object of strings for the whole page (TrickleAnswer.strings)
// and one per element (el.strings), the element's winning. English is
// built in. The keys and their English are the contract's (contract.js,
// generated from wasm/protocol's table). The words the page shows
// itself (Copy, Thinking, Retry, …) are applied here; the others (the
// statuses, the notices, the tool calls, the metrics' names) are Go's
// (wasm/element/strings.go): the page's replacements go to Go with
// every ask.

import { ENGLISH, STR_COPY, STR_COPY_CODE, STR_COPY_TABLE, STR_JUMP_TO_LATEST, STR_RETRY, STR_STALLED, STR_THINKING } from "./contract.js";

/** Every key and its English (docs/package.md lists them): the contract's. */
export { ENGLISH };

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
  set("thinking", w(STR_THINKING), "", " > details > summary");
  set("retry", w(STR_RETRY));
  set("jump", w(STR_JUMP_TO_LATEST));
  set("copy", w(STR_COPY), w(STR_COPY_CODE));
  set("copy-table", w(STR_COPY_TABLE));
  // The stall notice on screen is the stylesheet's (a ::after after the
  // caret), its words --trickle-stall-text: the page's, when it gave some.
  const stall = ofElement.get(el)?.[STR_STALLED] || pageWide[STR_STALLED];
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
