//go:build js && wasm

package wasm

import (
	"syscall/js"
	"time"
)

// conn is one connection: a fetch whose body trickle.js reads into an
// Inbox, or a WebSocket whose messages go into one. The element takes the
// inbox's bytes at each frame (drain); the connection's own callbacks —
// response, end, open, close — only turn into a msg for the element's loop.
// Its js.Funcs are released once no callback can come any more (the
// terminal one arrived, or nothing was pending when it stopped).
type conn struct {
	gen int
	el  *mount

	// inbox holds the bytes that arrived since the last frame (undefined
	// until the body is being read or the WebSocket exists).
	inbox js.Value

	// fetch
	controller js.Value
	pending    bool // the fetch or the body's end is outstanding

	ws js.Value // WebSocket

	funcs    []js.Func
	stopped  bool
	released bool
}

// send queues a callback's message for the host's loop (never dropped:
// the terminal one releases the connection).
func (c *conn) send(m msg) {
	m.el, m.conn, m.c = c.el, c.gen, c
	c.el.h.push(m)
}

func (c *conn) fn(f func(args []js.Value)) js.Func {
	jf := newFunc(func(_ js.Value, args []js.Value) any {
		f(args)
		return nil
	})
	c.funcs = append(c.funcs, jf)
	return jf
}

// on is a callback that reports kind with its first argument, ending what
// was pending.
func (c *conn) on(kind msgKind) js.Func {
	return c.fn(func(a []js.Value) { c.pending = false; c.send(msg{kind: kind, val: arg0(a)}) })
}

// startFetch sends the request with an AbortController and reports the
// response; read then pulls the body with one reused then/catch pair.
func startFetch(e *mount, gen int, url string, init js.Value) *conn {
	c := &conn{gen: gen, el: e}
	c.controller = js.Global().Get("AbortController").New()
	opts := js.Global().Get("Object").New()
	if init.Type() == js.TypeObject {
		js.Global().Get("Object").Call("assign", opts, init)
	}
	opts.Set("signal", c.controller.Get("signal"))
	c.pending = true
	js.Global().Call("fetch", url, opts).Call("then", c.on(mResponse), c.on(mFetchErr))
	return c
}

// read starts reading resp.body into the connection's inbox (which wakes
// Go when bytes arrive and no frame is on its way to the page).
func (c *conn) read(resp js.Value) {
	c.pending = true
	c.inbox = browser.Call("readBody", resp.Get("body"), c.endFunc())
}

// endFunc is the callback for the end of the body: mDone, or mReadErr
// with the error.
func (c *conn) endFunc() js.Func {
	return c.fn(func(a []js.Value) {
		c.pending = false
		if err := arg0(a); err.Truthy() {
			c.send(msg{kind: mReadErr, val: err})
			return
		}
		c.send(msg{kind: mDone})
	})
}

// adoptFetch takes over the request the page sent for an ask before Go
// was ready (wasm/web/early/early.js; the same request open would send,
// see wasm/element/early_request_test.go): the connection startFetch
// would have once its response came (the Element knows the response from
// widget.Early), its inbox holding every byte from the first
// (trickle-worker.js's adopt). Stopping it cancels the body, which aborts
// the request.
func adoptFetch(e *mount, gen int, early js.Value) *conn {
	c := &conn{gen: gen, el: e}
	if early.Get("failed").Bool() {
		c.send(msg{kind: mFetchErr, val: js.Global().Get("Error").New(early.Get("end"))})
		return c
	}
	c.pending = true
	c.inbox = browser.Call("adopt", early, c.endFunc())
	return c
}

// stop aborts the fetch or closes the WebSocket; userStop also asks the
// relay, over the WebSocket, to stop the generation. Callbacks already
// queued find their generation stale and are dropped.
func (c *conn) stop(userStop bool) {
	if c.stopped {
		return
	}
	c.stopped = true
	if c.ws.Truthy() {
		c.inbox.Call("close")
		state := c.ws.Get("readyState").Int()
		if state == 1 && userStop { // OPEN: ask the relay to stop the generation
			c.ws.Call("send", `{"type":"stop"}`)
			// The relay's stopped status, on this socket, says what the
			// answer cost (widget's StopStatus): wait for it, a bounded
			// time, then close (onclose releases).
			c.ws.Set("onmessage", c.fn(func(a []js.Value) {
				c.send(msg{kind: mStopStatus, val: arg0(a).Get("data")})
			}))
			time.AfterFunc(stopStatusWait, func() { c.send(msg{kind: mStopWait}) })
			return
		}
		if state < 2 {
			c.ws.Call("close", 1000, "stopped")
			return // onclose will come: release then
		}
		c.release()
		return
	}
	if c.inbox.Truthy() {
		c.inbox.Call("close")
	}
	if c.controller.Truthy() {
		c.controller.Call("abort")
	}
	if !c.pending {
		c.release()
	}
}

// stopStatusWait bounds how long a stopped WebSocket waits for the relay's
// stopped status before it closes.
const stopStatusWait = 5 * time.Second

// closeStopped closes a stopped WebSocket that waited for the relay's
// status (its onclose releases it).
func (c *conn) closeStopped() {
	if c.ws.Truthy() && !c.released && c.ws.Get("readyState").Int() < 2 {
		c.ws.Call("close", 1000, "stopped")
	}
}

// release frees the connection's js.Funcs; nothing can call them any more.
func (c *conn) release() {
	if c.released {
		return
	}
	c.released = true
	if c.ws.Truthy() {
		for _, ev := range []string{"onopen", "onmessage", "onclose", "onerror"} {
			c.ws.Set(ev, js.Null())
		}
	}
	for _, f := range c.funcs {
		releaseFunc(f)
	}
	c.funcs = nil
}

// releaseStale handles a callback from a connection that was replaced or
// stopped: a terminal one means no more can come.
func releaseStale(m msg) {
	if m.c == nil {
		return
	}
	switch m.kind {
	case mDone, mReadErr, mFetchErr:
		m.c.release()
	case mResponse:
		// An aborted fetch can still resolve; its body is never read.
		m.c.release()
	}
}

// dialWS opens a WebSocket through the browser's own WebSocket (the
// coder/websocket client would add its size to the .wasm:
// docs/notes/widget-size.md); the Element sends its first message when
// it opens. trickle.js puts every message — the relay sends one SSE
// event's text per message — as bytes into the connection's inbox, which
// feeds the same pipeline as the fetch transport.
func dialWS(e *mount, gen int, url string) *conn {
	c := &conn{gen: gen, el: e}
	ws := js.Global().Get("WebSocket").New(url)
	ws.Set("binaryType", "arraybuffer")
	c.ws = ws
	c.inbox = browser.Call("wsInbox", ws)
	ws.Set("onopen", c.on(mWSOpen))
	ws.Set("onclose", c.on(mDone))
	ws.Set("onerror", c.fn(func([]js.Value) {})) // a close event always follows
	return c
}
