// The highlighter sanitizer: what a page's highlighter returns is
// model-derived HTML, and only text and <span class> survive it.
// test/sanitize.test.js holds its tests.

// sanitizeSpans copies a parsed fragment keeping text and <span> elements
// with their class only; doc makes the copy's nodes (the page's document).
export function sanitizeSpans(from, doc = document) {
  const out = doc.createDocumentFragment();
  for (const n of from.childNodes) {
    if (n.nodeType === 3) out.append(n.data);
    else if (n.nodeType === 1 && n.namespaceURI === "http://www.w3.org/1999/xhtml" && n.localName === "span") {
      const span = doc.createElement("span");
      const cls = n.getAttribute("class");
      if (cls) span.className = cls;
      span.append(sanitizeSpans(n, doc));
      out.append(span);
    } else if (n.nodeType === 1) {
      out.append(sanitizeSpans(n.localName === "template" ? n.content : n, doc));
    }
  }
  return out;
}
