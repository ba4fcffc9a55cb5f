// SSE serving: the response headers, the prelude, and the choice of sink
// (net/http's response writer, or chunks written straight to a hijacked
// HTTP/1.1 connection).

package relay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/relay/internal/sink"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// sseHeaders are the headers that keep every proxy from buffering or
// compressing the stream.
func sseHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	h.Del("Content-Encoding")
}

// serveSSE streams l to an SSE response from position pos.
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request, l *streamlog.Log, pos int) {
	sseHeaders(w.Header())
	w.Header().Set(wire.HeaderStream, l.ID())
	w.Header().Set(wire.HeaderStreamURL, chat.StreamRef(r.URL.Path, l.ID()))
	// HTTP/1.1 only: chunked encoding is written by hand; HTTP/1.0 clients
	// (and proxies speaking it) and HTTP/2 take the net/http path, as
	// every client does with the plain write path.
	if s.cfg.writePath == sink.Fast && r.ProtoMajor == 1 && r.ProtoMinor == 1 {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			s.serveHijacked(conn, w.Header(), l, pos)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	k := sink.NewResponse(w, s.cfg.writeTimeout)
	defer k.Release()
	if err := k.Write(s.prelude(l)); err != nil {
		s.pumpDone(l, "sse", streamlog.EndGone, err)
		return
	}
	end, err := s.readers.Pump(r.Context(), l, pos, k)
	s.pumpDone(l, "sse", end, err)
	if end == streamlog.EndDrop {
		// Close the connection without the chunked terminator: the client
		// sees a dropped connection, not a clean end.
		time.Sleep(dropLinger)
		panic(http.ErrAbortHandler)
	}
}

// dropLinger is how long a connection cut by drop_after waits after its
// last event: a browser that gets data and the error together may discard
// the data (an errored ReadableStream drops its queue), and the fault is
// meant to cut after N events, not to lose some of them.
const dropLinger = 50 * time.Millisecond

// serveHijacked serves an SSE stream on a connection taken over from
// net/http. An idle stream then costs one small goroutine waiting for the
// client to hang up and a reader with no goroutine, and no buffers: the
// server's per-connection read and write buffers and the handler's stack
// are released, which is what keeps bench/load's memory per idle stream
// small. The response is plain HTTP/1.1 chunked encoding, so a clean end
// (terminating chunk) and a drop (no terminator) stay distinguishable, and
// the connection closes after the stream.
func (s *Server) serveHijacked(conn net.Conn, hdr http.Header, l *streamlog.Log, pos int) {
	k := sink.NewChunked(conn, s.cfg.writeTimeout)
	if err := k.WriteHead(hdr, s.prelude(l)); err != nil {
		conn.Close()
		return
	}
	s.pumps.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	// Reading is how a hang-up is noticed at once (not at the next
	// write); the client sends nothing more on this connection.
	go func() {
		var b [1]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				cancel()
				return
			}
		}
	}()
	s.readers.Start(ctx, l, pos, k, func(end streamlog.End, err error) {
		defer s.pumps.Done()
		defer cancel()
		s.pumpDone(l, "sse", end, err)
		if end == streamlog.EndDone || end == streamlog.EndShutdown {
			k.Finish()
		}
		if end == streamlog.EndDrop {
			time.Sleep(dropLinger)
		}
		conn.Close() // a drop (fault) or a gone client: no terminator
	})
}

func (s *Server) prelude(l *streamlog.Log) []byte {
	// The prelude names the stream and sets the reconnection delay; a
	// block without data dispatches no event (WHATWG "dispatch the
	// event": empty data buffer).
	return fmt.Appendf(nil, ": trickle stream %s\nretry: %d\n\n", l.ID(), s.cfg.retryHint.Milliseconds())
}

func (s *Server) pumpDone(l *streamlog.Log, transport string, end streamlog.End, err error) {
	switch end {
	case streamlog.EndGone:
		s.log.Info("client left", "stream", l.ID(), "transport", transport, "events", l.Count(), "err", err)
	case streamlog.EndDrop:
		s.log.Info("connection dropped (drop_after)", "stream", l.ID(), "transport", transport, "events", l.DropAfter())
	case streamlog.EndShutdown:
		s.log.Info("client handed a resumable end (shutdown)", "stream", l.ID(), "transport", transport)
	}
}
