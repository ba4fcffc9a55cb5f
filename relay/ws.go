package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/trickle-dev/trickle/sse"
)

// wsControl is a client message on /v1/ws other than the first request.
type wsControl struct {
	Type        string `json:"type"`
	Stream      string `json:"stream"`
	LastEventID string `json:"last_event_id"`
}

// wsSink sends one WebSocket text message per event, each the exact SSE
// text the SSE endpoint writes for it.
//
// Writes take a context without deadline (the library then sets up no
// per-write timer and allocates nothing for it); a watchdog timer made once
// per connection enforces the write timeout by closing the connection.
type wsSink struct {
	c       *websocket.Conn
	timeout time.Duration
	dog     *time.Timer
}

func newWSSink(c *websocket.Conn, timeout time.Duration) *wsSink {
	dog := time.AfterFunc(time.Hour, func() { c.CloseNow() })
	dog.Stop()
	return &wsSink{c: c, timeout: timeout, dog: dog}
}

func (k *wsSink) write(p []byte) error {
	k.dog.Reset(k.timeout)
	err := k.c.Write(context.Background(), websocket.MessageText, p)
	k.dog.Stop()
	return err
}

func (k *wsSink) send(b batch) error {
	start := b.base
	for _, end := range b.ends {
		if err := k.write(b.data[start-b.base : end-b.base]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func (k *wsSink) keepAlive() error { return k.write(keepAliveComment) }

// websocket is GET /v1/ws. The origin was checked by the CORS middleware
// (same origin or listed), so the library's own check is not repeated.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "shutting_down", ErrShuttingDown.Error())
		return
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
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
		l = s.lookup(ctl.Stream)
		if l == nil {
			s.wsFail(ctx, c, "gone", goneMessage(ctl.Stream), websocket.StatusNormalClosure)
			return
		}
		if pos, err = parseLastEventID(l, ctl.LastEventID); err != nil {
			s.wsFail(ctx, c, "failed", err.Error(), websocket.StatusPolicyViolation)
			return
		}
		s.metrics.resumes.Add(1)
		s.log.Info("stream resumed", "stream", l.id, "transport", "websocket", "after", pos)
	} else {
		var req ChatRequest
		if err := decodeRequest(first, &req); err != nil {
			s.wsFail(ctx, c, "failed", err.Error(), websocket.StatusPolicyViolation)
			return
		}
		req.Stream = true
		if l, err = s.startStream(&req, first, r.URL.Query()); err != nil {
			code := websocket.StatusPolicyViolation
			if errors.Is(err, errTooMany) || errors.Is(err, ErrShuttingDown) {
				code = websocket.StatusTryAgainLater
			}
			s.wsFail(ctx, c, "failed", err.Error(), code)
			return
		}
	}

	// The connection is taken over: the rest runs on goroutines of its
	// own so that the handler's deep stack is released while the stream
	// idles (memory per idle stream), on a context that does not end with
	// the handler.
	handedOff = true
	s.pumps.Add(1)
	go s.wsStream(c, l, pos)
}

// wsStream writes the stream to the WebSocket while another goroutine reads
// the client's messages (stop); a read error means the client left.
func (s *Server) wsStream(c *websocket.Conn, l *genLog, pos int) {
	defer s.pumps.Done()
	defer c.CloseNow()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m wsControl
			if json.Unmarshal(msg, &m) == nil && m.Type == "stop" {
				s.stop(l, "websocket")
			}
		}
	})
	sink := newWSSink(c, s.cfg.writeTimeout)
	defer sink.dog.Stop()
	// The same prelude as on SSE, as its own message: it names the stream
	// before any event, so a client cut early can still resume; decoders
	// ignore it (a comment and a retry field dispatch nothing).
	end, err := endGone, sink.write(s.prelude(l))
	if err == nil {
		end, err = s.pump(ctx, l, pos, sink)
	}
	s.pumpDone(l, "websocket", end, err)
	switch end {
	case endDone:
		c.Close(websocket.StatusNormalClosure, "end of stream")
	case endShutdown:
		c.Close(websocket.StatusGoingAway, "relay shutting down; resume elsewhere")
	case endDrop:
		time.Sleep(dropLinger)
		c.CloseNow()
	default:
		c.CloseNow() // already gone
	}
	cancel()
	wg.Wait()
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
func (s *Server) wsFail(ctx context.Context, c *websocket.Conn, status, message string, code websocket.StatusCode) {
	wctx, cancel := context.WithTimeout(ctx, s.cfg.writeTimeout)
	defer cancel()
	c.Write(wctx, websocket.MessageText, sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData(status, message)}))
	c.Close(code, trim(message))
}

// trim keeps a close reason within the 123 bytes a close frame allows.
func trim(s string) string {
	if len(s) <= 120 {
		return s
	}
	return s[:117] + "..."
}
