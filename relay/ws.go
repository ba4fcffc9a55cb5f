package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/reqlog"
	"github.com/trickle-dev/trickle/relay/internal/sink"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wire"
)

// websocket is GET /v1/ws: a chat request (the admission, as on SSE) or
// a resume (wire.WSControl) as the first message, then the stream. The
// origin was checked by the CORS middleware (same origin or listed), so
// the library's own check is not repeated.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	if s.reg.Draining() {
		s.refuse(w, ErrShuttingDown) // before the upgrade: a plain 503
		return
	}
	// The origin was checked by s.cors: same origin or allowlisted.
	ws, err := sink.AcceptWS(w, r, s.cfg.writePath, s.cfg.writeTimeout, s.cfg.maxBodyBytes)
	if err != nil {
		s.log.Info("websocket handshake failed", "err", err)
		return
	}
	handedOff := false
	defer func() {
		if !handedOff {
			ws.CloseNow()
		}
	}()

	// The first message is the request's body: it gets --body-timeout to
	// arrive, as a POST's body does, and a socket that upgrades and sends
	// nothing holds the relay no longer.
	typ, first, err := ws.ReadFirst(s.cfg.bodyTimeout)
	if err == nil && typ != websocket.MessageText {
		err = fmt.Errorf("%w: the first message must be JSON text", ErrBadRequest)
	}
	if err != nil {
		reason := "relay: no request: " + err.Error()
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
			reason = "relay: no request message within " + s.cfg.bodyTimeout.String()
			s.log.Info("websocket closed: no request message in time", "request_id", reqlog.ID(r.Context()), "body_timeout", s.cfg.bodyTimeout)
		}
		ws.Close(websocket.StatusPolicyViolation, sink.CloseReason(reason))
		return
	}
	// Decoded once: a resume, or the request admitMembers takes.
	members, decodeErr := s.decode(first)
	ctl := wsControl(members)
	rid := reqlog.ID(r.Context())
	var (
		l   *streamlog.Log
		pos int
	)
	if ctl.Type == wire.WSResume {
		if l, pos, err = s.resumeAt(r, ctl.Stream, ctl.LastEventID, "websocket"); err != nil {
			f := s.streamRefusal(rid, ctl.Stream, err)
			msg := f.Message
			if f.Type == wire.TypeStreamGone {
				msg = apierr.Gone(ctl.Stream) // as before: without the "relay: " prefix
			}
			s.wsFail(ws, f.StreamStatus(), msg, sink.CloseCode(f.HTTPStatus()))
			return
		}
	} else {
		a, err := s.admitMembers(r, members, decodeErr, true)
		if err == nil {
			l, err = s.start(r, a)
		}
		if err != nil {
			f := s.refusal(rid, err)
			code := sink.CloseCode(f.HTTPStatus())
			if f.Type == wire.TypeInvalidRequest {
				code = websocket.StatusPolicyViolation // a message the relay cannot take
			}
			s.wsFail(ws, f.StreamStatus(), f.Message, code)
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

// wsStream writes the stream to the WebSocket while a goroutine reads the
// client's messages (stop); a read error means the client left. It returns
// at once: the writing runs on the reader's goroutines (see streamlog).
func (s *Server) wsStream(ws sink.WS, l *streamlog.Log, pos int) {
	ctx, cancel := context.WithCancel(context.Background())
	readDone := make(chan struct{})
	ws.WatchReads(readDone)
	var stopped atomic.Bool // the client sent stop
	go func() {
		defer close(readDone)
		defer cancel()
		for {
			msg, err := ws.Read()
			if err != nil {
				return
			}
			var m wire.WSControl
			if json.Unmarshal(msg, &m) == nil && m.Type == wire.WSStop {
				stopped.Store(true)
				if err := s.stop(ctx, l, "websocket"); err != nil {
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
		ws.SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
		switch end {
		case streamlog.EndDone:
			ws.Close(websocket.StatusNormalClosure, "end of stream")
		case streamlog.EndShutdown:
			ws.Close(websocket.StatusGoingAway, "relay shutting down; resume elsewhere")
		case streamlog.EndDrop:
			time.Sleep(dropLinger)
		}
		ws.CloseNow()
		cancel()
		<-readDone
	}
	// The same prelude as on SSE, as its own message: it names the stream
	// before any event, so a client cut early can still resume; decoders
	// ignore it (a comment and a retry field dispatch nothing).
	if err := ws.Write(s.prelude(l)); err != nil {
		end(streamlog.EndGone, err)
		return
	}
	s.readers.Start(ctx, l, pos, ws.Sink(), end)
}

// wsFail sends a terminal trickle.status event and closes.
func (s *Server) wsFail(ws sink.WS, status wire.Status, message string, code websocket.StatusCode) {
	ws.SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
	ws.Write(sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData(status, message)}))
	ws.Close(code, sink.CloseReason(message))
}

// wsControl reads a first message's members (decode) as a WSControl,
// each field from the member its json tag names: its type, and a
// resume's stream and last event id. A member that is not a string is
// left empty: the message is then no resume.
func wsControl(members map[string]json.RawMessage) wire.WSControl {
	var c wire.WSControl
	v := reflect.ValueOf(&c).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if raw, ok := members[name]; ok {
			if json.Unmarshal(raw, v.FieldByIndex(f.Index).Addr().Interface()) != nil {
				v.FieldByIndex(f.Index).SetZero()
			}
		}
	}
	return c
}
