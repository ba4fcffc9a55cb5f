// Server-side rendering with the package imported: on Node (no DOM) the
// import throws nothing and defines nothing, and Vue renders the element as
// plain HTML for the browser to upgrade.
import { createSSRApp, h } from "vue";
import { renderToString } from "vue/server-renderer";

const mod = await import("trickle-answer");
const html = await renderToString(createSSRApp({ render: () => h("trickle-answer", { endpoint: "/api/chat" }) }));
if (typeof mod.TrickleAnswer !== "function" || !html.startsWith("<trickle-answer")) {
  throw new Error("unexpected server render: " + html);
}
console.log(html);
