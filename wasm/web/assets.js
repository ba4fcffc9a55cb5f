// The default build's files, resolved against this module's URL (the
// loader's, once bundled). The build (wasm/internal/build) replaces the
// quoted placeholders with content-hashed file names.

export const WASM = new URL("__TRICKLE_WASM__", import.meta.url);
export const WASM_EXEC = new URL("__TRICKLE_WASM_EXEC__", import.meta.url);
export const WORKER = new URL("__TRICKLE_WORKER__", import.meta.url);
export const CSS = new URL("__TRICKLE_CSS__", import.meta.url);
// The same stylesheet's text, which the build puts here: the page applies
// it from this file, without a second request (CSS is the fallback).
export const CSS_TEXT = "__TRICKLE_CSS_TEXT__";
