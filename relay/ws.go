package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
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
// stream's memory (bench/load). Clients send the relay almost nothing (the request,
// stop, the close), and reads larger than the buffer bypass it. The
// library writes only control frames once the stream runs (the events go
// out through wsSink): a close or pong frame (at most 127 bytes) fits.
const (
	wsReadBuffer  = 128
	wsWriteBuffer = 128
)

// wsHijacker hands coder/websocket the connection with small buffers, its
// writes going through the stream's sink, and keeps the sink for the
// events, the write deadline and the half-close.
type wsHijacker struct {
	http.ResponseWriter
	timeout time.Duration
	sink    *wsSink
}

// Hijack takes over the connection from net/http.
func (h *wsHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.sink = newWSSink(c, h.timeout)
	rc := c
	// A client may send its first message right behind the handshake:
	// net/http may have read it already.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		rc = &prefixConn{Conn: c, prefix: bytes.Clone(b)}
	}
	return rc, bufio.NewReadWriter(bufio.NewReaderSize(rc, wsReadBuffer),
		bufio.NewWriterSize((*wsLibraryWire)(h.sink), wsWriteBuffer)), nil
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
	hj := &wsHijacker{ResponseWriter: w, timeout: s.cfg.writeTimeout}
	c, err := websocket.Accept(hj, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // checked by s.cors: same origin or allowlisted
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		s.log.Info("websocket handshake failed", "err", err)
		return
	}
	handedOff := false
	defer func() {
		if !handedOff {
			c.CloseNow()
		}
	}()
	c.SetReadLimit(s.cfg.maxBodyBytes)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	first, err := readFirst(ctx, c)
	if err != nil {
		c.Close(websocket.StatusPolicyViolation, "relay: no request: "+trim(err.Error()))
		return
	}
	var ctl wsControl
	json.Unmarshal(first, &ctl)
	var (
		l   *genLog
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
			s.wsFail(ctx, c, f.status, msg, code)
			return
		}
	} else {
		var req ChatRequest
		if err := decodeRequest(first, &req); err != nil {
			s.wsFail(ctx, c, stream.RelayFailed, err.Error(), websocket.StatusPolicyViolation)
			return
		}
		req.Stream = true
		if l, err = s.startStream(&req, first, r.URL.Query()); err != nil {
			code := websocket.StatusPolicyViolation
			if errors.Is(err, errTooMany) || errors.Is(err, ErrShuttingDown) || errors.Is(err, ErrStoreUnavailable) {
				code = websocket.StatusTryAgainLater
			}
			s.wsFail(ctx, c, stream.RelayFailed, err.Error(), code)
			return
		}
	}

	// The connection is taken over: the rest runs on goroutines of its
	// own so that the handler's deep stack is released while the stream
	// idles (memory per idle stream), on a context that does not end with
	// the handler.
	handedOff = true
	s.pumps.Add(1)
	s.wsStream(c, hj.sink, l, pos)
}

// wsStream writes the stream to the WebSocket while a goroutine reads the
// client's messages (stop); a read error means the client left. It returns
// at once: the writing runs on the reader's goroutines (see reader).
func (s *Server) wsStream(c *websocket.Conn, sink *wsSink, l *genLog, pos int) {
	ctx, cancel := context.WithCancel(context.Background())
	readDone := make(chan struct{})
	var stopped atomic.Bool // the client sent stop
	go func() {
		defer close(readDone)
		defer cancel()
		for {
			// No context: the read ends when the connection is closed
			// (at the end), and the library registers nothing per read.
			_, msg, err := c.Read(context.Background())
			if err != nil {
				return
			}
			var m wsControl
			if json.Unmarshal(msg, &m) == nil && m.Type == "stop" {
				stopped.Store(true)
				if err := s.stop(l, "websocket"); err != nil {
					s.log.Warn("stop over the websocket failed", "stream", l.id, "err", err)
				}
			}
		}
	}()
	end := func(end pumpEnd, err error) {
		defer s.pumps.Done()
		if stopped.Load() && end == endGone {
			// The widget sends stop and closes at once: the write of the
			// stopped status meeting a closed connection is that, not a
			// fault.
			s.log.Info("client stopped the stream and closed the websocket", "stream", l.id, "events", l.count())
		} else {
			s.pumpDone(l, "websocket", end, err)
		}
		// The close handshake gets a full write timeout of its own.
		sink.conn.SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
		switch end {
		case endDone:
			c.Close(websocket.StatusNormalClosure, "end of stream")
		case endShutdown:
			c.Close(websocket.StatusGoingAway, "relay shutting down; resume elsewhere")
		case endDrop:
			time.Sleep(dropLinger)
		}
		c.CloseNow()
		cancel()
		<-readDone
	}
	// The same prelude as on SSE, as its own message: it names the stream
	// before any event, so a client cut early can still resume; decoders
	// ignore it (a comment and a retry field dispatch nothing).
	if err := sink.write(s.prelude(l)); err != nil {
		end(endGone, err)
		return
	}
	s.startPump(ctx, l, pos, sink, end)
}

func readFirst(ctx context.Context, c *websocket.Conn) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	typ, msg, err := c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, fmt.Errorf("%w: the first message must be JSON text", ErrBadRequest)
	}
	return msg, nil
}

// wsFail sends a terminal trickle.status event and closes.
func (s *Server) wsFail(ctx context.Context, c *websocket.Conn, status stream.RelayStatus, message string, code websocket.StatusCode) {
	wctx, cancel := context.WithTimeout(ctx, s.cfg.writeTimeout)
	defer cancel()
	c.Write(wctx, websocket.MessageText, sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData(status, message)}))
	c.Close(code, trim(message))
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
