// Reading aids (issue 13): what a settled block gets once, in the task
// that inserts it: each code block a toolbar (its language, Copy) and the
// page's highlighter, each table a Copy table button. The settled HTML
// stays goldmark's; toolbars are siblings.

import { sanitizeSpans } from "./sanitize.js";
import { wordOf } from "./strings.js";

// decorate walks the newly settled nodes between after (exclusive; null:
// the content's first child) and before (exclusive; null: to the end):
// each code block gets its toolbar and the page's highlighter, each table
// its Copy table button.
export function decorate(answer, after, before) {
  const content = answer.content;
  for (let n = after ? after.nextSibling : content.firstChild; n && n !== before; n = n.nextSibling) {
    if (n.nodeType !== 1 || n.dataset.trickle) continue;
    const pres = n.tagName === "PRE" ? [n] : n.querySelectorAll("pre");
    for (const pre of pres) codeBlock(answer, pre);
    const tables = n.tagName === "TABLE" ? [n] : n.querySelectorAll("table");
    for (const table of tables) tableBlock(answer, table);
  }
}

function codeBlock(answer, pre) {
  const code = pre.firstElementChild;
  if (!code || code.tagName !== "CODE") return;
  const lang = /(?:^|\s)language-(\S+)/.exec(code.className)?.[1] ?? "";
  if (answer.highlighter && !code.firstElementChild) highlightWith(answer.highlighter, code, lang);
  const bar = document.createElement("div");
  bar.dataset.trickle = "code-toolbar";
  const name = document.createElement("span");
  name.dataset.trickle = "code-lang";
  name.textContent = lang;
  const btn = document.createElement("button");
  btn.type = "button";
  btn.dataset.trickle = "copy";
  btn.setAttribute("aria-label", wordOf(answer.el, "copyCode"));
  btn.textContent = wordOf(answer.el, "copy");
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
  btn.textContent = wordOf(answer.el, "copyTable");
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
    () => say(answer, wordOf(answer.el, "copied")),
    (err) => {
      console.error("trickle: copying failed:", err);
      say(answer, wordOf(answer.el, "copyFailed"));
    },
  );
}

function say(answer, text) {
  const s = answer.srStatus;
  // The same words again are a new announcement: clear first.
  s.textContent = "";
  requestAnimationFrame(() => (s.textContent = text));
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
