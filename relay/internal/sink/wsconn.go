package sink

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// Buffer sizes of a WebSocket connection on the fast path. net/http hands
// a hijacked connection over with 4 KiB read and 4 KiB write buffers,
// which coder/websocket keeps for the connection's life: a large part of
// an idle stream's memory (bench/load). Clients send the relay almost
// nothing (the request, stop, the close), and reads larger than the
// buffer bypass it; the library writes nothing after the handshake. The
// plain path keeps net/http's buffers, as the library comes.
const (
	wsReadBuffer  = 128
	wsWriteBuffer = 128
)

// wsHijacker hands coder/websocket the connection and keeps it: on the
// fast path with small buffers and a reader the relay owns once the
// handshake is done (the library's Conn is never read nor written, only
// released), on the plain path as net/http hands it over (the library
// does all).
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
	if !h.fast {
		// The plain path is the library as it comes: net/http's buffers.
		return c, brw, nil
	}
	rc := c
	// A client may send its first message right behind the handshake:
	// net/http may have read it already.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		rc = &prefixConn{Conn: c, prefix: bytes.Clone(b)}
	}
	h.br = bufio.NewReaderSize(rc, wsReadBuffer)
	return rc, bufio.NewReadWriter(h.br, bufio.NewWriterSize(libraryMute{}, wsWriteBuffer)), nil
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

// WS is a WebSocket as the relay uses it, on either write path.
type WS interface {
	// ReadFirst reads the first message within d.
	ReadFirst(d time.Duration) (websocket.MessageType, []byte, error)
	// Read reads the next data message; an error means the client left.
	Read() ([]byte, error)
	// WatchReads tells Close that the goroutine calling Read closes done
	// when Read fails (the client's close frame is read there).
	WatchReads(done <-chan struct{})
	// Sink is where the stream's readers send.
	Sink() streamlog.Sink
	// Write sends one text message.
	Write(p []byte) error
	// Close sends the close frame, waits a moment for the client's, and
	// closes the connection.
	Close(code websocket.StatusCode, reason string)
	CloseNow()
	// SetWriteDeadline gives the close handshake a write timeout of its own.
	SetWriteDeadline(t time.Time)
}

// AcceptWS does coder/websocket's handshake (no origin check: the caller
// did it; no compression) and returns the connection on path: Fast, the
// relay owns it after the handshake (Frames and FrameReader); Plain, the
// library does all. Messages from the client are at most readLimit bytes.
func AcceptWS(w http.ResponseWriter, r *http.Request, path Path, timeout time.Duration, readLimit int64) (WS, error) {
	hj := &wsHijacker{ResponseWriter: w, fast: path == Fast}
	c, err := websocket.Accept(hj, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // the caller checked the origin
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	if hj.fast {
		k := NewFrames(hj.conn, timeout)
		return &wsOwned{lib: c, conn: hj.conn, k: k, r: k.NewReader(hj.br, readLimit)}, nil
	}
	c.SetReadLimit(readLimit)
	return &wsLibrary{c: c, conn: hj.conn, k: NewLibrary(c, hj.conn, timeout), timeout: timeout}, nil
}

// LibraryWS wraps a connection coder/websocket accepted by itself (the
// refusal of an origin: one message, then the close).
func LibraryWS(c *websocket.Conn, timeout time.Duration) WS {
	return &wsLibrary{c: c, timeout: timeout}
}

// wsLibrary is the plain path: everything through coder/websocket.
type wsLibrary struct {
	c       *websocket.Conn
	conn    net.Conn
	k       *Library
	timeout time.Duration
}

func (w *wsLibrary) ReadFirst(d time.Duration) (websocket.MessageType, []byte, error) {
	// Not a Read with a deadline: the library closes the connection when
	// a read's context ends, and the client would never learn why. The
	// read goes on meanwhile; the caller's Close (its close handshake)
	// ends it.
	type first struct {
		typ websocket.MessageType
		msg []byte
		err error
	}
	got := make(chan first, 1)
	go func() {
		typ, msg, err := w.c.Read(context.Background())
		got <- first{typ, msg, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case f := <-got:
		return f.typ, f.msg, f.err
	case <-t.C:
		return 0, nil, context.DeadlineExceeded
	}
}

func (w *wsLibrary) WatchReads(<-chan struct{}) {}

func (w *wsLibrary) Read() ([]byte, error) {
	// No context: the read ends when the connection is closed (at the
	// end), and the library registers nothing per read.
	_, msg, err := w.c.Read(context.Background())
	return msg, err
}

func (w *wsLibrary) Sink() streamlog.Sink { return w.k }
func (w *wsLibrary) Write(p []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	return w.c.Write(ctx, websocket.MessageText, p)
}
func (w *wsLibrary) Close(code websocket.StatusCode, reason string) { w.c.Close(code, reason) }
func (w *wsLibrary) CloseNow()                                      { w.c.CloseNow() }
func (w *wsLibrary) SetWriteDeadline(t time.Time) {
	if w.conn != nil {
		w.conn.SetWriteDeadline(t)
	}
}

// wsOwned is the fast path: the relay reads and writes every frame after
// the library's handshake.
type wsOwned struct {
	lib  *websocket.Conn // released at the end, never read nor written
	conn net.Conn
	k    *Frames
	r    *FrameReader
	// done is closed when the reading goroutine has seen the end.
	readEnd <-chan struct{}
}

func (w *wsOwned) ReadFirst(d time.Duration) (websocket.MessageType, []byte, error) {
	w.conn.SetReadDeadline(time.Now().Add(d))
	defer w.conn.SetReadDeadline(time.Time{})
	return w.r.ReadMessage()
}

func (w *wsOwned) WatchReads(done <-chan struct{}) { w.readEnd = done }

func (w *wsOwned) Read() ([]byte, error) {
	_, msg, err := w.r.ReadMessage()
	return msg, err
}

func (w *wsOwned) Sink() streamlog.Sink         { return w.k }
func (w *wsOwned) Write(p []byte) error         { return w.k.WriteMessage(p) }
func (w *wsOwned) SetWriteDeadline(t time.Time) { w.conn.SetWriteDeadline(t) }

// wsCloseWait is how long the close handshake waits for the client's
// close frame, as coder/websocket's Close does.
const wsCloseWait = 5 * time.Second

func (w *wsOwned) Close(code websocket.StatusCode, reason string) {
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
				if _, err := w.Read(); err != nil {
					break
				}
			}
		}
	}
	w.CloseNow()
}

func (w *wsOwned) CloseNow() {
	w.lib.CloseNow() // closes the connection
}
