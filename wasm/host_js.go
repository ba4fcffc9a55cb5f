//go:build js && wasm

package wasm

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"syscall/js"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Boot runs the Go side of every <trickle-answer> on the page with
// trickle-worker.js's helpers: says ready, warms up when idle and serves
// commands until the page goes. Called by wasm/cmd/widget's main.
func Boot() {
	collectBetweenAnswers()
	h := &host{box: element.NewMailbox[func()](), els: elements, pace: element.Pacer{Margin: element.DefaultPostMargin}}
	// Each callback lives as long as the page.
	on := func(kind msgKind) js.Func {
		return newFunc(func(_ js.Value, args []js.Value) any {
			h.push(msg{kind: kind, val: arg0(args)})
			return nil
		})
	}
	browser = js.Global().Call("__trickleBoot", on(mPort), on(mWake))
	h.thread = browser.Get("thread").String()
	browser.Call("idle", on(mIdle), 2000)
	h.post(protocol.Ready(h.thread, a11y.MinGap))
	h.box.Run(func(f *func()) { (*f)() }, func() {
		if h.want && !h.inFlight {
			h.due()
		}
	})
}

// elements is the page's elements, where an element's Env finds it (envRef).
var elements = &registry{}

// browser is trickle-worker.js's helpers on Go's thread: post, readBody
// and wsInbox (bytes wait for the next frame), now, cancel.
var browser js.Value

// msgKind says what happened; every JS callback turns into one msg for the
// host's loop and returns at once.
type msgKind int

const (
	mPort       msgKind = iota + 1 // a message from the page: a command or an ack
	mWake                          // bytes arrived for some connection
	mIdle                          // the first idle moment after boot: warm up
	mResponse                      // fetch resolved: val is the Response
	mFetchErr                      // fetch rejected before a response
	mDone                          // the body ended / the WebSocket closed
	mReadErr                       // reading the body failed mid-way
	mWSOpen                        // the WebSocket opened
	mTimer                         // a timer the element asked for (timer)
	mPost                          // the pacer's time to post a frame came
	mCost                          // the relay answered a Stop's DELETE (val: {status, body, error}, url)
	mStopStatus                    // a WebSocket message after the reader's Stop (val: its data)
	mStopWait                      // the wait for a stopped WebSocket's status is over
)

type msg struct {
	kind  msgKind
	val   js.Value
	el    *mount
	conn  int   // connection generation the callback belongs to
	c     *conn // the connection the callback belongs to
	timer element.Timer
	url   string
}

// host owns every element's state: one loop, fed by one mailbox
// (callbacks from JavaScript and timers only post to it), so nothing is
// shared between goroutines and no element needs a goroutine of its own.
//
// No generic type or function is instantiated with a type that reaches
// an element (msg, *mount): a generic's dictionary marks its type
// arguments as converted to interfaces, and then the time.Time in an
// element's state would link time's formatting (fmt calls String through
// an interface; docs/notes/widget-size.md). So the mailbox carries each
// msg inside a func, and the elements are in a registry of their own.
type host struct {
	box    *element.Mailbox[func()]
	thread string
	els    *registry // elements

	// want: something changed that a frame should show. inFlight: a frame
	// message was posted and the page has not applied it yet (it
	// acknowledges it from its animation frame); the next goes after
	// that, so one message goes per page frame. On the main thread frames
	// go to the page at once, in its animation frame, and nothing is ever
	// in flight.
	want, inFlight bool
	// pace says when a worker's frame goes (element.Pacer.Due).
	pace element.Pacer

	out  []byte
	upds []protocol.Update
}

func (h *host) push(m msg) { h.box.Post(func() { h.handle(&m) }) }

// handle runs one message. A panic would end the Go program — every
// element on the page — so it fails that element's answer instead.
func (h *host) handle(mp *msg) {
	m := *mp
	defer func() {
		if r := recover(); r != nil {
			js.Global().Get("console").Call("error", "trickle: internal error: "+panicText(r))
			if e := m.el; e != nil {
				e.Fail(errors.New("trickle: internal error: " + panicText(r)))
			}
		}
	}()
	switch m.kind {
	case mPort:
		h.port(m.val)
	case mWake:
		h.want = true
	case mIdle:
		h.warm()
	case mPost:
		h.pace.Fired()
	default:
		e := m.el
		if e == nil || e.Gone() {
			releaseStale(m)
			return
		}
		e.handle(m)
	}
}

// port handles a message from the page.
func (h *host) port(v js.Value) {
	if v.Type() == js.TypeString {
		// The page applied the last frame in its animation frame of the
		// given time ("ack+wake:": and bytes arrived since).
		ack, ok := protocol.ParseAck(v.String())
		if ok {
			h.pace.Applied(now().At(ack.At))
		}
		h.inFlight = false
		h.want = h.want || ack.Wake
		return
	}
	c, err := element.ParseCommand(v.Get("j").String())
	if err != nil {
		js.Global().Get("console").Call("error", err.Error())
		return
	}
	switch c.Kind {
	case protocol.Stats:
		h.post(h.stats())
		return
	case protocol.Attach:
		h.attach(c.ID)
		return
	}
	e := h.attach(c.ID)
	// A JavaScript exception (new WebSocket of a bad URL) fails the
	// answer it happened in, or the call when none began.
	defer func() {
		if r := recover(); r != nil {
			if !e.Fail(errors.New("trickle: " + panicText(r))) {
				e.Reject(c.N, errors.New("trickle: "+panicText(r)))
			}
		}
	}()
	e.Do(c, now().At(c.At), e.keep(c, v))
	switch c.Kind {
	case protocol.Ask, protocol.Stream:
		h.warm()
	case protocol.Stop:
		h.pace.End()
	case protocol.Detach:
		e.init, e.early, e.buf = js.Undefined(), js.Undefined(), nil
	}
}

func (h *host) attach(id int) *mount {
	e, ok := h.els.Get(id)
	if !ok {
		e = newElement(h, id)
		h.els.Add(e)
	}
	return e
}

// due posts a frame now, or — in a worker, where the page's animation frames
// are known from its acknowledgements — sets a timer for when the pacer
// says: everything that arrives until then goes in that one message.
func (h *host) due() {
	post, wait := h.pace.Due(time.Now(), h.thread == "worker")
	if wait > 0 {
		time.AfterFunc(wait, func() { h.push(msg{kind: mPost}) })
	}
	if post {
		h.flush()
	}
}

// flush builds every element's frame and sends them as one message.
func (h *host) flush() {
	h.want = false
	h.upds = h.upds[:0]
	for _, e := range h.els.All() {
		if e.Active() {
			e.Frame()
		}
		h.upds = e.TakeUpdates(h.upds)
	}
	h.els.Sweep()
	if len(h.upds) == 0 {
		return
	}
	h.out = protocol.AppendFrame(h.out[:0], h.upds)
	clear(h.upds)
	h.inFlight = browser.Call("post", string(h.out), true).Bool()
}

func (h *host) post(s string) { browser.Call("post", s, false) }

// stats is what the lifecycle tests compare with their baseline.
func (h *host) stats() string {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return protocol.StatsMessage(protocol.Counts{Elements: h.els.Len(), Funcs: int(liveFuncs.Load()), Goroutines: runtime.NumGoroutine(), Thread: h.thread,
		HeapInuse: m.HeapInuse, Sys: m.Sys, WasmMemory: uint64(browser.Call("wasmMemory").Int()), NumGC: m.NumGC})
}

var warmOnce sync.Once

// warm renders a sample once per page (first idle moment, or right after
// an early request went out) and hands its HTML to the page to parse once
// off-screen: a page's first HTML fragment parse is slow (bench/browser).
func (h *host) warm() {
	warmOnce.Do(func() {
		h.post(protocol.Warm(element.WarmUp(render.Policy{})))
	})
}

// now reads Go's clock and the page's together.
func now() protocol.Clock { return protocol.Clock{Go: time.Now(), JS: browser.Call("now").Float()} }
