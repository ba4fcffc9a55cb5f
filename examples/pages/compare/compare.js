// The comparison page: one request, two transports, one hidden fault-free
// reference. All streaming (and all recovery) is the widget's.
import { renderMetrics, watch, setStatus, wsURL } from "../common.js";

const form = document.getElementById("sim");
const go = document.getElementById("go");
const stop = document.getElementById("stop");
const verdict = document.getElementById("verdict");
const reference = document.getElementById("reference");
const sides = ["sse", "websocket"].map((id) => {
  const el = document.getElementById(id);
  const panel = document.querySelector(`[data-side="${id}"]`);
  const dl = panel.querySelector("dl.metrics");
  const pill = panel.querySelector(".pill");
  const update = () => renderMetrics(dl, el.metrics);
  const start = watch(el, update);
  update();
  el.addEventListener("trickle-start", () => setStatus(pill, "streaming"));
  el.addEventListener("trickle-end", (e) => setStatus(pill, e.detail?.status ?? el.status));
  return { id, el, start };
});

// query builds the relay's query string for the simulated model; the fault
// fields only go in for the chosen fault.
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
  const q = query(true);
  for (const s of sides) aim(s.el, q);
  aim(reference, query(false));
  const request = {
    model: "trickle-sim",
    stream: true,
    messages: [{ role: "user", content: "Show me how each transport copes." }],
  };
  go.disabled = true;
  stop.disabled = false;
  verdict.textContent = "Streaming…";
  delete verdict.dataset.ok;
  // Same request, same moment: both sides start in the same task.
  const runs = sides.map((s) => { s.start(); return s.el.ask(structuredClone(request)); });
  const ref = reference.ask(structuredClone(request));
  const statuses = await Promise.all(runs);
  await ref;
  go.disabled = false;
  stop.disabled = true;
  const want = reference.text;
  const [a, b] = sides.map((s) => s.el.text);
  const [sa, sb] = sides.map((s, i) => statuses[i]?.status ?? (typeof statuses[i] === "string" ? statuses[i] : s.el.status));
  const same = a === b;
  const whole = a === want && b === want;
  verdict.dataset.ok = String(same && whole && sa === "complete" && sb === "complete");
  verdict.textContent =
    `SSE ${sa}, ${a.length} chars; WebSocket ${sb}, ${b.length} chars; ` +
    (same ? "texts identical" : "texts differ") + "; " +
    (whole ? "both equal the fault-free reference." : `reference has ${want.length} chars.`);
  document.body.dataset.done = "1";
});

stop.addEventListener("click", () => { for (const s of sides) s.el.stop(); });
