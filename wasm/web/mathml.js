// The formula sanitizer: what a page's TeX converter returns is
// model-derived markup, and only MathML Core elements with their
// presentation attributes survive it. test/mathml.test.js holds its tests.

const MATHML = "http://www.w3.org/1998/Math/MathML";

// pageMath.convert is the converter of every element without one of its
// own (el.math): none, unless the package's math entry (math.js) set it.
export const pageMath = { convert: null };

// The MathML Core elements (annotation-xml is left out: it may carry
// HTML). Any other element becomes its text; script and style are dropped.
const ELEMENTS = new Set(
  "math annotation maction merror mfrac mi mmultiscripts mn mo mover mpadded mphantom mprescripts mroot mrow ms mspace msqrt mstyle msub msubsup msup mtable mtd mtext mtr munder munderover semantics".split(" "),
);

// Attributes every MathML Core element may keep, then those of one element.
// No id, class, style, href, src or event handler: nothing that reaches the
// page's CSS, scripts or the network.
const GLOBAL = new Set(["dir", "displaystyle", "mathbackground", "mathcolor", "mathsize", "mathvariant", "scriptlevel"]);
const OWN = {
  math: ["display", "alttext"],
  mfrac: ["linethickness"],
  mo: ["form", "fence", "separator", "lspace", "rspace", "stretchy", "symmetric", "maxsize", "minsize", "largeop", "movablelimits"],
  mover: ["accent"],
  munder: ["accentunder"],
  munderover: ["accent", "accentunder"],
  mpadded: ["width", "height", "depth", "lspace", "voffset"],
  mspace: ["width", "height", "depth"],
  mtd: ["columnspan", "rowspan"],
  annotation: ["encoding"],
  maction: ["actiontype", "selection"],
};

// sanitizeMath copies nodes (a converter's result: parsed from its string,
// or its own nodes) into one <math> element of doc keeping MathML Core only:
// a lone <math> root keeps its allowed attributes, anything else is wrapped.
// It returns null when nothing is left.
export function sanitizeMath(nodes, doc = document) {
  const list = [...nodes].filter((n) => n.nodeType === 1 || (n.nodeType === 3 && n.data.trim() !== ""));
  let math;
  if (list.length === 1 && isMathML(list[0], "math")) {
    math = copyElement(list[0], doc);
    copyChildren(list[0], math, doc);
  } else {
    math = doc.createElementNS(MATHML, "math");
    for (const n of list) copyNode(n, math, doc);
  }
  return math.childNodes.length ? math : null;
}

function isMathML(n, name) {
  return n.nodeType === 1 && n.namespaceURI === MATHML && (name ? n.localName === name : ELEMENTS.has(n.localName));
}

function copyElement(from, doc) {
  const el = doc.createElementNS(MATHML, from.localName);
  const own = OWN[from.localName] ?? [];
  for (const a of from.attributes) {
    if (!a.namespaceURI && (GLOBAL.has(a.name) || own.includes(a.name))) el.setAttribute(a.name, a.value);
  }
  return el;
}

function copyChildren(from, into, doc) {
  for (const c of from.childNodes) copyNode(c, into, doc);
}

function copyNode(n, into, doc) {
  if (n.nodeType === 3) {
    into.append(n.data);
  } else if (isMathML(n) && n.localName !== "math") {
    const el = copyElement(n, doc);
    // An annotation is text (the TeX, say): its markup, if any, is not.
    if (n.localName === "annotation") el.textContent = n.textContent;
    else copyChildren(n, el, doc);
    into.append(el);
  } else if (n.nodeType === 1 && n.localName !== "script" && n.localName !== "style") {
    // An element that is not MathML Core (a nested <math> included) is its
    // content.
    copyChildren(n.localName === "template" && n.content ? n.content : n, into, doc);
  } else if (n.nodeType === 11) {
    copyChildren(n, into, doc);
  }
}
