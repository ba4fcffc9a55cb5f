//go:build js && wasm

package wasm

import (
	"errors"
	"fmt"
	"html"
	"strconv"
	"strings"
	"sync"
	"time"

	"syscall/js"

	"github.com/trickle-dev/trickle/internal/widget"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// Boot hands the loader its API ({attach(el) → handle}), warms goldmark when
// the page is idle, and keeps the Go program alive. Called by
// wasm/cmd/widget's main.
func Boot() {
	collectBetweenAnswers()
	api := js.Global().Get("Object").New()
	api.Set("attach", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) == 0 {
			return js.Null()
		}
		return attach(args[0])
	}))
	warm := make(chan struct{}, 1)
	idle := js.FuncOf(func(js.Value, []js.Value) any {
		select {
		case warm <- struct{}{}:
		default:
		}
		return nil
	})
	if ric := js.Global().Get("requestIdleCallback"); ric.Type() == js.TypeFunction {
		ric.Invoke(idle, map[string]any{"timeout": 2000})
	} else {
		js.Global().Call("setTimeout", idle, 50)
	}
	browser = js.Global().Call("__trickleBoot", api)
	<-warm
	idle.Release()
	warmUp()
	select {}
}

// browser is the loader's helpers (trickle.js's BROWSER): patchAnswer
// applies a frame's change to the answer in one call, where doing it from
// Go would cross into JavaScript for every node on the way; frames
// schedules animation frames; readBody and wsInbox gather a connection's
// bytes until the next frame takes them.
var browser js.Value

var warmOnce sync.Once

// warmUp renders a sample once per page: at the first idle moment, or —
// when an answer is asked for before that — right after its request went
// out, while the network is the one working.
func warmUp() {
	warmOnce.Do(func() {
		html := widget.WarmUp(render.Policy{SameOrigin: js.Global().Get("location").Get("origin").String()})
		// The browser's side of a frame has first calls too: Chrome's
		// first HTML fragment parse of a page took 5 ms in the benchmark
		// (a frame's insertAdjacentHTML early in the answer). Parse the
		// sample's HTML once into an element that is never attached: no
		// style, layout or paint, nothing a reader or screen reader sees.
		scratch := js.Global().Get("document").Call("createElement", "div")
		scratch.Call("insertAdjacentHTML", "beforeend", html)
	})
}

// msgKind says what happened; every JS callback turns into one msg on the
// element's channel and returns at once (never block in a js.FuncOf).
type msgKind int

const (
	mResponse      msgKind = iota + 1 // fetch resolved: val is the Response
	mFetchErr                         // fetch rejected before a response
	mDone                             // the body ended / the WebSocket closed
	mReadErr                          // reading the body failed mid-way
	mWSOpen                           // the WebSocket opened
	mFrame                            // an animation frame (or trickle.js's timer standing in for one)
	mRetryTimer                       // time to resume a dropped connection
	mAnnounceTimer                    // the announcer has something due
	mAsk                              // ask()/stream()/retry() from the page
	mStop                             // stop() or the Stop of a new ask
)

type msg struct {
	kind msgKind
	conn int // connection generation the callback belongs to
	val  js.Value
	req  *request
	c    *conn
}

// request is what to send: a fetch (url + init) or a WebSocket request.
type request struct {
	url       string   // absolute
	init      js.Value // RequestInit (fetch), without signal
	body      string   // JSON request (WebSocket)
	websocket bool
	wsURL     string
	wsResume  string
	endpoint  string // absolute endpoint (relay control URLs derive from it)
	resolve   js.Value
}

type element struct {
	el                  js.Value
	content, thinking   js.Value
	thinkingText, tools js.Value
	notice, noticeText  js.Value
	retryBtn, jump      js.Value
	metricsDL, status   js.Value
	announcer           js.Value
	tail                js.Value

	msgs chan msg
	// gcHeld: this element has an answer streaming for the GC pacer.
	gcHeld bool
	sess   *widget.Session
	req    *request // the answer in progress or the last one (retry)

	conn     *conn // the open connection, nil when none
	connGen  int
	streamID string
	attempt  int // resume attempts so far for this drop

	// schedule asks trickle.js for one frame (it merges requests, and a
	// timer stands in for the animation frame on a hidden page); arriving
	// bytes ask for one there without entering Go.
	schedule   js.Value
	buf        []byte              // the last inbox batch, reused
	chunks     []widget.InboxChunk // its chunks, reused
	announceAt time.Time

	// follower keeps the answer in view while the reader is at the bottom
	// (trickle.js's follow: scroll events and resizes never enter Go);
	// observes is false where ResizeObserver is missing, and then every
	// frame that grew tells it.
	follower js.Value
	observes bool

	frameFn, retryFn js.Func
	handle           js.Value
}

func attach(el js.Value) js.Value {
	q := func(part string) js.Value {
		return el.Call("querySelector", `:scope > [data-trickle="`+part+`"], :scope [data-trickle="`+part+`"]`)
	}
	e := &element{el: el, msgs: make(chan msg, 1024)}
	e.content, e.thinking, e.thinkingText = q("content"), q("thinking"), q("thinking-text")
	e.tools, e.notice, e.noticeText = q("tools"), q("notice"), q("notice-text")
	e.retryBtn, e.jump, e.metricsDL = q("retry"), q("jump"), q("metrics")
	e.status, e.announcer = q("status"), q("announcer")
	e.sess = widget.NewSession(widget.Config{})

	send := func(m msg) {
		select {
		case e.msgs <- m:
		default:
			// 1024 pending messages means the loop is gone; dropping beats
			// blocking the browser's event loop.
		}
	}
	e.frameFn = js.FuncOf(func(js.Value, []js.Value) any { send(msg{kind: mFrame}); return nil })
	e.schedule = browser.Call("frames", e.frameFn)
	parts := js.Global().Get("Array").New(e.content, e.thinking, e.tools)
	e.follower = browser.Call("follow", el, e.jump, parts)
	e.observes = e.follower.Get("observes").Bool()
	e.retryFn = js.FuncOf(func(js.Value, []js.Value) any {
		if e.req != nil {
			r := *e.req
			r.resolve = js.Undefined()
			send(msg{kind: mAsk, req: &r})
		}
		return nil
	})
	if e.retryBtn.Truthy() {
		e.retryBtn.Call("addEventListener", "click", e.retryFn)
	}

	h := js.Global().Get("Object").New()
	promise := js.Global().Get("Promise")
	startAnswer := func(build func() (*request, error)) any {
		var resolve js.Value
		exec := js.FuncOf(func(_ js.Value, args []js.Value) any { resolve = args[0]; return nil })
		p := promise.New(exec)
		exec.Release()
		r, err := safely(build)
		if err != nil {
			e.dispatch("trickle-error", fmt.Sprintf(`{"status":"failed","message":%q}`, err.Error()))
			resolve.Invoke("failed")
			return p
		}
		r.resolve = resolve
		send(msg{kind: mAsk, req: r})
		return p
	}
	h.Set("ask", js.FuncOf(func(_ js.Value, args []js.Value) any {
		var arg js.Value
		if len(args) > 0 {
			arg = args[0]
		}
		return startAnswer(func() (*request, error) { return e.askRequest(arg) })
	}))
	h.Set("stream", js.FuncOf(func(_ js.Value, args []js.Value) any {
		return startAnswer(func() (*request, error) {
			if len(args) == 0 {
				return nil, errors.New("trickle: stream(url, init) needs a URL")
			}
			u, err := absURL(args[0].String())
			if err != nil {
				return nil, err
			}
			init := js.Global().Get("Object").New()
			if len(args) > 1 && args[1].Type() == js.TypeObject {
				js.Global().Get("Object").Call("assign", init, args[1])
			}
			return &request{url: u, init: init, endpoint: u}, nil
		})
	}))
	h.Set("retry", js.FuncOf(func(js.Value, []js.Value) any {
		if e.req == nil {
			return js.Global().Get("Promise").Call("resolve", e.statusWord())
		}
		r := *e.req
		return startAnswer(func() (*request, error) { return &r, nil })
	}))
	h.Set("stop", js.FuncOf(func(js.Value, []js.Value) any { send(msg{kind: mStop}); return nil }))
	h.Set("status", js.FuncOf(func(js.Value, []js.Value) any { return e.statusWord() }))
	h.Set("streamId", js.FuncOf(func(js.Value, []js.Value) any { return e.streamID }))
	h.Set("text", js.FuncOf(func(js.Value, []js.Value) any { return e.sess.Text() }))
	h.Set("metrics", js.FuncOf(func(js.Value, []js.Value) any { return e.sess.Metrics().JSON() }))
	e.handle = h
	go e.loop()
	return h
}

// safely runs build, turning a JavaScript exception (new URL of a bad URL,
// JSON.stringify of a cyclic object) into an error: a panic inside a
// js.FuncOf callback would end the Go program.
func safely(build func() (*request, error)) (r *request, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("trickle: %v", p)
		}
	}()
	return build()
}

func (e *element) statusWord() string {
	if e.req == nil {
		return "idle"
	}
	if st := e.sess.Status(); st != stream.Waiting {
		return st.String()
	}
	return "streaming"
}

func absURL(u string) (string, error) {
	v := js.Global().Get("URL").New(u, js.Global().Get("document").Get("baseURI"))
	return v.Get("href").String(), nil
}

func (e *element) attr(name, def string) string {
	v := e.el.Call("getAttribute", name)
	if v.IsNull() || strings.TrimSpace(v.String()) == "" {
		return def
	}
	return strings.TrimSpace(v.String())
}

// askRequest builds the request for ask(prompt | body) from the element's
// attributes and headers property.
func (e *element) askRequest(arg js.Value) (*request, error) {
	model := e.attr("model", "")
	var body string
	switch arg.Type() {
	case js.TypeString:
		body = widget.PromptBody(arg.String(), model)
	case js.TypeObject:
		var err error
		body, err = widget.StreamingBody(js.Global().Get("JSON").Call("stringify", arg).String(), model)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w (got %s)", widget.ErrBadRequestBody, arg.Type())
	}
	endpoint, err := absURL(e.attr("endpoint", "/v1/chat/completions"))
	if err != nil {
		return nil, err
	}
	r := &request{url: endpoint, endpoint: endpoint, body: body}
	headers := js.Global().Get("Object").New()
	if hv := e.el.Get("headers"); hv.Type() == js.TypeObject {
		js.Global().Get("Object").Call("assign", headers, hv)
	}
	if e.attr("transport", "sse") == "websocket" {
		r.websocket = true
		auth := ""
		keys := js.Global().Get("Object").Call("keys", headers)
		for i := 0; i < keys.Length(); i++ {
			if k := keys.Index(i).String(); strings.EqualFold(k, "Authorization") {
				auth = headers.Get(k).String()
			}
		}
		r.wsURL, r.wsResume, err = widget.WebSocketURLs(endpoint, e.attr("ws-endpoint", ""), auth)
		return r, err
	}
	headers.Set("Content-Type", "application/json")
	headers.Set("Accept", "text/event-stream")
	init := js.Global().Get("Object").New()
	init.Set("method", "POST")
	init.Set("headers", headers)
	init.Set("body", body)
	r.init = init
	return r, nil
}

func (e *element) policy() render.Policy {
	p := render.Policy{SameOrigin: js.Global().Get("location").Get("origin").String()}
	if o := e.attr("image-origins", ""); o != "" {
		p.AllowedImageOrigins = strings.Fields(o)
	}
	return p
}

// loop owns all of the element's state; every callback reaches it through
// e.msgs, so nothing is shared between goroutines.
func (e *element) loop() {
	for m := range e.msgs {
		e.dispatchMsg(m)
	}
}

// dispatchMsg runs one message. A panic would end the whole Go program — every
// element on the page — so it is turned into a failed answer instead.
func (e *element) dispatchMsg(m msg) {
	defer func() {
		if r := recover(); r != nil {
			js.Global().Get("console").Call("error", fmt.Sprintf("trickle: internal error: %v", r))
			e.closeConn()
			if e.req != nil && !e.sess.Ended() {
				e.sess.End(fmt.Errorf("trickle: internal error: %v", r))
				func() {
					defer func() { _ = recover() }() // the final frame itself may be what panics
					e.frame()
				}()
			}
		}
	}()
	switch m.kind {
	case mAsk:
		e.begin(m.req)
	case mStop:
		e.stop()
	case mResponse, mFetchErr, mDone, mReadErr, mWSOpen:
		if e.conn == nil || m.conn != e.conn.gen {
			releaseStale(m)
			return
		}
		e.onConn(m)
	case mFrame:
		e.frame()
	case mRetryTimer:
		if m.conn == e.connGen && e.conn == nil && !e.sess.Ended() {
			e.resume()
		}
	case mAnnounceTimer:
		e.announceAt = time.Time{}
		e.requestFrame()
	}
}

// begin starts an answer, stopping the one in progress.
func (e *element) begin(r *request) {
	if e.req != nil && !e.sess.Ended() {
		e.stop()
	}
	e.req = r
	e.sess = widget.NewSession(widget.Config{
		Dialect:  e.attr("dialect", "auto"),
		Announce: e.attr("announce", "sentences"),
		Policy:   e.policy(),
	})
	e.streamID, e.attempt = "", 0
	if !e.gcHeld {
		// Held until this element's answers end (an answer replaced
		// before its final frame keeps the hold for the next one).
		gc.Begin()
		e.gcHeld = true
	}
	e.content.Set("innerHTML", `<div data-trickle="tail"></div>`)
	e.tail = e.content.Get("firstElementChild")
	e.thinkingText.Set("textContent", "")
	e.thinking.Set("hidden", true)
	e.tools.Set("innerHTML", "")
	e.tools.Set("hidden", true)
	e.notice.Set("hidden", true)
	e.notice.Call("removeAttribute", "data-kind")
	e.retryBtn.Set("hidden", true)
	e.status.Set("textContent", "")
	e.announcer.Set("textContent", "")
	e.metricsDL.Set("hidden", true)
	e.follower.Call("start")
	e.el.Call("setAttribute", "aria-busy", "true")
	e.el.Call("setAttribute", "data-status", "streaming")
	e.dispatch("trickle-start", `{"status":"streaming"}`)
	e.open(false)
	e.requestFrame() // the a11y "started" status, if any
	warmUp()
}

// stop: abort the request, ask the relay to cancel, end the answer.
func (e *element) stop() {
	if e.req == nil || e.sess.Ended() {
		return
	}
	e.drain() // what arrived before Stop is part of the answer
	if c := e.conn; c != nil {
		c.stop(true)
		e.conn = nil
	}
	if e.streamID != "" && !e.req.websocket {
		if u, err := widget.StreamURLs(e.req.endpoint, e.streamID); err == nil {
			opts := map[string]any{"method": "DELETE", "keepalive": true}
			js.Global().Call("fetch", u.Cancel, opts).Call("catch", noop)
		}
	}
	e.connGen++ // a pending retry timer must not resume a stopped answer
	e.sess.End(widget.ErrStoppedByUser)
	e.frame()
}

var noop = js.FuncOf(func(js.Value, []js.Value) any { return nil })

// open starts a connection: the first one, or a resume after a drop.
func (e *element) open(resume bool) {
	e.connGen++
	r := e.req
	if r.websocket {
		wsURL := r.wsURL
		first := r.body
		if resume {
			wsURL = r.wsResume
			first = fmt.Sprintf(`{"type":"resume","stream":%q,"last_event_id":%q}`, e.streamID, e.sess.LastEventID())
		}
		e.conn = dialWS(e.connGen, wsURL, first, e.msgs, e.schedule)
		return
	}
	url, init := r.url, r.init
	if resume {
		u, _ := widget.StreamURLs(r.endpoint, e.streamID)
		url = u.Resume
		init = js.Global().Get("Object").New()
		headers := js.Global().Get("Object").New()
		if hv := e.el.Get("headers"); hv.Type() == js.TypeObject {
			js.Global().Get("Object").Call("assign", headers, hv)
		}
		headers.Set("Accept", "text/event-stream")
		if last := e.sess.LastEventID(); last != "" {
			headers.Set("Last-Event-ID", last)
		}
		init.Set("headers", headers)
	}
	e.conn = startFetch(e.connGen, url, init, e.msgs)
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
		c.read(resp, e.schedule)
	case mDone, mReadErr, mFetchErr:
		// The bytes that came before the end are still in the inbox.
		e.drain()
		e.closeConn()
		if c.httpStatus != 0 {
			e.sess.End(httpError(c.httpStatus, c.errBody))
			e.requestFrame()
			return
		}
		if e.sess.Terminal() {
			e.sess.End(nil)
			e.requestFrame()
			return
		}
		clean := m.kind == mDone
		var connErr error
		if m.kind != mDone {
			connErr = fmt.Errorf("trickle: the connection to %s failed: %s", e.req.url, jsErrText(m.val))
		} else if c.ws.Truthy() {
			// A WebSocket that never opened was refused (401, 403, no
			// such endpoint); one that closed with another code than
			// 1000 (normal) was cut: both are failures, not a clean end.
			if code := m.val.Get("code").Int(); !c.opened {
				clean, connErr = false, fmt.Errorf("trickle: could not open the WebSocket %s (closed with code %d)", c.ws.Get("url").String(), code)
			} else if code != 1000 {
				clean, connErr = false, fmt.Errorf("trickle: the WebSocket closed with code %d %s", code, m.val.Get("reason").String())
			}
		}
		// The stream broke off without its end: resume if the relay can
		// (we know the stream and the last event), unless a resumed
		// connection just ended cleanly with nothing new (the relay has no
		// more). A connection that errors may have brought events the
		// browser then discarded (an errored ReadableStream drops the
		// chunks not yet read), so errors are retried, with backoff.
		if c.opened || !c.ws.Truthy() {
			if e.resumable(c, clean) {
				return
			}
		}
		e.sess.End(connErr)
		e.requestFrame()
	}
}

func (e *element) resumable(c *conn, clean bool) bool {
	// Without a last event id (everything of the first connection was
	// lost) the relay replays the stream from its start.
	if e.streamID == "" || (c.resumed && !c.events && clean) {
		return false
	}
	if c.events {
		e.attempt = 0
	}
	d, ok := widget.DefaultBackoff.Delay(e.attempt, e.sess.Retry())
	if !ok {
		return false
	}
	e.attempt++
	gen := e.connGen
	time.AfterFunc(d, func() { e.msgs <- msg{kind: mRetryTimer, conn: gen} })
	return true
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

func httpError(status int, body []byte) error {
	msg := strings.TrimSpace(string(body))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		return fmt.Errorf("trickle: the server answered HTTP %d", status)
	}
	return fmt.Errorf("trickle: the server answered HTTP %d: %s", status, msg)
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

// requestFrame asks for one animation frame (never one per chunk; see
// schedule).
func (e *element) requestFrame() { e.schedule.Invoke() }

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
	chunks, err := widget.ParseInbox(b, time.Now(), e.chunks[:0])
	e.chunks = chunks
	if err != nil {
		e.closeConn()
		e.sess.End(err)
		return
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
		if len(c.errBody) < 2048 {
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
		e.dispatch("trickle-first-token", fmt.Sprintf(`{"ttft_ms":%v}`, e.sess.Metrics().TTFT))
	}
	if err != nil || e.sess.Terminal() {
		// An event too large, an error event, the relay's status, or the
		// end marker: nothing more will change the answer.
		e.closeConn()
		e.sess.End(nil)
		return false
	}
	return true
}

// frame applies one Patch: the settled HTML before the tail and the tail's
// new HTML (the answer's only two DOM calls), then the side panels.
func (e *element) frame() {
	if e.req == nil {
		return
	}
	t0 := time.Now()
	e.drain()
	p := e.sess.Frame()
	if p.Empty() {
		e.scheduleAnnouncer()
		return
	}
	grew := p.Append != "" || p.TailChanged || p.Thinking != "" || p.ToolsChanged
	if p.Append != "" || p.TailChanged || p.Final {
		// One call for the answer: settled HTML before the tail, then the
		// tail's patch (keep -1: unchanged), or the tail removed when final.
		tp := p.TailPatch
		keep := -1
		if p.TailChanged {
			keep = tp.Keep
		}
		browser.Call("patchAnswer", e.tail, p.Append, pathString(tp.Path), keep, tp.Text, tp.HTML, p.Final, p.Unwrap)
	}
	if p.Thinking != "" {
		e.thinking.Set("hidden", false)
		e.thinkingText.Call("insertAdjacentText", "beforeend", p.Thinking)
	}
	if p.ToolsChanged {
		e.tools.Set("innerHTML", p.Tools)
		e.tools.Set("hidden", p.Tools == "")
	}
	if len(p.Announce) > 0 {
		var b strings.Builder
		for _, a := range p.Announce {
			b.WriteString("<p>")
			b.WriteString(html.EscapeString(a))
			b.WriteString("</p>")
		}
		e.announcer.Call("insertAdjacentHTML", "beforeend", b.String())
	}
	if p.StatusChanged {
		e.status.Set("textContent", p.Status)
	}
	// Following the answer is the follower's: the final frame tells it,
	// the others only where no ResizeObserver does.
	if p.Final {
		e.follower.Call("end", grew)
	} else if grew && !e.observes {
		e.follower.Call("grew")
	}
	e.sess.RecordFrame(time.Since(t0))
	if p.Final {
		e.finish()
	}
	e.scheduleAnnouncer()
	if !p.Final && e.sess.Dirty() {
		e.requestFrame()
	}
}

// pathString writes a TailPatch path as patchAnswer reads it: "2,0,5".
func pathString(path []int) string {
	if len(path) == 0 {
		return ""
	}
	b := make([]byte, 0, 4*len(path))
	for i, n := range path {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return string(b)
}

func (e *element) scheduleAnnouncer() {
	due, ok := e.sess.NextAnnouncement()
	if !ok || (!e.announceAt.IsZero() && !due.Before(e.announceAt)) {
		return
	}
	e.announceAt = due
	time.AfterFunc(max(time.Until(due), time.Millisecond), func() { e.msgs <- msg{kind: mAnnounceTimer} })
}

// finish shows how the answer ended and settles the promise.
func (e *element) finish() {
	st := e.sess.Status()
	status := st.String()
	e.el.Call("removeAttribute", "aria-busy")
	e.el.Call("setAttribute", "data-status", status)
	if text := widget.Notice(st, e.sess.Err()); text != "" {
		e.noticeText.Set("textContent", text)
		e.notice.Call("setAttribute", "data-kind", status)
		e.notice.Set("hidden", false)
		e.retryBtn.Set("hidden", st == stream.Stopped)
	}
	metrics := e.sess.Metrics().JSON()
	if e.el.Call("hasAttribute", "show-metrics").Bool() {
		e.showMetrics(e.sess.Metrics())
	}
	if st == stream.Failed {
		msg := "failed"
		if err := e.sess.Err(); err != nil {
			msg = err.Error()
		}
		e.dispatch("trickle-error", fmt.Sprintf(`{"status":"failed","message":%q}`, msg))
	}
	e.dispatch("trickle-end", fmt.Sprintf(`{"status":%q,"metrics":%s}`, status, metrics))
	if e.gcHeld {
		e.gcHeld = false
		gc.End()
	}
	if e.req.resolve.Type() == js.TypeFunction {
		e.req.resolve.Invoke(status)
		e.req.resolve = js.Undefined()
	}
}

func (e *element) showMetrics(m widget.Metrics) {
	rows := [][2]string{
		{"Time to first byte", fmt.Sprintf("%.0f ms", m.TTFB)},
		{"Time to first token", fmt.Sprintf("%.0f ms", m.TTFT)},
		{"Gap p50 / p95", fmt.Sprintf("%.0f / %.0f ms", m.GapP50, m.GapP95)},
		{"Tokens per second", fmt.Sprintf("%.1f", m.TokensPerS)},
		{"Bytes", fmt.Sprintf("%d", m.Bytes)},
		{"Buffering", m.Buffering},
		{"Longest frame", fmt.Sprintf("%.1f ms", m.FrameMax)},
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("<dt>" + html.EscapeString(r[0]) + "</dt><dd>" + html.EscapeString(r[1]) + "</dd>")
	}
	e.metricsDL.Set("innerHTML", b.String())
	e.metricsDL.Set("hidden", false)
}

func (e *element) dispatch(name, detailJSON string) {
	detail := js.Global().Get("JSON").Call("parse", detailJSON)
	ev := js.Global().Get("CustomEvent").New(name, map[string]any{"bubbles": true, "composed": true, "detail": detail})
	e.el.Call("dispatchEvent", ev)
}
