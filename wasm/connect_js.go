//go:build js && wasm

package wasm

import (
	"time"

	"syscall/js"

	"github.com/trickle-dev/trickle/internal/widget"
)

// open starts a connection: the first one, or a resume after a drop.
func (e *element) open(resume bool) {
	e.connGen++
	r := e.req
	if r.WebSocket {
		wsURL, first := r.WSURL, r.Body
		if resume {
			wsURL, first = r.WSResume, widget.ResumeMessage(e.streamID, e.sess.LastEventID())
		}
		e.conn = dialWS(e, e.connGen, wsURL, first)
		return
	}
	if early := e.early; early.Type() == js.TypeObject && !resume {
		e.early = js.Undefined() // once: a retry sends the request again
		e.conn = adoptFetch(e, e.connGen, early)
		return
	}
	url, init := r.URL, e.init
	switch {
	case resume:
		u, _ := widget.StreamURLs(r.Endpoint, e.streamID)
		url = u.Resume
		init = fetchInit("GET", r.ResumeHeaders(e.sess.LastEventID()), "")
	case !r.Stream:
		init = fetchInit("POST", r.Headers, r.Body)
	}
	e.conn = startFetch(e, e.connGen, url, init)
}

// fetchInit is a RequestInit.
func fetchInit(method string, headers [][2]string, body string) js.Value {
	init := js.Global().Get("Object").New()
	init.Set("method", method)
	hs := js.Global().Get("Array").New(len(headers))
	for i, kv := range headers {
		hs.SetIndex(i, js.Global().Get("Array").New(kv[0], kv[1]))
	}
	init.Set("headers", hs)
	if body != "" {
		init.Set("body", body)
	}
	return init
}

// onConn handles what the open connection reports.
func (e *element) onConn(m msg) {
	c := e.conn
	switch m.kind {
	case mWSOpen:
		c.opened = true
		c.ws.Call("send", c.first)
	case mResponse:
		resp := m.val
		if id := resp.Get("headers").Call("get", "X-Trickle-Stream"); !id.IsNull() {
			e.streamID = id.String()
		}
		if !resp.Get("ok").Bool() {
			c.httpStatus = resp.Get("status").Int()
		}
		c.read(resp)
	case mDone, mReadErr, mFetchErr:
		// The bytes that came before the end are still in the inbox.
		e.drain()
		e.closeConn()
		e.h.want = true
		if c.httpStatus != 0 {
			e.sess.End(widget.HTTPError(c.httpStatus, c.errBody))
			return
		}
		if e.sess.Terminal() {
			e.sess.End(nil)
			return
		}
		end := widget.ConnEnd{Opened: c.opened || !c.ws.Truthy(), Clean: m.kind == mDone, Resumed: c.resumed, Events: c.events}
		var connErr error
		if m.kind != mDone {
			connErr = widget.ConnError(e.req.URL, jsErrText(m.val))
		} else if c.ws.Truthy() {
			end.Clean, connErr = widget.WSClose(c.ws.Get("url").String(), c.opened, m.val.Get("code").Int(), m.val.Get("reason").String())
		}
		// The stream broke off without its end: resume if the relay can.
		if d, ok := e.resumer.Next(e.streamID, end, e.sess.Retry()); ok {
			gen := e.connGen
			time.AfterFunc(d, func() { e.h.push(msg{kind: mRetryTimer, el: e, conn: gen}) })
			return
		}
		e.sess.End(connErr)
	}
}

func (e *element) resume() {
	e.sess.Reconnect()
	e.open(true)
	e.conn.resumed = true
}

func (e *element) closeConn() {
	if e.conn != nil {
		e.conn.stop(false)
		e.conn = nil
	}
}

func jsErrText(v js.Value) string {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return v.Get("message").String()
	}
	if v.Type() == js.TypeUndefined {
		return "connection closed"
	}
	return v.Call("toString").String()
}

// drain takes the bytes the open connection's inbox gathered since the
// last frame and feeds them, chunk by chunk with their arrival times, to the
// session.
func (e *element) drain() {
	c := e.conn
	if c == nil || c.inbox.IsUndefined() {
		return
	}
	batch := c.inbox.Call("take")
	if batch.IsNull() {
		return
	}
	n := batch.Length()
	if cap(e.buf) < n {
		e.buf = make([]byte, n+n/2)
	}
	b := e.buf[:n]
	js.CopyBytesToGo(b, batch)
	clk := now()
	chunks, err := widget.ParseInbox(b, clk.goNow, e.chunks[:0])
	e.chunks = chunks
	if err != nil {
		e.closeConn()
		e.sess.End(err)
		return
	}
	if len(chunks) > 0 && e.arrived == 0 {
		e.arrived = clk.ms(chunks[0].At)
	}
	for _, ch := range chunks {
		if !e.onBytes(c, ch) {
			return
		}
	}
}

// onBytes handles one chunk of the open connection; it reports false once
// the connection is closed (the answer can no longer change).
func (e *element) onBytes(c *conn, ch widget.InboxChunk) bool {
	if c.httpStatus != 0 {
		if len(c.errBody) < widget.MaxErrorBody {
			c.errBody = append(c.errBody, ch.Data...)
		}
		return true
	}
	before := e.sess.LastEventID()
	err := e.sess.WriteAt(ch.Data, ch.At)
	if id := e.sess.LastEventID(); id != before {
		c.events = true
		if e.streamID == "" {
			e.streamID = widget.StreamID(id)
		}
	}
	if e.sess.TookFirstToken() {
		u := e.last()
		u.Events = append(u.Events, widget.FirstTokenEvent(e.sess.Metrics()))
	}
	if err != nil || e.sess.Terminal() {
		// An event too large, an error event, the relay's status, or the
		// end marker: nothing more will change the answer.
		e.closeConn()
		e.sess.End(nil)
		e.h.want = true
		return false
	}
	return true
}
