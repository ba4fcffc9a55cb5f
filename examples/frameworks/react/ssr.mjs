// Server-side rendering with the package imported: on Node (no DOM) the
// import throws nothing and defines nothing, and React renders the element
// as plain HTML for the browser to upgrade.
import { createElement } from "react";
import { renderToString } from "react-dom/server";

const mod = await import("trickle-answer");
const html = renderToString(createElement("trickle-answer", { endpoint: "/api/chat" }));
if (typeof mod.TrickleAnswer !== "function" || !html.startsWith("<trickle-answer")) {
  throw new Error("unexpected server render: " + html);
}
console.log(html);
