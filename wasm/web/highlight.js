// The entry with highlighting: the highlighting build (its own .wasm and
// stylesheet, highlight-assets.js) is registered before index.js defines
// the element, so an element with the highlight attribute runs on the
// widget's chroma build from the first one that connects. It exports what
// index.js does. Keep the import first: imports run in their order.

import "./highlight-assets.js";

export * from "./index.js";
