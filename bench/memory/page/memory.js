// One run of the memory benchmark: one renderer, one scenario, on a page
// served cross-origin isolated (COOP same-origin, COEP require-corp, CORP
// on every file), so that performance.measureUserAgentSpecificMemory()
// is there. The Go driver (../main.go) reads window.bench when it is set.
//
//   ?renderer=trickle   <trickle-answer> / <trickle-chat> (Go in its Web Worker)
//   ?renderer=smd       streaming-markdown, the new text per animation frame
//   ?scenario=one       one answer (?sample=, e.g. sample-100k) streamed
//   ?scenario=ten       ten answers (?sample=, e.g. sample-20k) one after
//                       another on the page, each in an element/box of its own
//   ?scenario=thread    (trickle only) a <trickle-chat> restored from
//                       ?turns= user + assistant turns (the driver serves
//                       them at /thread.json), no request
//   ?settle=ms          how long the page is left idle before the measurement
//   ?gap=ms             the pause between the ten answers (0: back to back)
import { readSSE } from "/shared/sse.js";

const params = new URLSearchParams(location.search);
const renderer = params.get("renderer");
const scenario = params.get("scenario");
const sample = params.get("sample");
const settle = Number(params.get("settle") ?? 3000);
const gap = Number(params.get("gap") ?? 0);
const out = document.getElementById("out");
const request = { model: "bench", stream: true, messages: [{ role: "user", content: "bench" }] };
const src = () => "/sse?sample=" + encodeURIComponent(sample);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// smdAnswer streams one answer into box with streaming-markdown, the new
// text once per animation frame (as bench/browser does).
async function smdAnswer(smd, box) {
  const parser = smd.parser(smd.default_renderer(box));
  let text = "", pending = "", scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending) return;
    text += pending;
    smd.parser_write(parser, pending);
    pending = "";
    box.scrollTop = box.scrollHeight;
  };
  await readSSE(src(), request, (d) => {
    pending += d;
    if (!scheduled) { scheduled = true; requestAnimationFrame(flush); }
  });
  flush();
  smd.parser_end(parser);
  return text.length;
}

async function run() {
  if (renderer === "trickle") {
    const mod = await import("/trickle/trickle.js");
    await mod.ready();
    await sleep(1500); // loading and idle-time warm-up, as bench/browser waits
    const base = await mod.stats();
    let chars = 0;
    if (scenario === "thread") {
      const messages = await (await fetch("/thread.json")).json();
      const chat = document.createElement("trickle-chat");
      out.append(chat);
      chat.messages = messages;
      const want = messages.filter((m) => m.role === "assistant").length;
      // Shown: every assistant turn has its rendered content.
      for (;;) {
        const answers = chat.querySelectorAll("trickle-answer");
        const shown = [...answers].filter((a) => a.querySelector('[data-trickle="content"]')?.childElementCount > 0).length;
        if (answers.length === want && shown === want) break;
        await sleep(100);
      }
      chars = messages.reduce((n, m) => n + m.content.length, 0);
    } else {
      const n = scenario === "ten" ? 10 : 1;
      for (let i = 0; i < n; i++) {
        const el = document.createElement("trickle-answer");
        el.setAttribute("endpoint", src());
        el.className = "answer";
        out.append(el);
        const status = await el.ask(request);
        if (status !== "complete") throw new Error(`answer ${i + 1}: ${status}`);
        chars += el.text.length;
        if (gap && i < n - 1) await sleep(gap);
      }
    }
    const ended = await mod.stats();
    await sleep(settle);
    const idle = await mod.stats();
    return { chars, base, ended, idle };
  }
  if (renderer === "smd") {
    if (scenario === "thread") throw new Error("streaming-markdown has no thread");
    const smd = await import("/peers/smd.js");
    await sleep(1500);
    let chars = 0;
    const n = scenario === "ten" ? 10 : 1;
    for (let i = 0; i < n; i++) {
      const box = document.createElement("div");
      box.className = "answer";
      out.append(box);
      chars += await smdAnswer(smd, box);
      if (gap && i < n - 1) await sleep(gap);
    }
    await sleep(settle);
    return { chars };
  }
  throw new Error(`unknown renderer ${renderer}`);
}

// measure sums measureUserAgentSpecificMemory's breakdown by the scope
// of its attribution (Window: the page; DedicatedWorkerGlobalScope: the
// widget's worker; none: shared or not attributed) and by type.
async function measure() {
  if (!crossOriginIsolated) throw new Error("the page is not cross-origin isolated");
  const m = await performance.measureUserAgentSpecificMemory();
  const byScope = {}, byType = {};
  for (const b of m.breakdown) {
    const scope = b.attribution.length ? b.attribution.map((a) => a.scope).join("+") : "(unattributed)";
    byScope[scope] = (byScope[scope] ?? 0) + b.bytes;
    const type = b.types.join("+") || "(none)";
    byType[type] = (byType[type] ?? 0) + b.bytes;
  }
  return { total: m.bytes, byScope, byType };
}

async function main() {
  try {
    const r = await run();
    const mem = await measure();
    window.bench = {
      done: true, renderer, scenario, chars: r.chars, memory: mem,
      jsHeapUsed: performance.memory?.usedJSHeapSize ?? 0,
      jsHeapTotal: performance.memory?.totalJSHeapSize ?? 0,
      nodes: document.getElementsByTagName("*").length,
      stats: r.base ? { base: r.base, ended: r.ended, idle: r.idle } : null,
    };
  } catch (err) {
    window.bench = { done: true, error: String(err?.stack ?? err) };
  }
}
main();
