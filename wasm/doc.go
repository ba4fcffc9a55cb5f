// Package wasm is the browser side of Trickle: the <trickle-answer> element.
// It reads a fetch() response body or a WebSocket, feeds the bytes to
// stream.Pipeline, renders the growing answer with render.Document once per
// animation frame (append settled blocks, replace the live tail: at most two
// DOM calls), and hands a11y's announcements to the page's live regions.
//
// The files without a _js suffix are plain Go and hold every decision that
// can be made without a browser (what a frame patches, what a metric is,
// when to resume, what request to send); they are tested natively. The
// *_js.go files are the thin syscall/js edge: transports, the frame
// scheduler, the element's DOM parts.
//
// It never parses SSE, dialects or markdown itself (the pure packages do),
// and never uses a live region for the visible answer.
package wasm
