// Package engines is the widget's cross-engine smoke test: the tests in
// this directory load <trickle-answer> from the relay into a page of
// another origin, in Firefox ESR (driven over WebDriver BiDi) and in
// WebKitGTK, Safari's engine (MiniBrowser under Xvfb, driven over
// WebDriver by WebKitWebDriver), ask over SSE and over WebSocket, with the
// widget's Go side in its Web Worker and with worker="off", and check each
// answer against outside oracles: the simulated model's canned text and
// render.Convert's one-shot HTML, and metrics.thread against the mode. Chromium has its own, larger
// suite (wasm/e2e, examples).
//
// The package has no code of its own; it holds the tests. They run in
// `make test`; without an engine installed they skip, except under
// CI=true, where they fail.
package engines
