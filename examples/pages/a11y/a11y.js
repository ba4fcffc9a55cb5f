// The screen-reader lab. Left: what Trickle's announcer really says,
// recorded with a MutationObserver. Right: a naive aria-live region and a
// simulated screen reader listening to it. Counters are computed the same
// way for both sides.
import { simQuery } from "../common.js";

const form = document.getElementById("run");
const el = document.getElementById("answer");
const naive = document.getElementById("naive");
const pill = document.getElementById("status");
const sides = {
  trickle: { log: document.getElementById("t-log"), dl: document.getElementById("t-counts") },
  naive: { log: document.getElementById("n-log"), dl: document.getElementById("n-counts") },
};

const SPEECH_CHARS_PER_SECOND = 15; // ≈ 180 words a minute
const MARKDOWN = /[*_#`|~\[\]]/g;
const norm = (s) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
// words keeps one space between words, so a word's end stays visible.
const words = (s) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
const isWordChar = (c) => /[\p{L}\p{N}]/u.test(c || "");

let t0 = 0;
let seen = new Map(); // sentence-end key → ms when it first appeared on screen
let run = null;

// sentenceEnds returns a key for every confirmed sentence end in text
// (punctuation followed by white space): the last 24 letters and digits
// before it, so rendered text and raw markdown give the same key.
function sentenceEnds(text) {
  const keys = [];
  for (const m of text.matchAll(/[.!?…](?=\s|$)/g)) {
    const key = norm(text.slice(Math.max(0, m.index - 80), m.index)).slice(-24);
    if (key.length >= 8) keys.push(key);
  }
  return keys;
}

function noteScreen(text, now) {
  for (const k of sentenceEnds(text.trimEnd() + " ")) if (!seen.has(k)) seen.set(k, now);
}

function record(side, text, at, status = false) {
  const s = run[side];
  let wait = 0;
  for (const k of sentenceEnds(text)) if (seen.has(k)) wait = Math.max(wait, at - seen.get(k));
  s.entries.push({ text, at, status, wait });
  const li = document.createElement("li");
  li.innerHTML = "<time></time><span></span>";
  li.firstChild.textContent = (at / 1000).toFixed(2) + " s";
  li.lastChild.textContent = text;
  if (status) li.lastChild.insertAdjacentHTML("beforeend", '<span class="tag" data-kind="status">status</span>');
  sides[side].log.append(li);
}

// counters recomputes the figures of one side from its transcript; source
// is the text the announcements were taken from, to tell a word cut in two.
function counters(side, source) {
  const heard = new Set();
  const before = [];
  const spaced = words(source);
  const c = { announcements: 0, duplicates: 0, fragments: 0, markdown: 0, wait: 0 };
  const items = sides[side].log.children;
  run[side].entries.forEach((e, i) => {
    if (e.status) return;
    c.announcements++;
    c.markdown += (e.text.match(MARKDOWN) || []).length;
    c.wait = Math.max(c.wait, e.wait);
    // A duplicate re-reads something already heard: a whole earlier
    // announcement, or a sentence that was already spoken.
    const flatText = norm(e.text);
    let dup = before.some((b) => flatText.includes(b));
    for (const s of e.text.split(/(?<=[.!?…])\s+/)) {
      const k = norm(s);
      if (k.length < 8) continue;
      if (heard.has(k)) dup = true;
      heard.add(k);
    }
    if (flatText.length >= 8) before.push(flatText);
    // A fragment ends inside a word: in the text it came from, a letter or
    // digit follows the place where the announcement stopped.
    const tail = words(e.text).slice(-24);
    const at = tail ? spaced.indexOf(tail) : -1;
    const frag = isWordChar(e.text.trimEnd().slice(-1)) && at >= 0 && isWordChar(spaced[at + tail.length]);
    if (dup) c.duplicates++;
    if (frag) c.fragments++;
    mark(items[i], "dup", dup, "repeat");
    mark(items[i], "frag", frag, "cut mid-word");
  });
  show(side, c);
}

// mark flags a transcript line in words as well as in colour.
function mark(li, cls, on, label) {
  li.classList.toggle(cls, on);
  let tag = li.querySelector(`.tag[data-kind="${cls}"]`);
  if (on && !tag) {
    tag = document.createElement("span");
    tag.className = "tag";
    tag.dataset.kind = cls;
    tag.textContent = label;
    li.lastChild.append(tag);
  } else if (!on && tag) {
    tag.remove();
  }
}

function show(side, c) {
  const rows = [
    ["announcements", c.announcements], ["duplicates", c.duplicates], ["fragments", c.fragments],
    ["markdown chars", c.markdown], ["longest wait", Math.round(c.wait) + " ms"],
  ];
  sides[side].dl.innerHTML = rows.map(([k]) => `<div><dt>${k}</dt><dd data-key="${k}"></dd></div>`).join("");
  sides[side].dl.querySelectorAll("dd").forEach((dd, i) => { dd.textContent = String(rows[i][1]); });
}

// The naive side: the region gets the whole answer on every update; the
// simulated reader speaks the region when idle and merges what arrives
// while it talks. Time is virtual past the end of the stream, so the lab
// never has to wait for minutes of speech.
function naiveUpdate(text, now) {
  const r = run.naive;
  if (r.pending !== null && r.free <= now) speakNaive(r.free);
  naive.textContent = text;
  if (now >= r.free) { r.pendingText = text; speakNaive(now); } else { r.pending = now; r.pendingText = text; }
}
function speakNaive(at) {
  const r = run.naive;
  record("naive", r.pendingText, at);
  r.free = at + (r.pendingText.length / SPEECH_CHARS_PER_SECOND) * 1000;
  r.pending = null;
}

const content = () => el.querySelector('[data-trickle="content"]');

const observer = new MutationObserver((muts) => {
  if (!run) return;
  const at = performance.now() - t0;
  for (const m of muts) {
    const node = m.target.nodeType === Node.TEXT_NODE ? m.target.parentElement : m.target;
    const region = node?.closest('[data-trickle="announcer"], [data-trickle="sr-status"]');
    if (!region) continue;
    const status = region.dataset.trickle === "sr-status";
    const texts = m.type === "characterData" ? [m.target.data] : [...m.addedNodes].map((n) => n.textContent);
    for (const t of texts) if (t && t.trim()) record("trickle", t.trim(), at, status);
  }
  counters("trickle", content()?.textContent || "");
});
observer.observe(el, { subtree: true, childList: true, characterData: true });

// One tick per animation frame while streaming: note where sentences end on
// screen and feed the naive region.
function tick() {
  if (!run) return;
  const now = performance.now() - t0;
  const text = el.text || "";
  noteScreen(content()?.textContent || "", now);
  noteScreen(text, now);
  if (text !== run.lastText) {
    // The naive page re-renders on every token: replay what arrived since
    // the last frame one token at a time.
    for (let end = run.lastText.length + run.tokenChars; end < text.length + run.tokenChars; end += run.tokenChars) {
      naiveUpdate(text.slice(0, Math.min(end, text.length)), now);
    }
    run.lastText = text;
    counters("naive", text);
  }
  if (run.active) requestAnimationFrame(tick);
}

// The read-aloud timeline: each utterance the element queues (its speak
// attribute), with the time since the request, recorded on its way to the
// browser's speechSynthesis.
const speechLog = document.getElementById("t-speech");
if (globalThis.speechSynthesis?.speak) {
  const speak = speechSynthesis.speak.bind(speechSynthesis);
  speechSynthesis.speak = (u) => {
    const li = document.createElement("li");
    li.innerHTML = "<time></time><span></span>";
    li.firstChild.textContent = ((performance.now() - t0) / 1000).toFixed(2) + " s";
    li.lastChild.textContent = u.text;
    speechLog.append(li);
    speak(u);
  };
}

el.addEventListener("trickle-start", () => { pill.textContent = "streaming"; pill.dataset.status = "streaming"; });
el.addEventListener("trickle-end", (e) => {
  const status = e.detail?.status ?? el.status;
  pill.textContent = status;
  pill.dataset.status = status;
});

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  await customElements.whenDefined("trickle-answer");
  const f = form.elements;
  el.setAttribute("announce", f._mode.value);
  el.setAttribute("endpoint", "/v1/chat/completions?" + simQuery(form));
  naive.setAttribute("aria-live", f._reallive.checked ? "polite" : "off");
  el.toggleAttribute("speak", f._speak.checked);
  speechLog.replaceChildren();
  naive.textContent = "";
  for (const s of Object.values(sides)) s.log.replaceChildren();
  seen = new Map();
  run = { active: true, tokenChars: Math.max(1, Number(f.token_chars.value) || 4), trickle: { entries: [] }, naive: { entries: [], free: 0, pending: null, pendingText: "" }, lastText: "" };
  t0 = performance.now();
  document.body.dataset.done = "";
  requestAnimationFrame(tick);
  await el.ask("Tell me about streaming answers.");
  run.active = false;
  tick();
  // The stream is over: the reader still owes the last update.
  if (run.naive.pending !== null) speakNaive(Math.max(run.naive.free, performance.now() - t0));
  counters("naive", el.text || "");
  // Announcements due at the end (the last sentence, the status) land a
  // moment later; count them too before saying the lab is done.
  setTimeout(() => { counters("trickle", content()?.textContent || ""); document.body.dataset.done = "1"; }, 1500);
});

show("trickle", { announcements: 0, duplicates: 0, fragments: 0, markdown: 0, wait: 0 });
show("naive", { announcements: 0, duplicates: 0, fragments: 0, markdown: 0, wait: 0 });
