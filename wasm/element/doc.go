// Package element is the <trickle-answer> element's logic without the
// browser: a Session takes a connection's bytes and gives, once per frame,
// the protocol.Patch that changes the screen (settled HTML, the live tail's
// patch, thinking, tools, announcements, status), which the Element puts in
// its protocol.Update for the page (wasm/protocol writes them as JSON);
// the Recorder keeps the metrics;
// the request bodies, the relay's resume and control URLs, the backoff,
// the inbox batch layout and the collector's pacing are decided here too.
//
// It is plain Go, tested natively and on Node (js/wasm). Package wasm is
// the thin syscall/js edge that moves bytes in and patches out, and
// cmd/trickle's replay runs the same Session. It never imports syscall/js
// and never touches the DOM.
package element
