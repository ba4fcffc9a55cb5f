// Package wasm is the Go side of the <trickle-answer> element, compiled to
// WebAssembly: it runs in a dedicated Web Worker (one per page, shared by
// every element on it) or, where no worker can be made, on the page's main
// thread — the same code either way, talking to the page (trickle.js)
// through one message port.
//
// The page sends commands (ask, stream, retry, stop, detach) with
// everything that needs the document already resolved (URLs, attributes,
// headers, the page's origin); Go sends back one message per frame: for
// each element that changed, the settled HTML and the live tail's
// render.TailPatch, thinking, tools, announcements, status, events, the
// text's growth and the metrics (wasm/protocol.Update). Go never touches
// the DOM. In a worker, a frame goes shortly before the page's next
// animation frame (wasm/element.Pacer, timed from the page's
// acknowledgements of applied frames), with everything that arrived by
// then: one message per page frame, painted in the first animation frame
// after the bytes reached Go. On the main thread, the page has Go build
// its frame inside the animation frame that applies it.
//
// Reading the network stays here: fetch and WebSocket exist in workers,
// and trickle-worker.js gathers a connection's chunks in an inbox that Go
// takes once per frame (one crossing per frame, not per chunk).
//
// Every decision that can be made without a browser lives in plain Go
// tested natively: an element's state machine — end or resume, which
// connection a callback belongs to, what each update says — is
// wasm/element.Element, driven by events and acting through a
// widget.Env; what a frame patches, what a metric is, what request to
// send and how a failure reads are wasm/element too; the messages and
// their layout are wasm/protocol. This package is only the syscall/js
// edge: the host loop (host_js.go), each element's Env over fetch,
// WebSocket and timers (element_js.go), the connections
// (transport_js.go), the collector's pacing (gc_js.go). Its API is Boot.
package wasm
