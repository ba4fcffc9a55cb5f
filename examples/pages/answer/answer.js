// The answer page: a form drives one <trickle-answer>; the element does all
// the streaming, this only wires buttons and shows its status and metrics.
import { renderMetrics, watch, setStatus, simQuery, wsURL } from "../common.js";

const form = document.getElementById("ask");
const el = document.getElementById("answer");
const stop = document.getElementById("stop");
const go = document.getElementById("go");
const retry = document.getElementById("retry");
const pill = document.getElementById("status");
const dl = document.getElementById("metrics");

const update = () => renderMetrics(dl, el.metrics);
const startWatch = watch(el, update);
update();

el.addEventListener("trickle-start", () => setStatus(pill, "streaming"));
el.addEventListener("trickle-end", (e) => {
  setStatus(pill, e.detail?.status ?? el.status);
  go.disabled = false;
  retry.disabled = false;
  stop.disabled = true;
});

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  await customElements.whenDefined("trickle-answer");
  const q = simQuery(form);
  const transport = form.elements._transport.value;
  el.setAttribute("transport", transport);
  el.setAttribute("endpoint", "/v1/chat/completions" + (q ? "?" + q : ""));
  el.setAttribute("ws-endpoint", wsURL(q));
  await answer(() => el.ask(form.elements._prompt.value));
});

// answer runs one request (ask or retry) and notes its final status.
async function answer(start) {
  go.disabled = true;
  retry.disabled = true;
  stop.disabled = false;
  delete document.body.dataset.lastStatus;
  startWatch();
  const status = await start();
  document.body.dataset.lastStatus = typeof status === "string" ? status : el.status;
}

stop.addEventListener("click", () => el.stop());
// Retry asks again with the last request: same prompt, same endpoint.
retry.addEventListener("click", () => answer(() => el.retry()));
