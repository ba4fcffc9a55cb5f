// A live chart of token arrivals drawn into an inline <svg>, no library: one
// stepped polyline per transport (tokens received against time) and a mark
// at every reconnect. The page calls draw() at most once per animation
// frame; only the polylines change every frame, the grid only when the
// scales grow.

const NS = "http://www.w3.org/2000/svg";
// The viewBox is 800 × 260; the plot leaves room for the axes' labels.
const W = 800;
const H = 260;
const LEFT = 56;
const RIGHT = 14;
const TOP = 12;
const BOTTOM = 30;

// niceStep is the 1, 2 or 5 × 10^k step that cuts span into about target
// intervals.
export function niceStep(span, target) {
  const raw = span / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5]) if (m * p >= raw) return m * p;
  return 10 * p;
}

// niceMax rounds v up to a whole number of nice steps, so that the axis
// ends on a labelled tick.
function niceMax(v, target) {
  const step = niceStep(v, target);
  return { max: Math.ceil(v / step) * step, step };
}

function el(name, attrs, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

export class Timeline {
  constructor(svg) {
    this.svg = svg;
    this.grid = svg.querySelector(".grid");
    this.scale = "";
  }

  // reset clears the chart for a new run.
  reset() {
    this.grid.replaceChildren();
    this.scale = "";
    for (const g of this.svg.querySelectorAll(".series")) {
      g.querySelector("polyline").setAttribute("points", "");
      g.querySelector(".marks").replaceChildren();
      g.dataset.points = "0";
      g.dataset.marks = "0";
    }
  }

  // draw plots each series: {side, points: [[ms, tokens], …] in time order,
  // marks: [[ms, tokens], …], until: ms the line runs to}. tMax and nMax
  // are the largest time and token count to fit.
  draw(series, tMax, nMax) {
    const x = niceMax(Math.max(tMax, 1000), 8);
    const y = niceMax(Math.max(nMax, 10), 4);
    const sx = (t) => (LEFT + (t / x.max) * (W - LEFT - RIGHT)).toFixed(1);
    const sy = (n) => (H - BOTTOM - (n / y.max) * (H - TOP - BOTTOM)).toFixed(1);
    const scale = `${x.max}/${y.max}`;
    if (scale !== this.scale) {
      this.scale = scale;
      this.drawGrid(x, y, sx, sy);
      for (const g of this.svg.querySelectorAll(".series")) g.dataset.marks = "0"; // positions moved
    }
    for (const s of series) {
      const g = this.svg.querySelector(`.series[data-side="${s.side}"]`);
      // Steps, not slopes: a token is known to have arrived by the frame it
      // was seen in, and a stall must look flat, not like a slow trickle.
      const pts = [`${sx(0)},${sy(0)}`];
      let last = 0;
      for (const [t, n] of s.points) {
        const px = sx(t);
        pts.push(`${px},${sy(last)}`, `${px},${sy(n)}`);
        last = n;
      }
      if (s.until > 0) pts.push(`${sx(s.until)},${sy(last)}`);
      g.querySelector("polyline").setAttribute("points", pts.join(" "));
      g.dataset.points = String(s.points.length);
      if (g.dataset.marks !== String(s.marks.length)) {
        const marks = g.querySelector(".marks");
        marks.replaceChildren(...s.marks.flatMap(([t, n]) => [
          el("line", { x1: sx(t), x2: sx(t), y1: sy(0), y2: TOP, class: "resume" }),
          el("circle", { cx: sx(t), cy: sy(n), r: 5 }, undefined),
        ]));
        for (const [i, [t]] of s.marks.entries()) {
          marks.children[2 * i + 1].append(el("title", {}, `reconnect at ${(t / 1000).toFixed(2)} s`));
        }
        g.dataset.marks = String(s.marks.length);
      }
    }
  }

  drawGrid(x, y, sx, sy) {
    const parts = [];
    for (let t = 0; t <= x.max + 1e-9; t += x.step) {
      parts.push(el("line", { x1: sx(t), x2: sx(t), y1: sy(0), y2: TOP }));
      const label = x.step < 1000 ? (t / 1000).toFixed(1) : String(Math.round(t / 1000));
      parts.push(el("text", { x: sx(t), y: H - BOTTOM + 18, "text-anchor": "middle" }, label + " s"));
    }
    for (let n = 0; n <= y.max + 1e-9; n += y.step) {
      parts.push(el("line", { x1: LEFT, x2: W - RIGHT, y1: sy(n), y2: sy(n) }));
      parts.push(el("text", { x: LEFT - 8, y: Number(sy(n)) + 4, "text-anchor": "end" }, n.toLocaleString("en")));
    }
    const mid = (TOP + H - BOTTOM) / 2;
    parts.push(el("text", { x: 12, y: mid, "text-anchor": "middle", transform: `rotate(-90 12 ${mid})`, class: "unit" }, "tokens"));
    this.grid.replaceChildren(...parts);
  }
}
