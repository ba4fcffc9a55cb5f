// Package wasm is the browser side of Trickle: the <trickle-answer> element.
// It reads a fetch() response body or a WebSocket, feeds the bytes to
// stream.Pipeline, renders the growing answer with render.Document once per
// animation frame (append settled blocks, patch the live tail in place with
// render.DiffTail: one call into trickle.js), and hands a11y's announcements
// to the page's live regions.
//
// Every entry into Go from JavaScript and every call out costs more than
// most of the work it carries, so trickle.js holds a few mechanical helpers:
// an inbox that gathers the network chunks until the next frame takes them
// all (one entry per frame, not one per chunk), the frame scheduler, the DOM
// patch, and following the answer while the reader is at the bottom (scroll
// events and resizes). What to show, say, request and resume stays in Go.
//
// Every decision that can be made without a browser (what a frame patches,
// what a metric is, when to resume, what request to send) lives in package
// internal/widget, plain Go tested natively. This package is only the thin
// syscall/js edge: transports, the element's DOM parts, and Boot.
//
// It never parses SSE, dialects or markdown itself (the pure packages do),
// and never uses a live region for the visible answer.
package wasm
