package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/trickle-dev/trickle/relay/internal/sink"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// wsControl is a client message on /v1/ws other than the first request.
type wsControl struct {
	Type        string `json:"type"`
	Stream      string `json:"stream"`
	LastEventID string `json:"last_event_id"`
}

// Buffer sizes of a WebSocket connection. net/http hands a hijacked
// connection over with 4 KiB read and 4 KiB write buffers, which
// coder/websocket keeps for the connection's life: a large part of an idle
// stream's memory (bench/load). Clients send the relay almost nothing (the
// request, stop, the close), and reads larger than the buffer bypass it.
// On the fast path the library writes nothing after the handshake; on the
// plain path its writes of events larger than the buffer bypass it too.
const (
	wsReadBuffer  = 128
	wsWriteBuffer = 128
)

// wsHijacker hands coder/websocket the connection with small buffers and
// keeps the connection and its reader: on the fast path the relay owns
// them once the handshake is done (the library's Conn is never read nor
// written, only released), on the plain path the library does all.
type wsHijacker struct {
	http.ResponseWriter
	fast bool
	conn net.Conn      // the hijacked connection
	br   *bufio.Reader // the client's bytes, after the handshake
}

// Hijack takes over the connection from net/http.
func (h *wsHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn = c
	rc := c
	// A client may send its first message right behind the handshake:
	// net/http may have read it already.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		rc = &prefixConn{Conn: c, prefix: bytes.Clone(b)}
	}
	h.br = bufio.NewReaderSize(rc, wsReadBuffer)
	var w io.Writer = rc
	if h.fast {
		w = libraryMute{}
	}
	return rc, bufio.NewReadWriter(h.br, bufio.NewWriterSize(w, wsWriteBuffer)), nil
}

// libraryMute is the library's writer on the fast path: it must never
// write (the relay writes every frame), and would fail loudly if it did.
type libraryMute struct{}

func (libraryMute) Write([]byte) (int, error) {
	return 0, errors.New("relay: coder/websocket wrote on a connection the relay owns")
}

// prefixConn reads prefix before the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// websocket is GET /v1/ws. The origin was checked by the CORS middleware
// (same origin or listed), so the library's own check is not repeated.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "shutting_down", ErrShuttingDown.Error())
		return
	}
	hj := &wsHijacker{ResponseWriter: w, fast: s.cfg.writePath == sink.Fast}
	c, err := websocket.Accept(hj, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // checked by s.cors: same origin or allowlisted
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		s.log.Info("websocket handshake failed", "err", err)
		return
	}
	var ws wsConn
	if hj.fast {
		k := sink.NewFrames(hj.conn, s.cfg.writeTimeout)
		ws = &wsOwned{lib: c, conn: hj.conn, k: k, r: k.NewReader(hj.br, s.cfg.maxBodyBytes)}
	} else {
		c.SetReadLimit(s.cfg.maxBodyBytes)
		ws = &wsLibrary{c: c, conn: hj.conn, k: sink.NewLibrary(c, hj.conn, s.cfg.writeTimeout), timeout: s.cfg.writeTimeout}
	}
	handedOff := false
	defer func() {
		if !handedOff {
			ws.closeNow()
		}
	}()

	first, err := ws.readFirst(30 * time.Second)
	if err != nil {
		ws.close(websocket.StatusPolicyViolation, "relay: no request: "+trim(err.Error()))
		return
	}
	var ctl wsControl
	json.Unmarshal(first, &ctl)
	var (
		l   *streamlog.Log
		pos int
	)
	if ctl.Type == "resume" {
		if l, pos, err = s.resumeAt(ctl.Stream, ctl.LastEventID, "websocket"); err != nil {
			f := s.refusalOf(ctl.Stream, err)
			code := websocket.StatusPolicyViolation
			switch f.code {
			case http.StatusNotFound, http.StatusGone:
				code = websocket.StatusNormalClosure
			case http.StatusServiceUnavailable:
				code = websocket.StatusTryAgainLater
			}
			msg := f.message
			if f.code == http.StatusNotFound {
				msg = goneMessage(ctl.Stream) // as before: without the "relay: " prefix
			}
			s.wsFail(ws, f.status, msg, code)
			return
		}
	} else {
		var req ChatRequest
		if err := decodeRequest(first, &req); err != nil {
			s.wsFail(ws, stream.RelayFailed, err.Error(), websocket.StatusPolicyViolation)
			return
		}
		req.Stream = true
		if l, err = s.startStream(&req, first, r.URL.Query()); err != nil {
			code := websocket.StatusPolicyViolation
			if errors.Is(err, errTooMany) || errors.Is(err, ErrShuttingDown) || errors.Is(err, ErrStoreUnavailable) {
				code = websocket.StatusTryAgainLater
			}
			s.wsFail(ws, stream.RelayFailed, err.Error(), code)
			return
		}
	}

	// The connection is taken over: the rest runs on goroutines of its
	// own so that the handler's deep stack is released while the stream
	// idles (memory per idle stream), on a context that does not end with
	// the handler.
	handedOff = true
	s.pumps.Add(1)
	s.wsStream(ws, l, pos)
}

// wsConn is a WebSocket as the relay uses it, on either write path.
type wsConn interface {
	// readFirst reads the first message, which must be text, within d.
	readFirst(d time.Duration) ([]byte, error)
	// read reads the next data message; an error means the client left.
	read() ([]byte, error)
	sink() streamlog.Sink
	write(p []byte) error
	// close sends the close frame, waits a moment for the client's, and
	// closes the connection.
	close(code websocket.StatusCode, reason string)
	closeNow()
	// setWriteDeadline gives the close handshake a write timeout of its own.
	setWriteDeadline(t time.Time)
}

// wsLibrary is the plain path: everything through coder/websocket.
type wsLibrary struct {
	c       *websocket.Conn
	conn    net.Conn
	k       *sink.Library
	timeout time.Duration
}

func (w *wsLibrary) readFirst(d time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	typ, msg, err := w.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("%w: the first message must be JSON text", ErrBadRequest)
	}
	return msg, nil
}

func (w *wsLibrary) read() ([]byte, error) {
	// No context: the read ends when the connection is closed (at the
	// end), and the library registers nothing per read.
	_, msg, err := w.c.Read(context.Background())
	return msg, err
}

func (w *wsLibrary) sink() streamlog.Sink { return w.k }
func (w *wsLibrary) write(p []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	return w.c.Write(ctx, websocket.MessageText, p)
}
func (w *wsLibrary) close(code websocket.StatusCode, reason string) { w.c.Close(code, reason) }
func (w *wsLibrary) closeNow()                                      { w.c.CloseNow() }
func (w *wsLibrary) setWriteDeadline(t time.Time) {
	if w.conn != nil {
		w.conn.SetWriteDeadline(t)
	}
}

// wsOwned is the fast path: the relay reads and writes every frame after
// the library's handshake.
type wsOwned struct {
	lib  *websocket.Conn // released at the end, never read nor written
	conn net.Conn
	k    *sink.Frames
	r    *sink.FrameReader
	// done is closed when the reading goroutine has seen the end.
	readEnd chan struct{}
}

func (w *wsOwned) readFirst(d time.Duration) ([]byte, error) {
	w.conn.SetReadDeadline(time.Now().Add(d))
	defer w.conn.SetReadDeadline(time.Time{})
	typ, msg, err := w.r.ReadMessage()
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("%w: the first message must be JSON text", ErrBadRequest)
	}
	return msg, nil
}

func (w *wsOwned) read() ([]byte, error) {
	_, msg, err := w.r.ReadMessage()
	return msg, err
}

func (w *wsOwned) sink() streamlog.Sink         { return w.k }
func (w *wsOwned) write(p []byte) error         { return w.k.WriteMessage(p) }
func (w *wsOwned) setWriteDeadline(t time.Time) { w.conn.SetWriteDeadline(t) }

// wsCloseWait is how long the close handshake waits for the client's
// close frame, as coder/websocket's Close does.
const wsCloseWait = 5 * time.Second

func (w *wsOwned) close(code websocket.StatusCode, reason string) {
	if w.k.WriteClose(code, reason) == nil {
		if w.readEnd != nil {
			// The stream's reading goroutine gets the client's close.
			select {
			case <-w.readEnd:
			case <-time.After(wsCloseWait):
			}
		} else {
			w.conn.SetReadDeadline(time.Now().Add(wsCloseWait))
			for {
				if _, err := w.read(); err != nil {
					break
				}
			}
		}
	}
	w.closeNow()
}

func (w *wsOwned) closeNow() {
	w.lib.CloseNow() // closes the connection
}

// wsStream writes the stream to the WebSocket while a goroutine reads the
// client's messages (stop); a read error means the client left. It returns
// at once: the writing runs on the reader's goroutines (see streamlog).
func (s *Server) wsStream(ws wsConn, l *streamlog.Log, pos int) {
	ctx, cancel := context.WithCancel(context.Background())
	readDone := make(chan struct{})
	if o, ok := ws.(*wsOwned); ok {
		o.readEnd = readDone
	}
	var stopped atomic.Bool // the client sent stop
	go func() {
		defer close(readDone)
		defer cancel()
		for {
			msg, err := ws.read()
			if err != nil {
				return
			}
			var m wsControl
			if json.Unmarshal(msg, &m) == nil && m.Type == "stop" {
				stopped.Store(true)
				if err := s.stop(l, "websocket"); err != nil {
					s.log.Warn("stop over the websocket failed", "stream", l.ID(), "err", err)
				}
			}
		}
	}()
	end := func(end streamlog.End, err error) {
		defer s.pumps.Done()
		if stopped.Load() && end == streamlog.EndGone {
			// The widget sends stop and closes at once: the write of the
			// stopped status meeting a closed connection is that, not a
			// fault.
			s.log.Info("client stopped the stream and closed the websocket", "stream", l.ID(), "events", l.Count())
		} else {
			s.pumpDone(l, "websocket", end, err)
		}
		// The close handshake gets a full write timeout of its own.
		ws.setWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
		switch end {
		case streamlog.EndDone:
			ws.close(websocket.StatusNormalClosure, "end of stream")
		case streamlog.EndShutdown:
			ws.close(websocket.StatusGoingAway, "relay shutting down; resume elsewhere")
		case streamlog.EndDrop:
			time.Sleep(dropLinger)
		}
		ws.closeNow()
		cancel()
		<-readDone
	}
	// The same prelude as on SSE, as its own message: it names the stream
	// before any event, so a client cut early can still resume; decoders
	// ignore it (a comment and a retry field dispatch nothing).
	if err := ws.write(s.prelude(l)); err != nil {
		end(streamlog.EndGone, err)
		return
	}
	s.readers.Start(ctx, l, pos, ws.sink(), end)
}

// wsFail sends a terminal trickle.status event and closes.
func (s *Server) wsFail(ws wsConn, status stream.RelayStatus, message string, code websocket.StatusCode) {
	ws.setWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
	ws.write(sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData(status, message)}))
	ws.close(code, trim(message))
}

// maxCloseReason is what a close frame leaves for the reason (RFC 6455
// 5.5: 125 bytes of payload, 2 of them the status code).
const maxCloseReason = 123

// trim keeps a close reason within maxCloseReason bytes, cut between two
// characters (a reason must be valid UTF-8: RFC 6455 5.5.1).
func trim(s string) string {
	if len(s) <= maxCloseReason {
		return s
	}
	cut := maxCloseReason - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
