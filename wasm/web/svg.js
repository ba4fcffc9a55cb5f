// The diagram sanitizer: what a page's diagram renderer (mermaid, say)
// returns is derived from model output, and only SVG drawing elements with
// presentation attributes survive it. test/svg.test.js holds its tests.

const SVG = "http://www.w3.org/2000/svg";

// Drawing and text elements. No script, style, foreignObject (HTML),
// image, a, animate or set: nothing that runs, styles the page, loads or
// navigates.
const ELEMENTS = new Set(
  "svg g defs symbol use path rect circle ellipse line polyline polygon text tspan title desc marker linearGradient radialGradient stop clipPath mask pattern".split(" "),
);

const ATTRS = new Set(
  ("id class viewBox width height x y x1 y1 x2 y2 cx cy r rx ry d points transform fill stroke stroke-width " +
    "stroke-dasharray stroke-dashoffset stroke-linecap stroke-linejoin stroke-miterlimit stroke-opacity fill-opacity " +
    "fill-rule clip-rule opacity font-size font-family font-weight font-style text-anchor dominant-baseline " +
    "alignment-baseline baseline-shift dx dy rotate textLength lengthAdjust marker-start marker-mid marker-end " +
    "markerWidth markerHeight markerUnits refX refY orient preserveAspectRatio offset stop-color stop-opacity " +
    "gradientUnits gradientTransform spreadMethod fx fy patternUnits patternContentUnits patternTransform " +
    "clipPathUnits maskUnits maskContentUnits clip-path mask visibility display role aria-label " +
    "aria-roledescription aria-labelledby aria-describedby aria-hidden style href").split(" "),
);

// A reference may only point inside the document: url(#id), #id.
const EXTERNAL = /url\s*\(\s*(?!['"]?#)|@import|expression\s*\(|javascript:|\\/i;

// sanitizeSVG copies the first <svg> element among nodes (or under them)
// into doc keeping only drawing elements and presentation attributes
// (inline style included, without external references); href only to a
// fragment (#id). It returns null when there is no <svg>.
export function sanitizeSVG(nodes, doc = document) {
  const root = findSVG(nodes);
  return root ? copy(root, doc) : null;
}

function findSVG(nodes) {
  for (const n of nodes) {
    if (n.nodeType !== 1 && n.nodeType !== 11) continue;
    if (n.nodeType === 1 && n.namespaceURI === SVG && n.localName === "svg") return n;
    const inner = findSVG(n.localName === "template" && n.content ? n.content.childNodes : n.childNodes);
    if (inner) return inner;
  }
  return null;
}

function copy(from, doc) {
  const el = doc.createElementNS(SVG, from.localName);
  for (const a of from.attributes) {
    const name = a.localName;
    if (!ATTRS.has(name) || (a.namespaceURI && a.namespaceURI !== "http://www.w3.org/1999/xlink")) continue;
    if (EXTERNAL.test(a.value)) continue;
    if (name === "href" && !a.value.startsWith("#")) continue;
    el.setAttribute(name, a.value);
  }
  for (const c of from.childNodes) {
    if (c.nodeType === 3) el.append(c.data);
    else if (c.nodeType === 1 && c.namespaceURI === SVG && ELEMENTS.has(c.localName)) el.append(copy(c, doc));
  }
  return el;
}
