package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/trickle-dev/trickle/sse"
)

// sink is where a reader sends a stream: an SSE response or a WebSocket.
type sink interface {
	// send writes the events of b (all of them in one write for SSE, one
	// message per event for WebSocket).
	send(b batch) error
	// keepAlive writes a heartbeat comment.
	keepAlive() error
	// halfClose ends the relay's side of the connection after what it
	// already sent (TCP FIN behind the queued bytes), keeping the client's
	// side open; false when the transport cannot.
	halfClose() bool
	// trySend sends b without blocking, when the transport can: ok
	// reports that b was taken (queued: part of it waits in the sink, to
	// be written by flush); not ok, nothing was sent.
	trySend(b batch) (ok, queued bool)
	// flush writes what trySend queued (blocking, within the write
	// timeout); send and keepAlive flush first.
	flush() error
}

// errCut marks a write the client did not take within the write timeout:
// the relay cuts the connection; the client may resume.
var errCut = errors.New("relay: the client did not read within the write timeout; connection cut")

// armWriteDeadline pushes conn's write deadline to timeout from now, at
// most once a second (a write is then bounded by timeout minus up to a
// second): setting it costs a runtime timer operation, and tokens come
// many times a second.
func armWriteDeadline(conn net.Conn, armed *time.Time, timeout time.Duration) error {
	if now := time.Now(); now.Sub(*armed) > time.Second || timeout <= 2*time.Second {
		if err := conn.SetWriteDeadline(now.Add(timeout)); err != nil {
			return err
		}
		*armed = now
	}
	return nil
}

// cutError turns a write that hit the write deadline into errCut.
func cutError(err error) error {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", errCut, err)
	}
	return err
}

// closeWrite half-closes a TCP (or TLS) connection.
func closeWrite(c net.Conn) bool {
	cw, ok := c.(interface{ CloseWrite() error })
	return ok && cw.CloseWrite() == nil
}

// Why a reader's pump ended.
type pumpEnd int

const (
	endDone     pumpEnd = iota // the stream ended and everything was sent
	endGone                    // the client went away or a write failed
	endDrop                    // fault injection: cut this connection
	endShutdown                // the relay is shutting down
)

var keepAliveComment = append(sse.AppendComment(nil, "keep-alive"), '\n')

// pump sends the stream from event position pos (the number of events the
// client already has) until it ends, the client leaves or a fault cuts it,
// and returns why. It blocks; startPump is the same without a goroutine
// waiting.
func (s *Server) pump(ctx context.Context, l *genLog, pos int, out sink) (pumpEnd, error) {
	type result struct {
		end pumpEnd
		err error
	}
	ch := make(chan result, 1)
	s.startPump(ctx, l, pos, out, func(end pumpEnd, err error) { ch <- result{end, err} })
	r := <-ch
	return r.end, r.err
}

// reader sends one stream to one client. It holds no goroutine while it
// waits: news in the log (including the end Shutdown gives every running
// stream), the client leaving (ctx) and the heartbeat timer each call wake, which runs the reader on a fresh
// goroutine until it has sent everything there is and must wait again. An
// idle stream then costs a few hundred bytes instead of a parked goroutine
// whose stack has grown to 4 KiB writing through the TCP stack (ten
// thousand idle WebSocket streams: 40 MB), and an event costs starting a
// goroutine instead of waking a parked one, about the same.
type reader struct {
	s     *Server
	l     *genLog
	ctx   context.Context
	out   sink
	onEnd func(pumpEnd, error)

	// Owned by the goroutine running the reader (one at a time).
	pos, limit int
	lastWrite  time.Time
	hbAt       time.Time // when the heartbeat timer is due
	hb         *time.Timer
	unwatch    func() bool // stops watching ctx

	state atomic.Int32
}

// Reader states: wake starts a goroutine only from idle; while one runs,
// wake asks it to look again before it goes idle.
const (
	readerIdle int32 = iota
	readerRunning
	readerAgain
	readerDone
)

// startPump starts sending l from pos to out; onEnd gets why it ended (on
// the reader's goroutine, which it may keep for the connection's close).
func (s *Server) startPump(ctx context.Context, l *genLog, pos int, out sink, onEnd func(pumpEnd, error)) {
	l.attach()
	s.metrics.connections.Add(1)
	r := &reader{s: s, l: l, ctx: ctx, out: out, onEnd: onEnd, pos: pos, limit: l.takeDrop(pos)}
	r.lastWrite = time.Now()
	r.hbAt = r.lastWrite.Add(s.cfg.heartbeat)
	r.state.Store(readerRunning)
	// One timer per reader, re-armed only when it is due: writes just
	// note their time, so an event costs no timer operation.
	wake := func() { r.wake(false) }
	r.hb = time.AfterFunc(s.cfg.heartbeat, wake)
	r.unwatch = context.AfterFunc(ctx, wake)
	// No watch on the shutdown deadline: Shutdown stops every running
	// stream after it, which wakes the readers waiting on them, and a
	// reader checks the deadline first thing when it runs.
	go r.run()
}

// wake tells the reader there is news; it never blocks. A reader already
// running is asked to look again. An idle one starts: on a goroutine of its
// own, or, with inline (the goroutine that appended the news, without the
// log's lock), right here when it is caught up and its socket takes the
// news without blocking — anything else (a full socket, the end, a
// heartbeat, a transport that cannot write without blocking) goes on on a
// goroutine. A slow client thus never holds up the generator, and the
// common case costs no goroutine.
func (r *reader) wake(inline bool) {
	for {
		switch r.state.Load() {
		case readerIdle:
			if r.state.CompareAndSwap(readerIdle, readerRunning) {
				if inline {
					r.runInline()
				} else {
					go r.run()
				}
				return
			}
		case readerRunning:
			if r.state.CompareAndSwap(readerRunning, readerAgain) {
				return
			}
		default: // already asked to look again, or over
			return
		}
	}
}

func (r *reader) runInline() {
	for {
		if !r.stepInline() {
			go r.run() // still running: the goroutine takes over
			return
		}
		if r.state.CompareAndSwap(readerRunning, readerIdle) {
			return
		}
		r.state.Store(readerRunning) // woken meanwhile: look again
	}
}

// stepInline is step without blocking: it reports false when the reader
// must go on on a goroutine (step then does what is left, from r.pos).
func (r *reader) stepInline() bool {
	wrote, waiting := false, false
	for r.s.kickCtx.Err() == nil {
		b, next, done := r.l.read(r.pos, r.limit, r)
		if len(b.ends) == 0 {
			waiting = !done && r.ctx.Err() == nil
			break
		}
		ok, queued := r.out.trySend(b)
		if !ok {
			break
		}
		r.pos, wrote = next, true
		if queued || r.limit > 0 && r.pos >= r.limit {
			break
		}
	}
	if !wrote && !waiting {
		return false
	}
	now := time.Now()
	if wrote {
		r.lastWrite = now
	}
	return waiting && now.Before(r.hbAt) // a heartbeat due is the goroutine's
}

func (r *reader) run() {
	for {
		if end, over, err := r.step(); over {
			r.state.Store(readerDone)
			r.hb.Stop()
			r.unwatch()
			r.l.detach()
			r.s.metrics.connections.Add(-1)
			r.onEnd(end, err)
			return
		}
		if r.state.CompareAndSwap(readerRunning, readerIdle) {
			return
		}
		r.state.Store(readerRunning) // woken while running: look again
	}
}

// step sends what there is; over reports that the reader has ended.
func (r *reader) step() (end pumpEnd, over bool, err error) {
	s, l := r.s, r.l
	wrote := false
	// What a non-blocking send left behind goes first, whatever comes
	// next (events, a heartbeat, the end of the stream).
	if err := r.out.flush(); err != nil {
		s.afterCut(r.ctx, l, r.out, err)
		return endGone, true, err
	}
	if r.limit > 0 && r.pos >= r.limit {
		return endDrop, true, nil // reached by a send in stepInline
	}
	for {
		if s.kickCtx.Err() != nil {
			return endShutdown, true, nil
		}
		b, next, done := l.read(r.pos, r.limit, r)
		if len(b.ends) > 0 {
			if err := r.out.send(b); err != nil {
				s.afterCut(r.ctx, l, r.out, err)
				return endGone, true, err
			}
			r.pos = next
			wrote = true
			if r.limit > 0 && r.pos >= r.limit {
				return endDrop, true, nil
			}
			continue
		}
		if done {
			return endDone, true, nil
		}
		if err := r.ctx.Err(); err != nil {
			return endGone, true, err
		}
		// Waiting (registered with the log by read): heartbeat when due.
		// One clock read serves as the time of the writes just made
		// (they took microseconds; the heartbeat counts seconds).
		now := time.Now()
		if wrote {
			r.lastWrite = now
		}
		if now.Before(r.hbAt) {
			return 0, false, nil
		}
		hb := s.cfg.heartbeat
		if idle := now.Sub(r.lastWrite); idle < hb {
			r.hb.Reset(hb - idle)
			r.hbAt = now.Add(hb - idle)
			return 0, false, nil
		}
		if err := r.out.keepAlive(); err != nil {
			s.afterCut(r.ctx, l, r.out, err)
			return endGone, true, err
		}
		r.lastWrite = time.Now()
		r.hb.Reset(hb)
		r.hbAt = r.lastWrite.Add(hb)
		return 0, false, nil
	}
}

// afterCut runs when a write to the client failed. When the relay itself
// cut a slow client (errCut), that client is not gone: it is behind, and
// it cannot know of the cut before it has read what the relay had already
// sent — seconds of events in the socket buffers. Counting the disconnect
// grace from the cut would cancel the generation of a client that is still
// reading and about to resume, and the resume would find the answer cut
// short (what the 10,000-stream WebSocket load run showed: clients starved
// for CPU resumed 20-30 s after their cut, 10 s after their generation had
// been cancelled). So the relay half-closes the connection (the client
// reads every byte already sent, then the end) and stays attached until the
// client hangs up, or for at most cutWait; only then does the grace period
// start.
func (s *Server) afterCut(ctx context.Context, l *genLog, out sink, err error) {
	if !errors.Is(err, errCut) {
		return
	}
	s.metrics.cuts.Add(1)
	if s.cfg.cutWait <= 0 || !out.halfClose() {
		return
	}
	s.log.Info("slow client cut", "stream", l.id, "write_timeout", s.cfg.writeTimeout, "wait_for_hang_up", s.cfg.cutWait)
	t := time.NewTimer(s.cfg.cutWait)
	defer t.Stop()
	select {
	case <-ctx.Done(): // the client read up to the cut and hung up
	case <-t.C:
	case <-s.kickCtx.Done():
	}
}

// sseSink writes to an SSE response with a deadline on every write.
type sseSink struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (k *sseSink) write(p []byte) error {
	if err := k.rc.SetWriteDeadline(time.Now().Add(k.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := k.w.Write(p); err != nil {
		return err
	}
	return k.rc.Flush()
}

func (k *sseSink) send(b batch) error { return k.write(b.data) }
func (k *sseSink) keepAlive() error   { return k.write(keepAliveComment) }

// trySend is not possible through net/http's response writer.
func (k *sseSink) trySend(batch) (ok, queued bool) { return false, false }
func (k *sseSink) flush() error                    { return nil }

// halfClose is not possible through net/http's response writer (HTTP/1.0
// and HTTP/2 clients): a cut client there just leaves.
func (k *sseSink) halfClose() bool { return false }

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
func (s *Server) serveSSE(w http.ResponseWriter, r *http.Request, l *genLog, pos int) {
	sseHeaders(w.Header())
	w.Header().Set("X-Trickle-Stream", l.id)
	// HTTP/1.1 only: chunked encoding is written by hand; HTTP/1.0 clients
	// (and proxies speaking it) and HTTP/2 take the net/http path.
	if r.ProtoMajor == 1 && r.ProtoMinor == 1 {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			s.serveHijacked(conn, w.Header(), l, pos)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
	k := &sseSink{w: w, rc: http.NewResponseController(w), timeout: s.cfg.writeTimeout}
	defer k.rc.SetWriteDeadline(time.Time{}) // the connection may serve another request
	if err := k.write(s.prelude(l)); err != nil {
		s.pumpDone(l, "sse", endGone, err)
		return
	}
	end, err := s.pump(r.Context(), l, pos, k)
	s.pumpDone(l, "sse", end, err)
	if end == endDrop {
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

// hijackSink writes HTTP/1.1 chunks straight to the connection.
type hijackSink struct {
	conn    net.Conn
	timeout time.Duration
	armed   time.Time // when the write deadline was last pushed back
	size    [20]byte
	vec     [3][]byte
	bufs    net.Buffers
	// now writes without blocking (trySend); nil when the connection has
	// no socket of its own (TLS) or the platform has no nowWriter.
	now     *nowWriter
	pending []byte // the part of a chunk the socket did not take
}

var crlf = []byte("\r\n")

func (k *hijackSink) write(p []byte) error {
	if err := k.flush(); err != nil {
		return err
	}
	if err := armWriteDeadline(k.conn, &k.armed, k.timeout); err != nil {
		return err
	}
	hdr := append(strconv.AppendInt(k.size[:0], int64(len(p)), 16), '\r', '\n')
	// One writev: chunk size, the events, CRLF, without copying them (the
	// vector lives in the sink: one allocation less per event).
	k.vec = [3][]byte{hdr, p, crlf}
	k.bufs = k.vec[:]
	_, err := k.bufs.WriteTo(k.conn)
	k.vec = [3][]byte{}
	return cutError(err)
}

func (k *hijackSink) send(b batch) error { return k.write(b.data) }
func (k *hijackSink) keepAlive() error   { return k.write(keepAliveComment) }

// trySend writes one chunk with a non-blocking writev straight on the
// socket (see nowWriter); what the socket does not take waits in pending.
func (k *hijackSink) trySend(b batch) (ok, queued bool) {
	if k.now == nil || len(k.pending) > 0 {
		return false, false
	}
	hdr := append(strconv.AppendInt(k.size[:0], int64(len(b.data)), 16), '\r', '\n')
	n, err := k.now.writev(hdr, b.data, crlf)
	if err != nil || n == 0 {
		// Full (EAGAIN) or broken: the blocking write sends it, or
		// meets the error, on the reader's goroutine.
		return false, false
	}
	if total := len(hdr) + len(b.data) + len(crlf); n < total {
		for _, p := range [][]byte{hdr, b.data, crlf} {
			skip := min(n, len(p))
			k.pending = append(k.pending, p[skip:]...)
			n -= skip
		}
		return true, true
	}
	return true, false
}

// flush writes what trySend could not, within the write timeout.
func (k *hijackSink) flush() error {
	if len(k.pending) == 0 {
		return nil
	}
	if err := armWriteDeadline(k.conn, &k.armed, k.timeout); err != nil {
		return err
	}
	n, err := k.conn.Write(k.pending)
	k.pending = k.pending[:copy(k.pending, k.pending[n:])]
	return cutError(err)
}

// halfClose leaves the last chunk unfinished: the client sees a cut (no
// terminating chunk), never a clean end.
func (k *hijackSink) halfClose() bool { return closeWrite(k.conn) }

// serveHijacked serves an SSE stream on a connection taken over from
// net/http. An idle stream then costs one small goroutine waiting for the
// client to hang up and a reader with no goroutine, and no buffers: the
// server's per-connection read and write buffers (about 10 KiB) and the
// handler's stack are released, which is what lets ten thousand idle
// streams fit in little memory. The response is plain HTTP/1.1 chunked
// encoding, so a clean end (terminating chunk) and a drop (no terminator)
// stay distinguishable, and the connection closes after the stream.
func (s *Server) serveHijacked(conn net.Conn, hdr http.Header, l *genLog, pos int) {
	head := make([]byte, 0, 512)
	head = append(head, "HTTP/1.1 200 OK\r\n"...)
	hdr.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	hdr.Set("Transfer-Encoding", "chunked")
	hdr.Set("Connection", "close")
	for _, k := range slices.Sorted(maps.Keys(hdr)) {
		for _, v := range hdr[k] {
			head = append(head, k...)
			head = append(head, ": "...)
			head = append(head, v...)
			head = append(head, crlf...)
		}
	}
	head = append(head, crlf...)
	pre := s.prelude(l)
	head = strconv.AppendInt(head, int64(len(pre)), 16)
	head = append(append(append(head, crlf...), pre...), crlf...)
	k := &hijackSink{conn: conn, timeout: s.cfg.writeTimeout, now: newNowWriter(conn)}
	conn.SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
	if _, err := conn.Write(head); err != nil {
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
	s.startPump(ctx, l, pos, k, func(end pumpEnd, err error) {
		defer s.pumps.Done()
		defer cancel()
		s.pumpDone(l, "sse", end, err)
		if end == endDone || end == endShutdown {
			conn.SetWriteDeadline(time.Now().Add(s.cfg.writeTimeout))
			conn.Write([]byte("0\r\n\r\n"))
		}
		if end == endDrop {
			time.Sleep(dropLinger)
		}
		conn.Close() // a drop (fault) or a gone client: no terminator
	})
}

func (s *Server) prelude(l *genLog) []byte {
	// The prelude names the stream and sets the reconnection delay; a
	// block without data dispatches no event (WHATWG "dispatch the
	// event": empty data buffer).
	return fmt.Appendf(nil, ": trickle stream %s\nretry: %d\n\n", l.id, s.cfg.retryHint.Milliseconds())
}

func (s *Server) pumpDone(l *genLog, transport string, end pumpEnd, err error) {
	switch end {
	case endGone:
		s.log.Info("client left", "stream", l.id, "transport", transport, "events", l.count(), "err", err)
	case endDrop:
		s.log.Info("connection dropped (drop_after)", "stream", l.id, "transport", transport, "events", l.dropAfter)
	case endShutdown:
		s.log.Info("client handed a resumable end (shutdown)", "stream", l.id, "transport", transport)
	}
}

// parseLastEventID turns "<stream>:<seq>" into the number of events the
// client has.
func parseLastEventID(l *genLog, last string) (int, error) {
	if last == "" {
		return 0, nil
	}
	sid, seqText, ok := strings.Cut(last, ":")
	seq, err := strconv.Atoi(seqText)
	if !ok || err != nil || seq < 0 || sid != l.id {
		return 0, fmt.Errorf("%w: last event id %q is not an id of stream %s (want %s:<seq>)", ErrBadRequest, last, l.id, l.id)
	}
	if n := l.count(); seq > n {
		return 0, fmt.Errorf("%w: last event id %q is ahead of stream %s, which has %d events", ErrBadRequest, last, l.id, n)
	}
	return seq, nil
}

func lastEventID(r *http.Request) string {
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		return v
	}
	return r.URL.Query().Get("last_event_id")
}

// goneMessage is the terminal status a client gets for a stream the relay
// no longer has.
func goneMessage(id string) string {
	return "stream " + id + " is gone: it expired or never existed here; send the request again"
}

func statusData(status, message string) string {
	b, _ := json.Marshal(struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}{status, message})
	return string(b)
}

// resume is GET /v1/streams/{id}: the events after Last-Event-ID, then live.
func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	l := s.lookup(id)
	if l == nil {
		s.gone(w, r, id)
		return
	}
	pos, err := parseLastEventID(l, lastEventID(r))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	s.metrics.resumes.Add(1)
	s.log.Info("stream resumed", "stream", id, "transport", "sse", "after", pos)
	s.serveSSE(w, r, l, pos)
}

// gone answers a resume of an unknown stream: an SSE client gets one
// terminal trickle.status "gone" event (so the widget shows why), a JSON
// client a 404.
func (s *Server) gone(w http.ResponseWriter, r *http.Request, id string) {
	accept := r.Header.Get("Accept")
	if strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/event-stream") {
		writeError(w, http.StatusNotFound, "stream_gone", "relay: "+goneMessage(id))
		return
	}
	sseHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	w.Write(sse.AppendMessage(nil, sse.Message{Event: StatusEvent, Data: statusData("gone", goneMessage(id))}))
}

// stopStream is DELETE /v1/streams/{id}: Stop.
func (s *Server) stopStream(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	l := s.lookup(id)
	if l == nil {
		writeError(w, http.StatusNotFound, "stream_gone", "relay: "+goneMessage(id))
		return
	}
	s.stop(l, "DELETE")
	writeJSON(w, l.info())
}

// stop stops l (Stop from a client) and logs it.
func (s *Server) stop(l *genLog, by string) {
	start := time.Now()
	if l.stop(StateStopped, "stopped by the client") {
		s.log.Info("stream stopped", "stream", l.id, "by", by, "events", l.count(),
			"upstream_cancelled", l.info().UpstreamCancelled, "took", time.Since(start).Round(time.Microsecond))
	}
}

// streamInfo is GET /v1/streams/{id}/info.
func (s *Server) streamInfo(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	l := s.lookup(id)
	if l == nil {
		writeError(w, http.StatusNotFound, "stream_gone", "relay: "+goneMessage(id))
		return
	}
	writeJSON(w, l.info())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(v)
}
