package sink

import (
	"errors"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// Response writes SSE to net/http's response writer, flushed with
// http.ResponseController, with a deadline on every write: the plain path,
// and the only one for HTTP/1.0 and HTTP/2 clients.
type Response struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// NewResponse makes the sink of an SSE response whose headers are set.
func NewResponse(w http.ResponseWriter, timeout time.Duration) *Response {
	return &Response{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

// Write sends p and flushes it.
func (k *Response) Write(p []byte) error {
	if err := k.rc.SetWriteDeadline(time.Now().Add(k.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := k.w.Write(p); err != nil {
		return err
	}
	return k.rc.Flush()
}

// Release clears the write deadline: the connection may serve another
// request.
func (k *Response) Release() { k.rc.SetWriteDeadline(time.Time{}) }

func (k *Response) Send(b streamlog.Batch) error { return k.Write(b.Data) }
func (k *Response) KeepAlive() error             { return k.Write(KeepAlive) }

// TrySend is not possible through net/http's response writer.
func (k *Response) TrySend(streamlog.Batch) (ok, queued bool) { return false, false }
func (k *Response) Flush() error                              { return nil }

// HalfClose is not possible through net/http's response writer: a cut
// client there just leaves.
func (k *Response) HalfClose() bool { return false }

// Chunked writes HTTP/1.1 chunks straight to a connection taken over from
// net/http: one writev per batch (size, events, CRLF) without copying the
// events, and a non-blocking one from the appending goroutine.
type Chunked struct {
	sockOut
	size [20]byte
	vec  [3][]byte
	bufs net.Buffers
}

var crlf = []byte("\r\n")

// NewChunked makes the sink of a hijacked HTTP/1.1 connection; WriteHead
// starts the response.
func NewChunked(conn net.Conn, timeout time.Duration) *Chunked {
	return &Chunked{sockOut: newSockOut(conn, timeout)}
}

// WriteHead writes the status line, hdr (with the date, chunked encoding
// and Connection: close set here) and first as the first chunk.
func (k *Chunked) WriteHead(hdr http.Header, first []byte) error {
	head := make([]byte, 0, 512)
	head = append(head, "HTTP/1.1 200 OK\r\n"...)
	hdr.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	hdr.Set("Transfer-Encoding", "chunked")
	hdr.Set("Connection", "close")
	for _, name := range slices.Sorted(maps.Keys(hdr)) {
		for _, v := range hdr[name] {
			head = append(head, name...)
			head = append(head, ": "...)
			head = append(head, v...)
			head = append(head, crlf...)
		}
	}
	head = append(head, crlf...)
	head = strconv.AppendInt(head, int64(len(first)), 16)
	head = append(append(append(head, crlf...), first...), crlf...)
	k.conn.SetWriteDeadline(time.Now().Add(k.timeout))
	_, err := k.conn.Write(head)
	return err
}

// Finish writes the terminating chunk: a clean end.
func (k *Chunked) Finish() error {
	k.conn.SetWriteDeadline(time.Now().Add(k.timeout))
	_, err := k.conn.Write([]byte("0\r\n\r\n"))
	return err
}

func (k *Chunked) write(p []byte) error {
	if err := k.Flush(); err != nil {
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

func (k *Chunked) Send(b streamlog.Batch) error { return k.write(b.Data) }
func (k *Chunked) KeepAlive() error             { return k.write(KeepAlive) }

// TrySend writes one chunk with a non-blocking writev straight on the
// socket (see nowWriter); what the socket does not take waits in pending.
func (k *Chunked) TrySend(b streamlog.Batch) (ok, queued bool) {
	if k.now == nil || len(k.pending) > 0 {
		return false, false
	}
	hdr := append(strconv.AppendInt(k.size[:0], int64(len(b.Data)), 16), '\r', '\n')
	n, err := k.now.writev(hdr, b.Data, crlf)
	if err != nil || n == 0 {
		// Full (EAGAIN) or broken: the blocking write sends it, or
		// meets the error, on the reader's goroutine.
		return false, false
	}
	if n < len(hdr)+len(b.Data)+len(crlf) {
		k.queue(n, hdr, b.Data, crlf)
		return true, true
	}
	return true, false
}

// Flush writes what TrySend could not, within the write timeout.
func (k *Chunked) Flush() error { return k.flushPending() }
