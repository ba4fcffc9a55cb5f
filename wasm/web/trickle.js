// Trickle's loader: defines <trickle-answer>. The widget's Go program
// (compiled to WebAssembly) runs in a dedicated Web Worker, one per page,
// shared by every element: it reads the network, parses, renders and
// decides. This loader, on the page's main thread, only does what must
// touch the DOM: it builds each element's parts, forwards calls to Go as
// commands, applies the frames Go sends back in requestAnimationFrame,
// writes announcements into the live region the moment they arrive,
// follows the answer while the reader is at the bottom, and dispatches the
// element's events.
//
// Where no worker can be made (a Content-Security-Policy without
// worker-src blob: for a page on another origin, an old browser) or
// worker="off" asks for it, the same Go code runs on this thread instead,
// talking through a MessageChannel: both modes share every line but where
// Go runs. el.metrics.thread says which, and the console says once why.
//
// The build (wasm/internal/build) bundles this entry and the modules it
// imports into one file (esbuild), fills the placeholders in assets.js and
// highlight-assets.js with content-hashed file names, and minifies it.
//
// Module map (wasm/web/; docs/architecture.md):
//
//	trickle.js          this entry (the relay's loader): highlight.js
//	highlight.js        entry: highlight-assets.js (the only importer), then
//	                    index.js
//	index.js            entry: defines the element in a browser, default
//	                    build only
//	element.js          TrickleAnswer, the custom element class, not defined
//	answer.js           Answer: one element's state, early (live regions)
//	                    and apply (one update, in an animation frame)
//	announce.js         what a screen reader hears, written at once
//	early/view.js       the early answer's plain text until Go shows it
//	host.js             Host: boots Go (worker or main thread), queues
//	                    commands, schedules frames; hostFor, ready, stats
//	boot.js             Go's Web Worker started (or why not); warm-up
//	csp.js              the page's CSP refusals seen while Go starts
//	merge.js            frame merging (mergeUpdates, mergeUpdate, mergePatch)
//	patch.js            tail patching (patchTail, patchAnswer)
//	selection.js        the reader's selection in the tail, kept across a frame
//	follow.js           keeping a streaming answer's newest text in view
//	reading.js          reading aids: code and table toolbars, highlighter, math
//	strings.js          the words shown and spoken: English, or the page's
//	contract.js         generated (go generate ./wasm/protocol): the
//	                    message types, command kinds, attributes and string
//	                    keys with their English, from wasm/protocol
//	sanitize.js         sanitizeSpans: a highlighter's output to <span class>
//	mathml.js           sanitizeMath: a TeX converter's output to MathML Core
//	svg.js              sanitizeSVG: a diagram renderer's output to SVG drawing
//	style.js            stylesheet injection
//	builds.js           which builds the page can run
//	assets.js           the default build's file URLs and stylesheet text
//	highlight-assets.js the highlighting build's file URLs, registered
//	chat.js             TrickleChat: the history, its answers, tool rounds
//	composer.js         the chat's parts, status line and composer
//	request.js          what a chat sends; a tool call made its message
//	restore.js          a stored thread shown, the older turns in batches
//	history.js          the history's messages (pure functions)
//	approval.js         tools that ask first
//	thread.js           the thread as a reader walks it
//	actions.js          a turn's buttons (Copy, Regenerate, Edit)
//	trickle-worker.js   not a module of this bundle: where Go runs (a
//	                    classic script, its own file), with the inbox
//
// Importing any module on a server (no document, HTMLElement or
// customElements) throws nothing and defines nothing.

export * from "./highlight.js";
