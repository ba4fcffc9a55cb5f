// Following the answer (follow.js), on a scroll box of numbers: the
// browser's layout stands in as a fake element whose geometry reads are
// counted, and a ResizeObserver the test fires where the browser would
// (after its layout of a frame).

import { test } from "node:test";
import assert from "node:assert/strict";
import { follow } from "../follow.js";

// box is a scroll box: content of height h in a viewport of 100 px;
// reads counts the geometry reads, and dirty marks when layout is not
// clean (a read then would force one).
function box() {
  const listeners = {};
  const b = {
    h: 100, top: 0, client: 100, reads: 0, forced: 0, dirty: false,
    read() {
      b.reads++;
      if (b.dirty) b.forced++;
      b.dirty = false;
    },
    get scrollHeight() { b.read(); return b.h; },
    get clientHeight() { b.read(); return b.client; },
    get scrollTop() { b.read(); return b.top; },
    set scrollTop(v) { b.read(); b.top = Math.max(0, Math.min(v, b.h - b.client)); },
    addEventListener(type, f) { (listeners[type] ??= []).push(f); },
    removeEventListener(type, f) { listeners[type] = (listeners[type] ?? []).filter((g) => g !== f); },
    fire(type) { for (const f of listeners[type] ?? []) f(); },
  };
  return b;
}

let observed = [];
globalThis.ResizeObserver = class {
  constructor(f) { this.f = f; observed.push(this); }
  observe() {}
  disconnect() { observed = observed.filter((o) => o !== this); }
};
const layout = () => { for (const o of observed) o.f(); };

// frame is one animation frame in which the answer grew by px: the
// scroll event of the last frame's scroll (if it moved), the frame's DOM
// write, the browser's layout, then the ResizeObserver.
function frame(b, px, { scrolled = false } = {}) {
  if (scrolled) b.fire("scroll");
  b.h += px;
  b.dirty = true; // the frame's patch
  b.dirty = false; // the browser's own layout
  layout();
}

test("following the answer reads no geometry in its own scroll's event, and forces no layout", () => {
  observed = [];
  const b = box();
  const f = follow(b, null, [{}]);
  f.start();
  frame(b, 50);
  assert.equal(b.top, 50);
  for (let i = 0; i < 20; i++) {
    // Between frames the live regions are written: layout is dirty when
    // the scroll event of the widget's own scroll comes.
    b.dirty = true;
    b.fire("scroll");
    b.h += 30;
    b.dirty = false;
    layout();
    assert.equal(b.top, b.h - b.client, `frame ${i}: at the end`);
  }
  assert.equal(b.forced, 0, "no geometry read while layout was dirty");
  f.stop();
});

test("a reader who scrolls up (wheel, then scroll) is not followed, and gets the jump button", () => {
  observed = [];
  const b = box();
  const jump = { hidden: true, addEventListener() {}, removeEventListener() {} };
  const f = follow(b, jump, [{}]);
  f.start();
  frame(b, 200);
  b.fire("wheel");
  b.top = 20;
  frame(b, 40, { scrolled: true });
  assert.equal(b.top, 20, "left where the reader put it");
  assert.equal(jump.hidden, false);
  f.stop();
});

test("a script's scroll in the same frame as the widget's is caught at the next growth", () => {
  observed = [];
  const b = box();
  const jump = { hidden: true, addEventListener() {}, removeEventListener() {} };
  const f = follow(b, jump, [{}]);
  f.start();
  frame(b, 200); // the widget scrolls to 200
  b.top = 0; // a page's script, before the widget's scroll event came: one event for both
  frame(b, 40, { scrolled: true });
  assert.equal(b.top, 0, "not pulled back to the end");
  assert.equal(jump.hidden, false);
  // The element growing taller on the page (its scroll top clamped) is
  // not a reader moving away.
  f.start();
  frame(b, 10);
  const end = b.top;
  b.client = 150;
  b.top = Math.min(b.top, b.h - b.client);
  assert.ok(b.top < end - 8);
  frame(b, 10, { scrolled: true });
  assert.equal(b.top, b.h - b.client, "still followed");
  f.stop();
});

test("content that shrinks (Go's frame taking over from the early view) pulls the scroll to the new end and is still followed", () => {
  observed = [];
  const b = box();
  const jump = { hidden: true, addEventListener() {}, removeEventListener() {} };
  const f = follow(b, jump, [{}]);
  f.start();
  frame(b, 900); // the early view: the widget follows to 900
  assert.equal(b.top, 900);
  // Go's first frame replaces it with less: in its layout the browser
  // clamps the top to the new end, and fires a scroll event.
  b.h = 430;
  b.top = Math.min(b.top, b.h - b.client);
  b.fire("scroll");
  layout();
  frame(b, 30);
  assert.equal(b.top, b.h - b.client, "followed to the end of the new content");
  assert.equal(jump.hidden, true, "no jump button: the reader did not move");
  f.stop();
});
