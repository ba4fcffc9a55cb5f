// Reading aids (issue 13): what a settled block gets once, in the task
// that inserts it: each code block a toolbar (its language, Copy) and the
// page's highlighter or diagram renderer, each table a Copy table button,
// each formula the page's TeX converter. The settled HTML stays goldmark's; toolbars are
// siblings.

import { sanitizeSpans } from "./sanitize.js";
import { pageMath, sanitizeMath } from "./mathml.js";
import { sanitizeSVG } from "./svg.js";
import { STR_COPIED, STR_COPY, STR_COPY_CODE, STR_COPY_FAILED, STR_COPY_TABLE } from "./contract.js";
import { wordOf } from "./strings.js";

// decorate walks the newly settled nodes between after (exclusive; null:
// the content's first child) and before (exclusive; null: to the end):
// each code block gets its toolbar and the page's highlighter, each table
// its Copy table button.
export function decorate(answer, after, before) {
  const nodes = [];
  for (let n = after ? after.nextSibling : answer.content.firstChild; n && n !== before; n = n.nextSibling) nodes.push(n);
  decorateBlocks(answer, nodes);
}

// decorateBlocks decorates the given settled blocks (what patchAnswer
// returns: the top-level elements of one frame, in their settled groups).
export function decorateBlocks(answer, nodes) {
  for (const n of nodes) {
    if (n.nodeType !== 1 || n.dataset.trickle) continue;
    const pres = n.tagName === "PRE" ? [n] : n.querySelectorAll("pre");
    for (const pre of pres) codeBlock(answer, pre);
    const tables = n.tagName === "TABLE" ? [n] : n.querySelectorAll("table");
    for (const table of tables) tableBlock(answer, table);
    const math = answer.math ?? pageMath.convert;
    if (math) for (const f of n.querySelectorAll("[data-trickle-math]")) mathWith(math, f);
  }
}

function codeBlock(answer, pre) {
  const code = pre.firstElementChild;
  if (!code || code.tagName !== "CODE") return;
  const lang = /(?:^|\s)language-(\S+)/.exec(code.className)?.[1] ?? "";
  if (answer.diagram && answer.diagramLanguages.includes(lang)) diagramWith(answer.diagram, pre, code.textContent, lang);
  else if (answer.highlighter && !code.firstElementChild) highlightWith(answer.highlighter, code, lang);
  const bar = document.createElement("div");
  bar.dataset.trickle = "code-toolbar";
  const name = document.createElement("span");
  name.dataset.trickle = "code-lang";
  name.textContent = lang;
  const btn = document.createElement("button");
  btn.type = "button";
  btn.dataset.trickle = "copy";
  btn.setAttribute("aria-label", wordOf(answer.el, STR_COPY_CODE));
  btn.textContent = wordOf(answer.el, STR_COPY);
  btn.addEventListener("click", () => {
    copied(answer, navigator.clipboard.writeText(code.textContent));
  });
  bar.append(name, btn);
  pre.before(bar);
}

function tableBlock(answer, table) {
  const bar = document.createElement("div");
  bar.dataset.trickle = "table-toolbar";
  const btn = document.createElement("button");
  btn.type = "button";
  btn.dataset.trickle = "copy-table";
  btn.textContent = wordOf(answer.el, STR_COPY_TABLE);
  btn.addEventListener("click", () => {
    const cell = (c) => c.textContent.replace(/[\t\r\n]+/g, " ").trim();
    const tsv = [...table.rows].map((r) => [...r.cells].map(cell).join("\t")).join("\n") + "\n";
    const item = new ClipboardItem({
      "text/plain": new Blob([tsv], { type: "text/plain" }),
      "text/html": new Blob([table.outerHTML], { type: "text/html" }),
    });
    copied(answer, navigator.clipboard.write([item]));
  });
  bar.append(btn);
  table.before(bar);
}

// copied says "Copied" once in the status region when the clipboard took
// it, or why not.
function copied(answer, promise) {
  promise.then(
    () => say(answer, wordOf(answer.el, STR_COPIED)),
    (err) => {
      console.error("trickle: copying failed:", err);
      say(answer, wordOf(answer.el, STR_COPY_FAILED));
    },
  );
}

function say(answer, text) {
  const s = answer.srStatus;
  // The same words again are a new announcement: clear first.
  s.textContent = "";
  requestAnimationFrame(() => {
    s.textContent = text;
    answer.notify?.(text);
  });
}

// highlightWith runs the page's highlighter on a settled code block. Its
// output is model-derived: only <span class="…"> survives, any other
// element becomes its text, and the result must keep the block's text.
export function highlightWith(highlighter, code, lang) {
  const text = code.textContent;
  let html;
  try {
    html = highlighter(text, lang);
  } catch (err) {
    console.error(`trickle: the page's highlighter threw on a ${lang || "plain"} code block; it stays plain:`, err);
    return;
  }
  if (typeof html !== "string") {
    console.error(`trickle: the page's highlighter returned ${typeof html}, not an HTML string; the block stays plain`);
    return;
  }
  const tpl = document.createElement("template");
  tpl.innerHTML = html;
  const clean = sanitizeSpans(tpl.content);
  if (clean.textContent !== text) {
    console.error("trickle: the page's highlighter changed the code's text; the block stays plain");
    return;
  }
  code.replaceChildren(clean);
}

// mathWith runs the page's TeX converter on a settled formula (render's
// <span data-trickle-math>, its text the TeX), once. Its output (MathML as
// a string or a Node, or a promise of one: a converter loaded when first
// needed) is model-derived: it is copied down to MathML Core (mathml.js).
// A throw, a rejection, a wrong type or nothing left keeps the TeX as text.
export function mathWith(convert, span) {
  if (span.firstElementChild || waiting.has(span)) return;
  const tex = span.textContent;
  const display = span.dataset.trickleMath === "display";
  let out;
  try {
    out = convert(tex.trim(), { display });
  } catch (err) {
    console.error("trickle: the page's math converter threw; the formula stays TeX:", err);
    return;
  }
  if (typeof out?.then === "function") {
    waiting.add(span);
    out.then(
      (v) => {
        waiting.delete(span);
        if (!span.firstElementChild) showMath(span, tex, display, v);
      },
      (err) => {
        waiting.delete(span);
        console.error("trickle: the page's math converter failed; the formula stays TeX:", err);
      },
    );
    return;
  }
  showMath(span, tex, display, out);
}

// waiting are the formulas whose converter's promise has not settled.
const waiting = new WeakSet();

function showMath(span, tex, display, out) {
  let nodes;
  if (typeof out === "string") {
    const tpl = document.createElement("template");
    tpl.innerHTML = out;
    nodes = tpl.content.childNodes;
  } else if (out && typeof out.nodeType === "number") {
    nodes = out.nodeType === 11 ? out.childNodes : [out];
  } else {
    console.error(`trickle: the page's math converter returned ${typeof out}, not MathML or a Node; the formula stays TeX`);
    return;
  }
  const math = sanitizeMath(nodes, document);
  if (!math) {
    console.error("trickle: the page's math converter returned no MathML; the formula stays TeX");
    return;
  }
  if (display) math.setAttribute("display", "block");
  else math.removeAttribute("display");
  // The TeX is the formula's text when the MathML is copied as text, and
  // what a reader without MathML support hears.
  if (!math.hasAttribute("alttext")) math.setAttribute("alttext", tex.trim());
  span.replaceChildren(math);
}

// diagramWith runs the page's diagram renderer on a settled code block of
// one of its languages, once; its result (SVG as a string or a Node, or a
// promise of one) is derived from model output and copied down to SVG
// drawing elements (svg.js). The diagram is shown before the block, which
// is hidden and keeps the source (its Copy button copies it); a throw, a
// rejection or no <svg> leaves the code block.
export function diagramWith(render, pre, source, lang) {
  const fail = (why, err) => console.error(`trickle: the page's diagram renderer ${why} on a ${lang} block; it stays code`, ...(err ? [err] : []));
  const show = (out) => {
    let nodes;
    if (typeof out === "string") {
      const tpl = document.createElement("template");
      tpl.innerHTML = out;
      nodes = tpl.content.childNodes;
    } else if (out && typeof out.nodeType === "number") {
      nodes = [out];
    } else {
      return fail(`returned ${typeof out}, not SVG or a Node,`);
    }
    const svg = sanitizeSVG(nodes, document);
    if (!svg) return fail("returned no <svg>");
    const fig = document.createElement("div");
    fig.dataset.trickle = "diagram";
    fig.append(svg);
    pre.before(fig);
    pre.hidden = true;
  };
  let out;
  try {
    out = render(lang, source);
  } catch (err) {
    return fail("threw", err);
  }
  if (out && typeof out.then === "function") out.then(show, (err) => fail("failed", err));
  else show(out);
}
