// The transports page: one request, two transports, one hidden fault-free
// reference. All streaming (and all recovery) is the widget's; this script
// reads each element's `metrics` once per animation frame into the chart and
// the table, and compares the final texts.
import { setStatus, wsURL } from "../common.js";
import { Timeline } from "./chart.js";

const form = document.getElementById("sim");
const go = document.getElementById("go");
const stop = document.getElementById("stop");
const verdict = document.getElementById("verdict");
const reference = document.getElementById("reference");
const table = document.getElementById("table");
const chart = new Timeline(document.getElementById("chart"));

const sides = ["sse", "websocket"].map((id) => {
  const el = document.getElementById(id);
  const pill = document.querySelector(`[data-side="${id}"] .pill`);
  const side = { id, el, pill, track: newTrack() };
  el.addEventListener("trickle-start", () => setStatus(pill, "streaming"));
  el.addEventListener("trickle-end", (e) => {
    setStatus(pill, e.detail?.status ?? el.status);
    if (run) side.track.end = performance.now() - run.t0;
  });
  return side;
});

// A track is what the page saw of one side during a run: when its token
// count grew, when it reconnected, and whether each reconnect went on.
function newTrack() {
  return { points: [], marks: [], tokens: 0, reconnects: 0, resumes: 0, pendingResume: null, end: 0, m: null };
}

let run = null; // { t0, active }

// sample reads one side's metrics at t ms into the run.
function sample(s, t) {
  const m = s.el.metrics;
  if (!m) return;
  const tr = s.track;
  tr.m = m;
  if (m.tokens !== tr.tokens) {
    tr.points.push([t, m.tokens]);
    tr.tokens = m.tokens;
  }
  // A resume "went on" once text arrives after it (or, below, the answer
  // completes with nothing left to send but the end marker).
  if (tr.pendingResume !== null && m.tokens > tr.pendingResume) {
    tr.resumes++;
    tr.pendingResume = null;
  }
  for (; tr.reconnects < m.reconnects; tr.reconnects++) {
    tr.marks.push([t, m.tokens]);
    tr.pendingResume = m.tokens;
  }
}

// framing estimates the bytes per event that the browser strips before the
// page can count them: an HTTP/1.1 chunk's hex length, CRLF and trailing
// CRLF; a server-to-client WebSocket frame header (RFC 6455 §5.2).
function framing(side, eventBytes) {
  if (side === "sse") return Math.max(1, Math.round(eventBytes)).toString(16).length + 4;
  return eventBytes < 126 ? 2 : eventBytes < 65536 ? 4 : 10;
}

function ms(v) {
  return `${v < 10 ? v.toFixed(1) : Math.round(v).toLocaleString("en")} ms`;
}

// compare says how text differs from the reference.
function compare(text, want) {
  if (text === want) return { ok: true, words: "identical" };
  let i = 0;
  while (i < text.length && i < want.length && text[i] === want[i]) i++;
  return { ok: false, words: `differs from character ${i.toLocaleString("en")} (${text.length.toLocaleString("en")} vs ${want.length.toLocaleString("en")})` };
}

// cell fills one table cell: the words a person reads and, in data-value,
// the plain number (empty when there is none yet).
function cell(key, side, words, value = "") {
  const td = table.querySelector(`tr[data-key="${key}"] td[data-side="${side}"]`);
  td.textContent = words;
  td.dataset.value = String(value);
}

function fillTable(done) {
  for (const s of sides) {
    const m = s.track.m ?? {};
    const n = m.tokens ?? 0;
    const none = (key) => cell(key, s.id, "–");
    const status = s.el.status ?? "idle"; // before the element is defined
    cell("status", s.id, status, status);
    if (m.ttft_ms > 0) cell("ttft", s.id, ms(m.ttft_ms), m.ttft_ms); else none("ttft");
    for (const [key, field] of [["gap_p50", "gap_p50_ms"], ["gap_p95", "gap_p95_ms"], ["gap_max", "gap_max_ms"]]) {
      if (n >= 2) cell(key, s.id, ms(m[field]), m[field]); else none(key);
    }
    cell("tokens", s.id, n.toLocaleString("en"), n);
    if (n > 0) {
      const per = m.bytes / n;
      const wire = per + framing(s.id, per);
      cell("bytes_per_token", s.id, `${per.toFixed(1)} B`, per.toFixed(2));
      cell("wire_per_token", s.id, `≈ ${wire.toFixed(1)} B`, wire.toFixed(2));
    } else {
      none("bytes_per_token");
      none("wire_per_token");
    }
    cell("reconnects", s.id, String(m.reconnects ?? 0), m.reconnects ?? 0);
    cell("resumes", s.id, `${s.track.resumes} of ${s.track.reconnects}`, s.track.resumes);
    if (done) {
      const c = compare(s.el.text, reference.text);
      cell("vs_reference", s.id, c.words, String(c.ok));
    } else {
      none("vs_reference");
    }
  }
}

function draw() {
  let tMax = 0;
  let nMax = 0;
  const now = performance.now() - run.t0;
  const series = sides.map((s) => {
    const until = s.track.end || (run.active ? now : 0);
    tMax = Math.max(tMax, until);
    nMax = Math.max(nMax, s.track.tokens);
    return { side: s.id, points: s.track.points, marks: s.track.marks, until };
  });
  chart.draw(series, tMax, nMax);
}

function frame() {
  if (!run?.active) return; // the end of the run draws the last frame itself
  const t = performance.now() - run.t0;
  for (const s of sides) sample(s, t);
  draw();
  fillTable(false);
  requestAnimationFrame(frame);
}

// query builds the relay's query string for the simulated model; the fault
// fields only go in for the chosen fault. The reference gets the same answer
// with no delays, no fault and big tokens: the text does not depend on how
// it is cut, and fewer events make it quick.
function query(withFault) {
  const f = form.elements;
  const q = new URLSearchParams();
  for (const k of ["answer", "ttft_ms", "gap_ms", "jitter_ms", "token_chars"]) {
    if (f[k].value !== "") q.set(k, f[k].value);
  }
  if (!withFault) {
    q.set("ttft_ms", "0");
    q.set("gap_ms", "0");
    q.set("jitter_ms", "0");
    q.set("token_chars", "256");
    return q.toString();
  }
  const fault = f._fault.value;
  if (fault === "no_end") q.set("no_end", "1");
  else if (fault) q.set(fault, f._n.value);
  if (fault === "stall_after") q.set("stall_ms", f._stall_ms.value);
  return q.toString();
}

function aim(el, q) {
  el.setAttribute("endpoint", "/v1/chat/completions?" + q);
  el.setAttribute("ws-endpoint", wsURL(q));
}

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  await customElements.whenDefined("trickle-answer");
  // Both sides start once the widget's Go side has: an ask made before
  // then goes out at once over fetch (the early view) but waits for Go over
  // a WebSocket, and the race would be the boot's, not the transports'.
  await (await import("/trickle/trickle.js")).ready();
  const q = query(true);
  for (const s of sides) aim(s.el, q);
  aim(reference, query(false));
  const request = {
    model: "trickle-sim",
    stream: true,
    messages: [{ role: "user", content: "Show me how each transport copes." }],
  };
  // The seed fixes the jitter (and, without a named answer, which answer):
  // both sides and the reference get the same one.
  const seed = form.elements._seed.value;
  if (seed !== "") request.seed = Number(seed);
  go.disabled = true;
  stop.disabled = false;
  verdict.textContent = "Streaming…";
  delete verdict.dataset.ok;
  document.body.dataset.done = "";
  chart.reset();
  for (const s of sides) s.track = newTrack();
  run = { t0: performance.now(), active: true };
  requestAnimationFrame(frame);
  // Same request, same moment: both sides start in the same task.
  const runs = sides.map((s) => s.el.ask(structuredClone(request)));
  const statuses = await Promise.all(runs);
  run.active = false;
  const t = performance.now() - run.t0;
  // The reference runs after both sides, so that rendering it (all at
  // once: no delays) never holds up what the sides measure.
  await reference.ask(structuredClone(request));
  for (const s of sides) {
    sample(s, t);
    s.track.end ||= t;
    if (s.track.pendingResume !== null && s.el.status === "complete") {
      s.track.resumes++;
      s.track.pendingResume = null;
    }
  }
  draw();
  fillTable(true);
  go.disabled = false;
  stop.disabled = true;
  const want = reference.text;
  const [a, b] = sides.map((s) => s.el.text);
  const [sa, sb] = sides.map((s, i) => (typeof statuses[i] === "string" ? statuses[i] : s.el.status));
  const same = a === b;
  const whole = a === want && b === want;
  verdict.dataset.ok = String(same && whole && sa === "complete" && sb === "complete");
  verdict.textContent =
    `SSE ${sa}, ${a.length} chars; WebSocket ${sb}, ${b.length} chars; ` +
    (same ? "texts identical" : "texts differ") + "; " +
    (whole ? "both equal the fault-free reference." : `reference has ${want.length} chars.`);
  const summary = sides.map((s) => `${s.id === "sse" ? "SSE" : "WebSocket"}: ${s.track.tokens} tokens by ${(s.track.end / 1000).toFixed(1)} s, ${s.track.reconnects} reconnects`);
  document.getElementById("chart-desc").textContent = `Tokens received over time. ${summary.join("; ")}. The table below has the figures.`;
  document.body.dataset.done = "1";
});

stop.addEventListener("click", () => { for (const s of sides) s.el.stop(); });

fillTable(false);
