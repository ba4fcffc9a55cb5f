package element

import "sync"

// GCPacer keeps Go's garbage collector out of the frames of an answer.
//
// The widget's Go side runs on one thread (its Web Worker, or the page's
// main thread in the fallback), where a collection stops every frame of
// every answer until it ends. With Go's default pacing
// (GOGC=100) the heap goal is a few MiB — the live heap between frames is
// under 1 MiB — so a 20 KB answer, which allocates about 19 MB in its
// frames (parse trees, HTML strings), ran five collections, each inside
// whichever frame crossed the goal: mark, mark termination, sweeping,
// finalizers of js.Values and growing the WebAssembly memory, 10–45 ms in
// one frame in Chromium, the answer's longest frames by far. Instead the
// widget turns proportional pacing off and bounds the heap with a memory
// limit (MemoryLimit), and collects once each time the page has no answer
// streaming, when the browser reports idle time. An answer that allocates
// less than the limit then runs no collection at all; a longer one
// collects when it reaches the limit, a few times instead of dozens.
//
// GCPacer only decides; the browser side supplies how to collect and how
// to wait for idle time. Safe for concurrent use.
type GCPacer struct {
	mu        sync.Mutex
	streaming int  // answers in flight on the page
	scheduled bool // an idle collection is waiting
	// Idle asks for Collect to be called at the next idle moment.
	Idle func()
	// Collect runs a collection now.
	Collect func()
}

// MemoryLimit is the soft limit on the Go heap of the widget: it bounds the
// WebAssembly memory (which never shrinks) and is where an answer that
// allocates more collects.
const MemoryLimit = 64 << 20

// Begin records that an answer started streaming.
func (g *GCPacer) Begin() {
	g.mu.Lock()
	g.streaming++
	g.mu.Unlock()
}

// End records that an answer ended; when none is left streaming it asks
// for an idle collection (one at a time).
func (g *GCPacer) End() {
	g.mu.Lock()
	if g.streaming > 0 {
		g.streaming--
	}
	g.askLocked()
}

// Shown records that a stored answer was shown at once (el.message,
// el.markdown, a restored <trickle-chat>): rendering it allocated as
// streaming it would have, and no answer's End follows, so it asks for an
// idle collection as End does when none is streaming. Without it, the
// garbage of a shown answer stayed on Go's heap until the memory limit
// forced a collection, in whichever frame of a later answer reached it,
// and that answer grew the WebAssembly memory instead of reusing it.
func (g *GCPacer) Shown() {
	g.mu.Lock()
	g.askLocked()
}

// askLocked asks for an idle collection when no answer streams and none
// is waiting, and unlocks g.
func (g *GCPacer) askLocked() {
	ask := g.streaming == 0 && !g.scheduled
	if ask {
		g.scheduled = true
	}
	g.mu.Unlock()
	if ask && g.Idle != nil {
		g.Idle()
	}
}

// OnIdle is called at the idle moment End asked for: it collects unless
// an answer started streaming meanwhile (that answer's End asks again).
func (g *GCPacer) OnIdle() {
	g.mu.Lock()
	g.scheduled = false
	run := g.streaming == 0
	g.mu.Unlock()
	if run && g.Collect != nil {
		g.Collect()
	}
}
