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

// STYLE is what an inline style may set: how shapes and text are drawn,
// never where they sit on the page (position, inset, z-index), what the
// pointer shows (cursor) or anything that loads (backgrounds, masks by
// URL, content, image-set).
const STYLE = new Set(
  ("fill fill-opacity fill-rule stroke stroke-width stroke-dasharray stroke-dashoffset stroke-linecap stroke-linejoin " +
    "stroke-miterlimit stroke-opacity opacity color font font-family font-size font-style font-variant font-weight " +
    "font-stretch letter-spacing word-spacing text-anchor text-decoration dominant-baseline alignment-baseline " +
    "baseline-shift stop-color stop-opacity marker marker-start marker-mid marker-end clip-path clip-rule mask " +
    "visibility paint-order vector-effect shape-rendering text-rendering").split(" "),
);

// The only functions a value may call: colours, and url() to a fragment
// (checked on its own). image-set(), -webkit-image-set(), element(),
// var() and the rest are refused with the whole declaration.
const FUNCTIONS = new Set(["url", "rgb", "rgba", "hsl", "hsla"]);

// The attributes whose value is a list of transform functions.
const TRANSFORMS = new Set(["transform", "gradientTransform", "patternTransform"]);
const TRANSFORM_FUNCTIONS = new Set(["matrix", "translate", "scale", "rotate", "skewX", "skewY"]);

// The attributes that hold id references as a list of names.
const IDREFS = new Set(["aria-labelledby", "aria-describedby"]);

let diagrams = 0;

// sanitizeSVG copies the first <svg> element among nodes (or under them)
// into doc keeping only drawing elements and presentation attributes:
// inline style only for drawing properties (STYLE) whose values call no
// function but colours and url(#…); href only to a fragment (#id); no
// class. Every id is prefixed with one of this diagram's own
// ("trickle-d3-arrow"), and every reference to it (url(#…), href, ARIA id
// lists) rewritten to match, so a diagram cannot clobber a page's global
// (window.appSettings), shadow its getElementById, or point into another
// diagram. It returns null when there is no <svg>.
export function sanitizeSVG(nodes, doc = document) {
  const root = findSVG(nodes);
  return root ? copy(root, doc, `trickle-d${++diagrams}-`) : null;
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

function copy(from, doc, prefix) {
  const el = doc.createElementNS(SVG, from.localName);
  for (const a of from.attributes) {
    const name = a.localName;
    if (!ATTRS.has(name) || (a.namespaceURI && a.namespaceURI !== "http://www.w3.org/1999/xlink")) continue;
    const value = attribute(name, a.value, prefix);
    if (value !== null) el.setAttribute(name, value);
  }
  for (const c of from.childNodes) {
    if (c.nodeType === 3) el.append(c.data);
    else if (c.nodeType === 1 && c.namespaceURI === SVG && ELEMENTS.has(c.localName)) el.append(copy(c, doc, prefix));
  }
  return el;
}

// attribute is the value an attribute keeps, or null to drop it.
function attribute(name, value, prefix) {
  if (name === "class" || EXTERNAL.test(value) || value.includes("/*")) return null;
  switch (true) {
    case name === "id":
      return prefix + value;
    case name === "href":
      return value.startsWith("#") ? "#" + prefix + value.slice(1) : null;
    case IDREFS.has(name):
      return value.trim().split(/\s+/).map((id) => prefix + id).join(" ");
    case name === "style":
      return style(value, prefix);
    case TRANSFORMS.has(name):
      return calls(value).every((f) => TRANSFORM_FUNCTIONS.has(f)) ? value : null;
    case name === "d" || name === "points" || name === "viewBox":
      return value;
  }
  return cssValue(value, prefix);
}

// style keeps the declarations of STYLE whose values pass cssValue.
function style(value, prefix) {
  const kept = [];
  for (const decl of value.split(";")) {
    const colon = decl.indexOf(":");
    if (colon < 0) continue;
    const prop = decl.slice(0, colon).trim().toLowerCase();
    const v = cssValue(decl.slice(colon + 1).trim(), prefix);
    if (STYLE.has(prop) && v !== null && v !== "") kept.push(`${prop}: ${v}`);
  }
  return kept.length ? kept.join("; ") : null;
}

// cssValue is a presentation value with its url(#id) references
// prefixed, or null when it calls a function other than FUNCTIONS.
function cssValue(value, prefix) {
  if (/[\\@<>{}]|!\s*important/i.test(value)) return null;
  if (!calls(value).every((f) => FUNCTIONS.has(f.toLowerCase()))) return null;
  return value.replace(/url\(\s*(['"]?)#/gi, (_, q) => `url(${q}#${prefix}`);
}

// calls lists the functions a value calls, by name.
function calls(value) {
  return [...value.matchAll(/([A-Za-z_-][\w-]*)\s*\(/g)].map((m) => m[1]);
}
