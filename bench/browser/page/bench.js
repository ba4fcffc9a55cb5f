// One run of the browser benchmark: one renderer, one answer streamed over
// a local SSE endpoint at a fixed token rate. The Go driver (../main.go)
// traces the main thread; this page records frames and long tasks and sets
// window.bench when the answer has ended.
//
//   ?renderer=trickle  the widget, <trickle-answer>, reading the stream itself
//                      (in a Web Worker where the built widget has one)
//   ?renderer=trickle-off  the same with worker="off": Go on the page's thread
//   ?renderer=marked   fetch + SSE parse, then per animation frame
//                      out.innerHTML = marked.parse(whole text)  (full re-render)
//   ?renderer=smd      fetch + SSE parse, then per animation frame the new text
//                      goes to streaming-markdown's parser_write (incremental)
//   ?renderer=streamdown  fetch + SSE parse, then per animation frame the
//                      whole text so far to Streamdown in a React 19 root,
//                      committed with flushSync (react-peers.js, bundled)
//   ?renderer=tanstack the same with TanStack Markdown's React <Markdown>
//                      and its streaming extension
//   ?renderer=text     fetch + SSE parse, then per animation frame the new text
//                      appended as text nodes, a new block at each blank line,
//                      no markdown at all: the floor
//                      any renderer that updates the screen once per frame pays
import { readSSE } from "/shared/sse.js";

const params = new URLSearchParams(location.search);
const renderer = params.get("renderer");
const src = params.get("src");
// Where the widget's files are (the relay's /trickle/, another origin).
const widget = params.get("widget") ?? "/trickle/";
// probe=marks: the answer is numbered words (w00000 w00001 …); after each
// painted frame, note when it was painted (page clock, epoch ms) and the
// highest word on screen, for token arrival → painted.
const probe = params.get("probe") === "marks";
// cold: ask as soon as the page has parsed (DOMContentLoaded), without
// waiting for the widget to be ready, and measure from there.
const cold = params.get("cold") === "1";
// answers=N: N answers at once on the page, each its own stream of the
// same answer (the widget: N elements; the peers: N boxes); the run ends
// with the last, and each one's end is noted.
const answers = Math.max(1, Number(params.get("answers") ?? 1) || 1);
const ends = [];
// srcs: each answer's stream URL (a port of its own: a browser opens at
// most 6 connections to one host and port); src for every one without it.
const srcs = (params.get("srcs") ?? "").split(" ").filter(Boolean);
const srcOf = (i) => srcs[i] ?? src;
// check=code: after the end mark, note the text of the answer's last
// <pre><code> (the open-code-fence answers: the driver checks the code).
const checkCode = params.get("check") === "code";
const out = document.getElementById("out");
const request = { model: "bench", stream: true, messages: [{ role: "user", content: "bench" }] };

const longTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longTasks.push({ start: e.startTime, duration: e.duration });
}).observe({ type: "longtask", buffered: true });

// Work on the DOM: the mutation records in the answer's box and the nodes
// they added or removed, from the start mark to the end of the answer.
let mutations = 0, nodesTouched = 0;
new MutationObserver((records) => {
  if (!counting) return;
  mutations += records.length;
  for (const r of records) nodesTouched += r.addedNodes.length + r.removedNodes.length + (r.type === "childList" ? 0 : 1);
}).observe(out, { childList: true, characterData: true, attributes: true, subtree: true });

// Frames: count animation frames and the longest interval between two,
// from the start mark to the end of the answer, and the frames in which
// the box changed (a mutation since the frame before).
let frames = 0, maxGap = 0, last = 0, counting = false, changedFrames = 0, seen = 0;
function frame(t) {
  if (!counting) return;
  if (last) maxGap = Math.max(maxGap, t - last);
  last = t;
  frames++;
  if (mutations !== seen) {
    seen = mutations;
    changedFrames++;
  }
  requestAnimationFrame(frame);
}

// peer streams with readSSE and calls render(text, delta) once per
// animation frame while new text has arrived, then once more at the end;
// like the widget, it keeps the newest text in view.
// finished ends the measured stream (the bench-end mark), then yields a
// task: what the benchmark reads back afterwards (the text, the HTML's
// length: serializing a 100 KB answer takes milliseconds) is its own work,
// not counted in the renderer's last frame.
let endedAt = 0;
async function finished() {
  endedAt = performance.now();
  counting = false;
  performance.mark("bench-end");
  await new Promise((r) => setTimeout(r, 0));
}

async function peer(render, finish, box = out, url = src) {
  out.classList.add("peer");
  let text = "", pending = "", scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending) return;
    text += pending;
    const delta = pending;
    pending = "";
    render(text, delta);
    box.scrollTop = box.scrollHeight;
  };
  await readSSE(url, request, (d) => {
    pending += d;
    if (!scheduled) { scheduled = true; requestAnimationFrame(flush); }
  });
  flush();
  finish?.();
  ends.push(performance.now());
  return text;
}

// many runs one(box) for each of the page's answers at once; the texts
// must all be the answer, and the first is returned.
async function many(one) {
  const boxes = [out];
  if (answers > 1) {
    out.classList.add("many");
    for (let i = 0; i < answers; i++) {
      const b = document.createElement("div");
      b.className = "answer";
      out.append(b);
      boxes[i] = b;
    }
  }
  const texts = await Promise.all(boxes.map((b, i) => one(b, srcOf(i))));
  if (texts.some((t) => t !== texts[0])) throw new Error("the answers on the page differ");
  return texts[0];
}

// The painted-frame probe: a mutation of the answer's box marks the frame
// dirty; a message posted then runs after that frame's rendering (the
// renderers write in requestAnimationFrame, and style, layout and paint
// follow in the same task), and notes the time and the last word shown.
const painted = [];
function watch(box) {
  if (!probe) return;
  let pending = false, top = -1;
  const ch = new MessageChannel();
  ch.port1.onmessage = () => {
    pending = false;
    const s = box.textContent;
    const i = s.lastIndexOf("w");
    for (let j = i; j >= 0; j = s.lastIndexOf("w", j - 1)) {
      const m = /^w(\d{5})/.exec(s.slice(j, j + 6));
      if (m) {
        const n = +m[1];
        if (n > top) {
          top = n;
          painted.push([performance.timeOrigin + performance.now(), n]);
        }
        break;
      }
    }
  };
  new MutationObserver(() => {
    if (!pending) { pending = true; ch.port2.postMessage(0); }
  }).observe(box, { childList: true, characterData: true, subtree: true });
}

// watchEnd notes when the answer's text on the page last changed (page
// clock, epoch ms): in the boxes that hold the answers' content, childList
// and characterData only, so the widget's announcer, notices and
// attributes are not counted. The benchmark holds it against when the
// server flushed the last token: the final DOM after the last token.
let lastChangeAt = 0;
function watchEnd(boxes) {
  const mo = new MutationObserver(() => { lastChangeAt = performance.timeOrigin + performance.now(); });
  for (const b of boxes) mo.observe(b, { childList: true, characterData: true, subtree: true });
}

// clockOffset estimates the server's clock minus the page's (epoch ms):
// the round trip with the least delay of 15.
async function clockOffset() {
  let best = null;
  for (let i = 0; i < 15; i++) {
    const t0 = performance.timeOrigin + performance.now();
    const server = +(await (await fetch("/clock", { cache: "no-store" })).text());
    const t1 = performance.timeOrigin + performance.now();
    if (!best || t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: server - (t0 + t1) / 2 };
  }
  return best;
}

async function setup() {
  // trickle-base: the widget of another build (the comparison mode,
  // -base), served from its own relay.
  if (renderer === "trickle" || renderer === "trickle-off" || renderer === "trickle-base") {
    const mod = await import(widget + "trickle.js");
    const els = [];
    for (let i = 0; i < answers; i++) {
      const el = document.createElement("trickle-answer");
      el.setAttribute("endpoint", srcOf(i));
      el.setAttribute("announce", "sentences");
      // The page's first element decides where Go runs: attribute first.
      if (renderer === "trickle-off") el.setAttribute("worker", "off");
      out.append(el);
      els.push(el);
    }
    const el = els[0];
    if (!cold) await mod.ready();
    watch(el.querySelector('[data-trickle="content"]') ?? el);
    watchEnd(els.map((e) => e.querySelector('[data-trickle="content"]') ?? e));
    return async () => {
      const results = await Promise.all(els.map((e) => e.ask(request).then((r) => (ends.push(performance.now()), r))));
      const result = results.find((r) => r !== "complete") ?? results[0];
      if (els.some((e) => e.text !== el.text)) throw new Error("the answers on the page differ");
      await finished();
      const m = el.metrics || {};
      return {
        text: el.text, status: typeof result === "string" ? result : el.status,
        html: el.querySelector('[data-trickle="content"]').innerHTML.length,
        own: { frames: m.frames, frameMaxMs: m.frame_max_ms, frameTotalMs: m.frame_total_ms },
        thread: m.thread ?? "main (no worker in this build)",
      };
    };
  }
  watch(out);
  watchEnd([out]);
  if (renderer === "marked") {
    const { marked } = await import("/peers/marked.js");
    return async () => {
      const text = await peer((t) => { out.innerHTML = marked.parse(t); });
      await finished();
      return { text, status: "complete", html: out.innerHTML.length };
    };
  }
  if (renderer === "smd") {
    const smd = await import("/peers/smd.js");
    return async () => {
      const text = await many((box, url) => {
        const parser = smd.parser(smd.default_renderer(box));
        return peer((_, delta) => smd.parser_write(parser, delta), () => smd.parser_end(parser), box, url);
      });
      await finished();
      return { text, status: "complete", html: out.innerHTML.length };
    };
  }
  if (renderer === "streamdown" || renderer === "tanstack") {
    const { mount } = await import("/peers/react.js");
    return async () => {
      const text = await many((box, url) => {
        const root = mount(renderer, box);
        return peer((t) => root.update(t), () => root.finish(), box, url);
      });
      await finished();
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
      await finished();
      return { text, status: "complete", html: out.innerHTML.length };
    };
  }
  throw new Error(`unknown renderer ${renderer}`);
}

async function main() {
  try {
    const run = await setup();
    if (cold) {
      if (document.readyState === "loading") await new Promise((r) => addEventListener("DOMContentLoaded", r));
    } else {
      // Let loading, compiling and any idle-time warm-up finish: the goals
      // are about streaming, "after load".
      await new Promise((r) => setTimeout(r, 1500));
    }
    const loadedAt = performance.now();
    performance.mark("bench-start");
    counting = true;
    requestAnimationFrame(frame);
    const t0 = performance.now();
    const result = await run();
    const t1 = endedAt;
    let code = null;
    if (checkCode) {
      const box = out.querySelector('[data-trickle="content"]') ?? out;
      const codes = box.querySelectorAll("pre code");
      if (codes.length) code = codes[codes.length - 1].textContent;
    }
    window.bench = {
      done: true, renderer, status: result.status, textLength: result.text.length, htmlLength: result.html,
      durationMs: t1 - t0, frames, fps: frames / ((t1 - t0) / 1000), maxFrameGapMs: maxGap,
      own: result.own ?? null, thread: result.thread ?? null,
      mutations, nodesTouched, changedFrames, code,
      answers, endsMs: ends.map((e) => e - t0),
      askedAt: performance.timeOrigin + t0, painted, clock: await clockOffset(), lastChangeAt,
      longTasksAfterLoad: longTasks.filter((l) => l.start >= loadedAt).length,
      longestLongTaskMs: Math.max(0, ...longTasks.filter((l) => l.start >= loadedAt).map((l) => l.duration)),
    };
  } catch (err) {
    window.bench = { done: true, error: String(err?.stack ?? err) };
  }
}
main();
