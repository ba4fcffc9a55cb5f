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
const cost = document.getElementById("cost");

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

// What a Stop cost: the relay's count of the tokens generated up to the
// cancel, which reaches the element after the end (trickle-usage).
el.addEventListener("trickle-usage", (e) => {
  const { output_tokens: n, estimated } = e.detail.usage;
  cost.textContent = `Stopped after ${n} ${n === 1 ? "token" : "tokens"}` + (estimated ? " (counted by the relay)." : ".");
  cost.hidden = false;
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
  cost.hidden = true;
  startWatch();
  const status = await start();
  document.body.dataset.lastStatus = typeof status === "string" ? status : el.status;
}

stop.addEventListener("click", () => el.stop());
// Retry asks again with the last request: same prompt, same endpoint.
retry.addEventListener("click", () => answer(() => el.retry()));
