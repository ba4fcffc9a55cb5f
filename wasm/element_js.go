//go:build js && wasm

package wasm

import (
	"strings"
	"time"

	"syscall/js"

	"github.com/trickle-dev/trickle/wasm/element"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// element is one <trickle-answer>'s browser edge: it gives its
// element.Element, which makes every decision, the browser's fetch,
// WebSocket, timers and clock (element.Env), and turns the callbacks of
// its connections into the Element's events. It holds no goroutine and no
// js.Func of its own (its connections do, until they end), so detach
// releases everything it has.
type mount struct {
	*element.Element
	h *host

	conn *conn    // the open connection, nil when none
	init js.Value // stream()'s RequestInit, as the page gave it
	// early is the request the page sent for the ask before Go was ready,
	// until the answer's first connection adopts it.
	early js.Value
	buf   []byte // the last inbox batch, reused
}

func newElement(h *host, id int) *mount {
	e := &mount{h: h, init: js.Undefined(), early: js.Undefined()}
	e.Element = element.NewElement(id, envRef(id), clock, gc, h.thread)
	return e
}

// keep holds what an ask or stream command v brings beside its JSON:
// stream()'s RequestInit and the page's early request, whose response it
// returns for the Element.
func (e *mount) keep(c element.Command, v js.Value) *element.Early {
	if c.Kind != protocol.Ask && c.Kind != protocol.Stream {
		return nil
	}
	e.init, e.early = v.Get("init"), v.Get("early")
	if e.early.Type() != js.TypeObject {
		return nil
	}
	headers := e.early.Get("headers") // a plain object, lower-case names
	early := &element.Early{OK: e.early.Get("ok").Bool(), Status: e.early.Get("status").Int(), StreamID: e.early.Get("stream").String(), StreamURL: e.early.Get("streamURL").String(),
		Head: element.ResponseHead(e.early.Get("type").String(), func(name string) string {
			if v := headers.Get(strings.ToLower(name)); v.Type() == js.TypeString {
				return v.String()
			}
			return ""
		}),
		StartTold: e.early.Get("started").Truthy(), FirstTokenTold: e.early.Get("firstToken").Truthy()}
	if ms := e.early.Get("firstTokenMs"); ms.Type() == js.TypeNumber {
		early.FirstTokenMS = ms.Float()
	}
	return early
}

// handle turns a connection's or a timer's message into the Element's
// event; a stale connection's callback releases it.
func (e *mount) handle(m msg) {
	switch m.kind {
	case mResponse:
		resp := m.val
		headers := resp.Get("headers")
		get := func(name string) string {
			if v := headers.Call("get", name); v.Type() == js.TypeString {
				return v.String()
			}
			return ""
		}
		r := element.Response{OK: resp.Get("ok").Bool(), Status: resp.Get("status").Int(), StreamID: get("X-Trickle-Stream"), StreamURL: get("X-Trickle-Stream-URL"),
			Head: element.ResponseHead(resp.Get("type").String(), get)}
		if e.Response(m.conn, r) {
			m.c.read(resp)
			return
		}
	case mWSOpen:
		if e.Opened(m.conn) {
			return
		}
	case mDone, mReadErr, mFetchErr:
		end := element.End{Kind: element.EndDone}
		switch {
		case m.kind == mReadErr:
			end = element.End{Kind: element.EndReadError, Err: jsErrText(m.val)}
		case m.kind == mFetchErr:
			end = element.End{Kind: element.EndFetchError, Err: jsErrText(m.val)}
		case m.c.ws.Truthy():
			end.Close = &element.WSClosed{URL: m.c.ws.Get("url").String(), Code: m.val.Get("code").Int(), Reason: m.val.Get("reason").String()}
		}
		if e.Ended(m.conn, end) {
			e.h.pace.End() // its frame goes at once
			return
		}
	case mTimer:
		e.Timer(m.timer, e.h.inFlight)
		return
	case mCost:
		r := element.CancelResult{URL: m.url, Status: m.val.Get("status").Int(), Body: []byte(m.val.Get("body").String())}
		if v := m.val.Get("error"); v.Type() == js.TypeString {
			r.Err = v.String()
		}
		e.Cancelled(r)
		return
	case mStopStatus:
		if m.val.Type() == js.TypeString && e.StopStatus(m.val.String()) {
			m.c.closeStopped()
		}
		return
	case mStopWait:
		m.c.closeStopped()
		return
	}
	releaseStale(m)
}

func jsErrText(v js.Value) string {
	switch {
	case v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString:
		return v.Get("message").String()
	case v.Type() == js.TypeUndefined:
		return "connection closed"
	}
	return v.Call("toString").String()
}

// clock is every element's element.Clock: Go's time, and the page's
// milliseconds since the epoch for one of its instants.
var clock = element.Clock{Now: time.Now, EpochMS: func(t time.Time) float64 { return now().MS(t) }}

// envRef is an element's element.Env: its id, by which the methods below
// find its mount in the page's registry. Not the *mount itself: an Env is
// an interface value, and a *mount reaches the element's time.Time fields
// (see host). An element gone from the registry is called no more.
type envRef int

func (r envRef) mount() *mount {
	e, _ := elements.Get(int(r))
	return e
}

func (r envRef) Open(c element.Conn) {
	if e := r.mount(); e != nil {
		e.Open(c)
	}
}

func (r envRef) Close(gen int, stop bool) {
	if e := r.mount(); e != nil {
		e.Close(gen, stop)
	}
}

func (r envRef) Send(gen int, text string) {
	if e := r.mount(); e != nil {
		e.Send(gen, text)
	}
}

func (r envRef) Take(gen int) []byte {
	if e := r.mount(); e != nil {
		return e.Take(gen)
	}
	return nil
}

func (r envRef) Cancel(url string, headers [][2]string) {
	if e := r.mount(); e != nil {
		e.Cancel(url, headers)
	}
}

func (r envRef) After(d time.Duration, t element.Timer) {
	if e := r.mount(); e != nil {
		e.After(d, t)
	}
}

func (r envRef) Want() {
	if e := r.mount(); e != nil {
		e.Want()
	}
}

func (r envRef) Say(msg []byte) {
	if e := r.mount(); e != nil {
		e.Say(msg)
	}
}

// What the element's envRef does.

func (e *mount) Open(o element.Conn) {
	switch {
	case o.WebSocket:
		e.conn = dialWS(e, o.Gen, o.URL)
	case o.Adopt:
		e.conn = adoptFetch(e, o.Gen, e.early)
		e.early = js.Undefined() // once: a retry sends the request again
	default:
		init := e.init
		if !o.PageInit {
			init = fetchInit(o.Method, o.Headers, o.Body)
		}
		e.conn = startFetch(e, o.Gen, o.URL, init)
	}
}

// fetchInit is a RequestInit.
func fetchInit(method string, headers [][2]string, body string) js.Value {
	hs := make([]any, len(headers))
	for i, kv := range headers {
		hs[i] = []any{kv[0], kv[1]}
	}
	init := js.ValueOf(map[string]any{"method": method, "headers": hs})
	if body != "" {
		init.Set("body", body)
	}
	return init
}

func (e *mount) Close(gen int, stop bool) {
	if c := e.conn; c != nil && c.gen == gen {
		c.stop(stop)
		e.conn = nil
	}
}

func (e *mount) Send(gen int, text string) {
	if c := e.conn; c != nil && c.gen == gen && c.ws.Truthy() {
		c.ws.Call("send", text)
	}
}

func (e *mount) Take(gen int) []byte {
	c := e.conn
	if c == nil || c.gen != gen || c.inbox.IsUndefined() {
		return nil
	}
	batch := c.inbox.Call("take")
	if batch.IsNull() {
		return nil
	}
	n := batch.Length()
	if cap(e.buf) < n {
		e.buf = make([]byte, n+n/2)
	}
	b := e.buf[:n]
	js.CopyBytesToGo(b, batch)
	return b
}

func (e *mount) Cancel(url string, headers [][2]string) {
	var done js.Func
	done = newFunc(func(_ js.Value, args []js.Value) any {
		releaseFunc(done)
		e.h.push(msg{kind: mCost, el: e, val: arg0(args), url: url})
		return nil
	})
	hs := make([]any, len(headers))
	for i, kv := range headers {
		hs[i] = []any{kv[0], kv[1]}
	}
	browser.Call("cancel", url, js.ValueOf(hs), done)
}

func (e *mount) After(d time.Duration, t element.Timer) {
	time.AfterFunc(d, func() { e.h.push(msg{kind: mTimer, el: e, timer: t}) })
}

func (e *mount) Want() { e.h.want = true }

func (e *mount) Say(b []byte) { e.h.post(string(b)) }
