// The highlighting variant of the widget and its stylesheet, fetched
// instead (and in addition) only when the page has a <trickle-answer
// highlight>, registered as the page's highlighting build. Only
// highlight.js imports this module, so a bundle whose entry does not
// import highlight.js references one .wasm. The build replaces the
// placeholders with content-hashed file names.
//
// The registration is here, not in highlight.js: a module's imports run
// before its own body, so only a module that highlight.js imports ahead of
// index.js registers the build before the element is defined (and the
// page's elements connect).

import { useHighlightBuild } from "./builds.js";

export const HIGHLIGHT_WASM = new URL("__TRICKLE_HIGHLIGHT_WASM__", import.meta.url);
export const HIGHLIGHT_CSS = new URL("__TRICKLE_HIGHLIGHT_CSS__", import.meta.url);

useHighlightBuild(HIGHLIGHT_WASM, HIGHLIGHT_CSS);
