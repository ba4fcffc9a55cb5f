// One run of the browser benchmark: one renderer, one answer streamed over
// a local SSE endpoint at a fixed token rate. The Go driver (../main.go)
// traces the main thread; this page records frames and long tasks and sets
// window.bench when the answer has ended.
//
//   ?renderer=trickle  the widget, <trickle-answer>, reading the stream itself
//   ?renderer=marked   fetch + SSE parse, then per animation frame
//                      out.innerHTML = marked.parse(whole text)  (full re-render)
//   ?renderer=smd      fetch + SSE parse, then per animation frame the new text
//                      goes to streaming-markdown's parser_write (incremental)
//   ?renderer=text     fetch + SSE parse, then per animation frame the new text
//                      appended as text nodes, a new block at each blank line,
//                      no markdown at all: the floor
//                      any renderer that updates the screen once per frame pays
const params = new URLSearchParams(location.search);
const renderer = params.get("renderer");
const src = params.get("src");
const out = document.getElementById("out");
const request = { model: "bench", stream: true, messages: [{ role: "user", content: "bench" }] };

const longTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longTasks.push({ start: e.startTime, duration: e.duration });
}).observe({ type: "longtask", buffered: true });

// Frames: count animation frames and the longest interval between two,
// from the start mark to the end of the answer.
let frames = 0, maxGap = 0, last = 0, counting = false;
function frame(t) {
  if (!counting) return;
  if (last) maxGap = Math.max(maxGap, t - last);
  last = t;
  frames++;
  requestAnimationFrame(frame);
}

// readSSE is the plain client the peers get: fetch, decode, split events,
// JSON.parse each OpenAI chunk, hand over the content delta.
async function readSSE(url, onDelta) {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request) });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of block.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") return;
        const delta = JSON.parse(data).choices?.[0]?.delta?.content;
        if (delta) onDelta(delta);
      }
    }
  }
}

// peer streams with readSSE and calls render(text, delta) once per
// animation frame while new text has arrived, then once more at the end;
// like the widget, it keeps the newest text in view.
async function peer(render, finish) {
  out.classList.add("peer");
  let text = "", pending = "", scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending) return;
    text += pending;
    const delta = pending;
    pending = "";
    render(text, delta);
    out.scrollTop = out.scrollHeight;
  };
  await readSSE(src, (d) => {
    pending += d;
    if (!scheduled) { scheduled = true; requestAnimationFrame(flush); }
  });
  flush();
  finish?.();
  return text;
}

async function setup() {
  if (renderer === "trickle") {
    const mod = await import("/trickle/trickle.js");
    await mod.ready();
    const el = document.createElement("trickle-answer");
    el.setAttribute("endpoint", src);
    el.setAttribute("announce", "sentences");
    out.append(el);
    return async () => {
      const result = await el.ask(request);
      const m = el.metrics || {};
      return {
        text: el.text, status: typeof result === "string" ? result : el.status,
        html: el.querySelector('[data-trickle="content"]').innerHTML.length,
        own: { frames: m.frames, frameMaxMs: m.frame_max_ms, frameTotalMs: m.frame_total_ms },
      };
    };
  }
  if (renderer === "marked") {
    const { marked } = await import("/peers/marked.js");
    return async () => {
      const text = await peer((t) => { out.innerHTML = marked.parse(t); });
      return { text, status: "complete", html: out.innerHTML.length };
    };
  }
  if (renderer === "smd") {
    const smd = await import("/peers/smd.js");
    const parser = smd.parser(smd.default_renderer(out));
    return async () => {
      const text = await peer((_, delta) => smd.parser_write(parser, delta), () => smd.parser_end(parser));
      return { text, status: "complete", html: out.innerHTML.length };
    };
  }
  if (renderer === "text") {
    // Not a markdown renderer: the least a page can do to show the streamed
    // text once per frame (one text node appended, the box pre-wrapped). What
    // it costs is the browser's own per-frame work — style, layout, paint,
    // the commit — plus the network reads, with no parsing at all.
    // A blank line starts a new block, so that layout, as for rendered
    // markdown, redoes only the last paragraph, not one ever-growing one.
    out.classList.add("text");
    let block = document.createElement("div"), prevNL = false;
    out.append(block);
    const put = (delta) => {
      let from = 0;
      for (let i = 0; i < delta.length; i++) {
        if (delta[i] !== "\n") { prevNL = false; continue; }
        if (prevNL) {
          block.append(delta.slice(from, i));
          block = document.createElement("div");
          out.append(block);
          from = i + 1;
        }
        prevNL = !prevNL;
      }
      block.append(delta.slice(from));
    };
    return async () => {
      const text = await peer((_, delta) => put(delta));
      return { text, status: "complete", html: out.innerHTML.length };
    };
  }
  throw new Error(`unknown renderer ${renderer}`);
}

async function main() {
  try {
    const run = await setup();
    // Let loading, compiling and any idle-time warm-up finish: the goals are
    // about streaming, "after load".
    await new Promise((r) => setTimeout(r, 1500));
    const loadedAt = performance.now();
    performance.mark("bench-start");
    counting = true;
    requestAnimationFrame(frame);
    const t0 = performance.now();
    const result = await run();
    const t1 = performance.now();
    counting = false;
    performance.mark("bench-end");
    window.bench = {
      done: true, renderer, status: result.status, textLength: result.text.length, htmlLength: result.html,
      durationMs: t1 - t0, frames, fps: frames / ((t1 - t0) / 1000), maxFrameGapMs: maxGap,
      own: result.own ?? null,
      longTasksAfterLoad: longTasks.filter((l) => l.start >= loadedAt).length,
      longestLongTaskMs: Math.max(0, ...longTasks.filter((l) => l.start >= loadedAt).map((l) => l.duration)),
    };
  } catch (err) {
    window.bench = { done: true, error: String(err?.stack ?? err) };
  }
}
main();
