// One run of the long-thread benchmark (../thread.go): a <trickle-chat>
// is given a stored conversation (chat.messages, ?turns=N questions each
// with a markdown answer of about 2.5 KB) and this page notes when the
// last answer's text was first painted, when every answer was shown, and
// then scrolls the thread up from its end at a steady pace,
// counting frames. The Go driver traces the main thread between the
// bench-start and bench-end marks and reads window.bench.
const params = new URLSearchParams(location.search);
const widget = params.get("widget") ?? "/trickle/";
const turns = Number(params.get("turns") ?? 200);
const scrollMs = Number(params.get("scroll_ms") ?? 3000);
const scrollSpeed = Number(params.get("scroll_px_s") ?? 4000);
const out = document.getElementById("out");

const longTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) longTasks.push({ start: e.startTime, duration: e.duration });
}).observe({ type: "longtask", buffered: true });

// afterPaint resolves after the next frame's rendering: a message posted
// from an animation frame callback runs once that frame is painted.
function afterPaint() {
  return new Promise((resolve) => {
    requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => resolve(performance.now());
      ch.port2.postMessage(0);
    });
  });
}

// lastPainted resolves with the time the thread's last answer first had
// text on screen (the paint after the mutation that gave it text).
function lastPainted(chat) {
  return new Promise((resolve) => {
    let waiting = false;
    const check = () => {
      const last = [...chat.querySelectorAll('[data-trickle-chat="turn"]')].at(-1);
      const c = last?.querySelector('trickle-answer [data-trickle="content"]');
      return !!c && c.textContent.trim().length > 0;
    };
    const mo = new MutationObserver(() => {
      if (waiting || !check()) return;
      waiting = true;
      mo.disconnect();
      afterPaint().then(resolve);
    });
    mo.observe(chat, { childList: true, subtree: true, characterData: true });
  });
}

// allShown resolves when every answer of the thread shows its stored
// message (its status is no longer idle), polled ten times a second.
function allShown(chat, answers) {
  return new Promise((resolve) => {
    const poll = () => {
      const as = chat.querySelectorAll("trickle-answer");
      if (as.length === answers && [...as].every((a) => a.status !== "idle")) resolve(performance.now());
      else setTimeout(poll, 100);
    };
    poll();
  });
}

// scroll moves the thread from where it is towards its other end (its
// start from its end) at speed px a second, for ms (a reader flinging
// through the thread: about ten turns a second), one step an animation
// frame, and counts the frames and the longest gap.
function scroll(box, ms, speed) {
  return new Promise((resolve) => {
    const from = box.scrollTop;
    const far = from > 0 ? 0 : box.scrollHeight - box.clientHeight;
    const to = from + Math.sign(far - from) * Math.min(Math.abs(far - from), (speed * ms) / 1000);
    let start = 0, last = 0, frames = 0, maxGap = 0;
    const step = (t) => {
      if (!start) start = t;
      else {
        frames++;
        maxGap = Math.max(maxGap, t - last);
      }
      last = t;
      const f = Math.min(1, (t - start) / ms);
      box.scrollTop = from + (to - from) * f;
      if (f < 1) requestAnimationFrame(step);
      else resolve({ fps: frames / ((t - start) / 1000), maxGap, frames, from: Math.abs(to - from) });
    };
    requestAnimationFrame(step);
  });
}

async function main() {
  try {
    const msgs = await (await fetch(`/thread-messages?turns=${turns}`)).json();
    const mod = await import(widget + "trickle.js");
    await customElements.whenDefined("trickle-chat");
    const chat = document.createElement("trickle-chat");
    chat.setAttribute("endpoint", "/none");
    out.append(chat);
    await mod.ready();
    await new Promise((r) => setTimeout(r, 1500));
    const loadedAt = performance.now();
    const answers = msgs.filter((m) => m.role === "assistant").length;
    const painted = lastPainted(chat);
    performance.mark("bench-start");
    const t0 = performance.now();
    chat.messages = msgs;
    const setMs = performance.now() - t0;
    const lastPaintMs = (await painted) - t0;
    const shownMs = (await allShown(chat, answers)) - t0;
    // What the thread shows once restored: its end, or its start.
    const box = chat.querySelector('[data-trickle-chat="thread"]');
    await afterPaint();
    const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight <= 8;
    const scrollAtMs = performance.now() - t0;
    const sc = await scroll(box, scrollMs, scrollSpeed);
    performance.mark("bench-end");
    // The check in a task of its own, after the mark: not the thread's.
    await new Promise((r) => setTimeout(r, 0));
    const same = JSON.stringify(chat.messages) === JSON.stringify(msgs);
    window.bench = {
      done: true, status: same ? "complete" : "messages differ", textLength: 0, turns, answers,
      setMs, lastPaintMs, shownMs, atEnd, scrollAtMs, scrollFps: sc.fps, scrollMaxGapMs: sc.maxGap, scrollFrames: sc.frames, scrolledPx: sc.from,
      nodes: document.getElementsByTagName("*").length,
      heapMB: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : 0,
      longTasksAfterLoad: longTasks.filter((l) => l.start >= loadedAt).length,
      longestLongTaskMs: Math.max(0, ...longTasks.filter((l) => l.start >= loadedAt).map((l) => l.duration)),
    };
  } catch (err) {
    window.bench = { done: true, error: String(err?.stack ?? err) };
  }
}
main();
