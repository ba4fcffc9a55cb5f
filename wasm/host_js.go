//go:build js && wasm

package wasm

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"syscall/js"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/internal/widget"
	"github.com/trickle-dev/trickle/render"
)

// Boot runs the Go side of every <trickle-answer> on the page: it takes
// the helpers of trickle-worker.js (the message port to the page, the
// inbox readers), says ready, warms up at the first idle moment and
// serves commands until the page goes. Called by wasm/cmd/widget's main.
func Boot() {
	collectBetweenAnswers()
	h := &host{els: map[int]*element{}, signal: make(chan struct{}, 1), pace: widget.Pacer{Margin: widget.DefaultPostMargin}}
	onMessage := newFunc(func(_ js.Value, args []js.Value) any {
		h.push(msg{kind: mPort, val: arg0(args)})
		return nil
	})
	wake := newFunc(func(js.Value, []js.Value) any {
		h.push(msg{kind: mWake})
		return nil
	})
	idle := newFunc(func(js.Value, []js.Value) any {
		h.push(msg{kind: mIdle})
		return nil
	})
	browser = js.Global().Call("__trickleBoot", onMessage, wake)
	h.thread = browser.Get("thread").String()
	browser.Call("idle", idle, 2000)
	h.post(`{"t":"ready","thread":` + string(jsonx.AppendString(nil, h.thread)) + `}`)
	h.loop()
}

// browser is trickle-worker.js's helpers, on the thread Go runs on: post
// sends a message to the page; readBody and wsInbox gather a connection's
// bytes until the next frame takes them (and wake Go, at most once per
// frame); now is the shared clock.
var browser js.Value

// msgKind says what happened; every JS callback turns into one msg for the
// host's loop and returns at once.
type msgKind int

const (
	mPort          msgKind = iota + 1 // a message from the page: a command or an ack
	mWake                             // bytes arrived for some connection
	mIdle                             // the first idle moment after boot: warm up
	mResponse                         // fetch resolved: val is the Response
	mFetchErr                         // fetch rejected before a response
	mDone                             // the body ended / the WebSocket closed
	mReadErr                          // reading the body failed mid-way
	mWSOpen                           // the WebSocket opened
	mRetryTimer                       // time to resume a dropped connection
	mAnnounceTimer                    // the announcer has something due
	mPost                             // the pacer's time to post a frame came
)

type msg struct {
	kind msgKind
	val  js.Value
	el   *element
	conn int   // connection generation the callback belongs to
	c    *conn // the connection the callback belongs to
}

// host owns every element's state: one loop, fed by one queue that never
// drops and never blocks (callbacks from JavaScript and timers only append
// to it), so nothing is shared between goroutines and no element needs a
// goroutine of its own.
type host struct {
	mu     sync.Mutex
	queue  []msg
	signal chan struct{}

	thread string
	els    map[int]*element
	// order is els by id: updates go out in a stable order.
	order []*element

	// want: something changed that a frame should show. inFlight: a frame
	// message was posted and the page has not applied it yet (it
	// acknowledges it from its animation frame); the next goes after
	// that, so one message goes per page frame. On the main thread frames
	// go to the page at once, in its animation frame, and nothing is ever
	// in flight.
	want, inFlight bool
	// pace says when a worker's frame goes (widget.Pacer); postAt is set
	// while its timer runs, postNow when it fired.
	pace    widget.Pacer
	postAt  bool
	postNow bool

	out  []byte
	upds []widget.Update
	say  []byte
}

func (h *host) push(m msg) {
	h.mu.Lock()
	h.queue = append(h.queue, m)
	h.mu.Unlock()
	select {
	case h.signal <- struct{}{}:
	default:
	}
}

func (h *host) loop() {
	var batch []msg
	for range h.signal {
		h.mu.Lock()
		batch, h.queue = h.queue, batch[:0]
		h.mu.Unlock()
		for i := range batch {
			h.handle(batch[i])
			batch[i] = msg{}
		}
		if h.want && !h.inFlight {
			h.due()
		}
	}
}

// handle runs one message. A panic would end the Go program — every
// element on the page — so it fails that element's answer instead.
func (h *host) handle(m msg) {
	defer func() {
		if r := recover(); r != nil {
			js.Global().Get("console").Call("error", fmt.Sprintf("trickle: internal error: %v", r))
			if e := m.el; e != nil {
				e.fail(fmt.Errorf("trickle: internal error: %v", r))
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
		h.postAt, h.postNow = false, true
	default:
		e := m.el
		if e == nil || e.gone {
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
		ack := v.String()
		kind, ms, _ := strings.Cut(ack, ":")
		if f, err := strconv.ParseFloat(ms, 64); err == nil {
			h.pace.Applied(now().at(f))
		}
		h.inFlight = false
		h.want = h.want || kind == "ack+wake"
		return
	}
	c, err := widget.ParseCommand(v.Get("j").String())
	if err != nil {
		js.Global().Get("console").Call("error", err.Error())
		return
	}
	switch c.Kind {
	case "stats":
		h.post(h.stats())
		return
	case "attach":
		h.attach(c.ID)
		return
	}
	e := h.els[c.ID]
	if e == nil {
		e = h.attach(c.ID)
	}
	// A JavaScript exception (new WebSocket of a bad URL) fails the
	// answer it happened in, or the call when none began.
	defer func() {
		if r := recover(); r != nil {
			if !e.fail(fmt.Errorf("trickle: %v", r)) {
				e.reject(c.N, fmt.Errorf("trickle: %v", r))
			}
		}
	}()
	switch c.Kind {
	case "ask", "stream":
		r, err := c.Request()
		if err != nil {
			e.reject(c.N, err)
			return
		}
		e.begin(c, r, v.Get("init"), v.Get("early"))
	case "retry":
		e.retry(c)
	case "stop":
		e.stop()
	case "detach":
		e.detach()
	}
}

func (h *host) attach(id int) *element {
	if e := h.els[id]; e != nil {
		return e
	}
	e := &element{id: id, h: h}
	h.els[id] = e
	i, _ := slices.BinarySearchFunc(h.order, id, func(e *element, id int) int { return e.id - id })
	h.order = slices.Insert(h.order, i, e)
	return e
}

// due posts a frame now, or — in a worker, where the page's animation frames
// are known from its acknowledgements — sets a timer for when the pacer
// says: everything that arrives until then goes in that one message.
func (h *host) due() {
	if h.thread != "worker" || h.postNow {
		h.postNow = false
		h.flush()
		return
	}
	if h.postAt {
		return
	}
	t := time.Now()
	at := h.pace.PostAt(t)
	if !at.After(t) {
		h.flush()
		return
	}
	h.postAt = true
	time.AfterFunc(at.Sub(t), func() { h.push(msg{kind: mPost}) })
}

// flush builds every element's frame and sends them as one message.
func (h *host) flush() {
	h.want = false
	h.upds = h.upds[:0]
	gone := false
	for _, e := range h.order {
		if !e.gone && e.req != nil {
			e.frame()
		}
		for i := range e.out {
			if !e.out[i].Empty() {
				h.upds = append(h.upds, e.out[i])
			}
		}
		clear(e.out)
		e.out = e.out[:0]
		gone = gone || e.gone
	}
	if gone {
		h.order = slices.DeleteFunc(h.order, func(e *element) bool {
			if e.gone {
				delete(h.els, e.id)
			}
			return e.gone
		})
	}
	if len(h.upds) == 0 {
		return
	}
	h.out = widget.AppendFrame(h.out[:0], h.upds)
	clear(h.upds)
	h.inFlight = browser.Call("post", string(h.out), true).Bool()
}

func (h *host) post(s string) { browser.Call("post", s, false) }

// stats is what the lifecycle tests compare with their baseline.
func (h *host) stats() string {
	b := []byte(`{"t":"stats","elements":`)
	b = strconv.AppendInt(b, int64(len(h.els)), 10)
	b = append(b, `,"funcs":`...)
	b = strconv.AppendInt(b, liveFuncs.Load(), 10)
	b = append(b, `,"goroutines":`...)
	b = strconv.AppendInt(b, int64(runtime.NumGoroutine()), 10)
	b = append(b, `,"thread":`...)
	b = jsonx.AppendString(b, h.thread)
	return string(append(b, '}'))
}

var warmOnce sync.Once

// warm renders a sample once per page — at the first idle moment, or when
// an answer is asked for before that, right after its request went out,
// while the network is the one working — and hands its HTML to the page,
// which parses it once off-screen at its own idle time (Chrome's first
// HTML fragment parse of a page is slow: bench/browser's cold first answer,
// docs/PERFORMANCE.md "Widget in the browser").
func (h *host) warm() {
	warmOnce.Do(func() {
		html := widget.WarmUp(render.Policy{})
		b := jsonx.AppendString([]byte(`{"t":"warm","html":`), html)
		h.post(string(append(b, '}')))
	})
}

// clock converts between Go's time and the milliseconds since the epoch
// the page and the worker share (performance.timeOrigin +
// performance.now(): the same instant reads the same on both threads).
type clock struct {
	goNow time.Time
	jsNow float64
}

func now() clock { return clock{time.Now(), browser.Call("now").Float()} }

// at is the Go time of epoch milliseconds ms (zero for 0).
func (c clock) at(ms float64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return c.goNow.Add(-time.Duration((c.jsNow - ms) * float64(time.Millisecond)))
}

// ms is the epoch milliseconds of Go time t.
func (c clock) ms(t time.Time) float64 {
	return c.jsNow - float64(c.goNow.Sub(t))/float64(time.Millisecond)
}
