// Helpers shared by the example pages. Everything about streaming lives in
// the widget (<trickle-answer>); this file only formats what it reports.

// The metrics the pages show, in order: [label, key, unit, zero means "not
// yet", what the label stands for]. Keys are the fields of the element's
// `metrics` property. TTFT counts the first token of any kind (thinking
// included); TTFAT the first token of the answer itself.
export const METRICS = [
  ["TTFB", "ttfb_ms", "ms", true, "time to first byte"],
  ["TTFT", "ttft_ms", "ms", true, "time to first token, thinking included"],
  ["TTFAT", "ttfat_ms", "ms", true, "time to first answer token, after any thinking"],
  ["gap p50", "gap_p50_ms", "ms"],
  ["gap p95", "gap_p95_ms", "ms"],
  ["gap max", "gap_max_ms", "ms"],
  ["tokens/s", "tokens_per_s", ""],
  ["tokens", "tokens", ""],
  ["bytes", "bytes", "B"],
  ["resumed", "reconnects", "×"],
  ["longest frame", "frame_max_ms", "ms"],
  ["delivery", "buffering", ""],
];

function show(v, unit, zeroIsNone) {
  if (v === undefined || v === null || Number.isNaN(v) || (zeroIsNone && v === 0)) return "–";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (typeof v === "number") {
    if (unit === "B") return v < 10240 ? `${v} B` : `${(v / 1024).toFixed(1)} KB`;
    const n = Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 1 : 0);
    return unit ? `${n} ${unit}` : n;
  }
  return String(v);
}

// renderMetrics fills a <dl class="metrics"> with the element's metrics.
export function renderMetrics(dl, metrics) {
  const m = metrics || {};
  if (!dl.dataset.built) {
    dl.dataset.built = "1";
    for (const [label, key, , , title] of METRICS) {
      const div = document.createElement("div");
      div.innerHTML = `<dt></dt><dd data-key="${key}">–</dd>`;
      div.firstChild.textContent = label;
      if (title) div.firstChild.title = title;
      dl.append(div);
    }
  }
  for (const [, key, unit, zeroIsNone] of METRICS) {
    dl.querySelector(`dd[data-key="${key}"]`).textContent = show(m[key], unit, zeroIsNone);
  }
}

// watch keeps `update()` running once per animation frame from the start
// of an answer to its end, so the numbers on screen stay live without a
// per-token event. The returned function starts it early (before the
// element has said trickle-start).
export function watch(el, update) {
  let live = false;
  let running = false;
  const tick = () => {
    update();
    if (live) requestAnimationFrame(tick);
    else running = false;
  };
  const start = () => {
    live = true;
    if (!running) { running = true; requestAnimationFrame(tick); }
  };
  el.addEventListener("trickle-start", start);
  el.addEventListener("trickle-end", () => { live = false; update(); });
  return start;
}

// setStatus shows a status word in a .pill element.
export function setStatus(pill, status) {
  pill.textContent = status;
  pill.dataset.status = status;
}

// simQuery turns a form's simulated-model fields (named like the relay's
// query parameters) into a query string, leaving out empty ones.
export function simQuery(form) {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData(form)) {
    if (k.startsWith("_") || v === "") continue;
    q.set(k, String(v));
  }
  return q.toString();
}

// wsURL is the relay's WebSocket endpoint on this page's origin.
export function wsURL(query) {
  const u = new URL("/v1/ws", location.href);
  u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  u.search = query;
  return u.toString();
}
