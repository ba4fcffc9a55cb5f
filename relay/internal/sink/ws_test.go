package sink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// frameLengths crosses every boundary of the length encoding.
var frameLengths = []int{0, 1, 125, 126, 127, 1000, 0xFFFF, 0x10000, 70000}

// captureHijack is an http.ResponseWriter whose hijacked connection writes
// into a buffer: what coder/websocket writes, byte for byte.
type captureHijack struct {
	httptest.ResponseRecorder
	out  bytes.Buffer
	peer net.Conn
}

func (h *captureHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	a, b := net.Pipe()
	h.peer = b
	return a, bufio.NewReadWriter(bufio.NewReader(a), bufio.NewWriter(&h.out)), nil
}

// libraryFrame is the frame coder/websocket writes, as a server, for a text
// message p.
func libraryFrame(t *testing.T, p []byte) []byte {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/v1/ws", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Sec-WebSocket-Version", "13")
	r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	h := &captureHijack{ResponseRecorder: *httptest.NewRecorder()}
	c, err := websocket.Accept(h, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	require.NoError(t, err)
	defer h.peer.Close()
	defer c.CloseNow()
	require.NoError(t, c.Write(context.Background(), websocket.MessageText, p))
	return bytes.Clone(h.out.Bytes())
}

// frameSize reads the header at the start of b: the frame's whole length
// (header and payload); ok is false while b holds less than the header.
func frameSize(b []byte) (size int, ok bool) {
	if len(b) < 2 {
		return 0, false
	}
	h, n := 2, uint64(b[1]&0x7f)
	switch n {
	case 126:
		if h = 4; len(b) < h {
			return 0, false
		}
		n = uint64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		if h = 10; len(b) < h {
			return 0, false
		}
		n = binary.BigEndian.Uint64(b[2:])
	}
	return h + int(n), true
}

// frames splits b into whole frames.
func frames(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		size, ok := frameSize(b)
		require.True(t, ok && size <= len(b), "a cut frame at the end: %q", b)
		out = append(out, b[:size])
		b = b[size:]
	}
	return out
}

// The relay's event frames are, byte for byte, the frames coder/websocket
// writes for the same message, at every boundary of the length encoding.
func TestEventFramesAreTheFramesCoderWebsocketWrites(t *testing.T) {
	for _, n := range frameLengths {
		p := bytes.Repeat([]byte("é"), n/2)
		if n%2 == 1 {
			p = append(p, 'x')
		}
		want := libraryFrame(t, p)
		got := append(appendTextHeader(nil, len(p)), p...)
		require.Equal(t, want, got, "a %d-byte message", n)
	}
}

// tcpPair is a connected loopback TCP pair.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		done <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-done
	require.NotNil(t, server)
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// owned is a server side of a real WebSocket: coder/websocket's handshake,
// then the connection in the relay's hands (Frames and its FrameReader).
type owned struct {
	k   *Frames
	r   *FrameReader
	lib *websocket.Conn
}

type keepHijack struct {
	http.ResponseWriter
	conn net.Conn
	br   *bufio.Reader
}

func (h *keepHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.conn, h.br = c, brw.Reader
	return c, brw, nil
}

// dialOwned connects coder/websocket's client to a server that owns the
// connection after the handshake.
func dialOwned(t *testing.T) (*owned, *websocket.Conn) {
	t.Helper()
	got := make(chan *owned, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj := &keepHijack{ResponseWriter: w}
		c, err := websocket.Accept(hj, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		k := NewFrames(hj.conn, 5*time.Second)
		got <- &owned{k: k, r: k.NewReader(hj.br, 1<<20), lib: c}
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(1 << 20)
	o := <-got
	t.Cleanup(func() { o.lib.CloseNow() })
	return o, c
}

func batchOf(ms [][]byte) streamlog.Batch {
	var b streamlog.Batch
	for _, m := range ms {
		b.Data = append(b.Data, m...)
		b.Ends = append(b.Ends, len(b.Data))
	}
	return b
}

// Every way the sink writes events (one blocking message, a batch in
// one write, the non-blocking send of one event or of several) gives
// messages coder/websocket's client reads back whole, at every boundary
// of the length encoding.
func TestCoderWebsocketReadsEveryEventTheSinkWrites(t *testing.T) {
	var msgs [][]byte
	for _, n := range frameLengths {
		msgs = append(msgs, []byte(strings.Repeat("a", n)))
	}
	for i := range 40 {
		msgs = append(msgs, []byte("id: s:"+strconv.Itoa(i)+"\ndata: {}\n\n"))
	}
	o, c := dialOwned(t)
	k := o.k
	var want [][]byte
	for _, m := range msgs[:len(frameLengths)] {
		require.NoError(t, k.WriteMessage(m))
		want = append(want, m)
	}
	require.NoError(t, k.Send(batchOf(msgs)))
	want = append(want, msgs...)
	small := msgs[len(frameLengths):]
	sent := 0
	for i := range small {
		if ok, queued := k.TrySend(batchOf(small[i : i+1])); ok {
			require.False(t, queued, "a few bytes on an empty socket")
			want = append(want, small[i])
			sent++
		}
	}
	if ok, _ := k.TrySend(batchOf(small)); ok {
		want = append(want, small...)
		sent++
	}
	if k.now != nil {
		require.Equal(t, len(small)+1, sent, "an empty socket takes every non-blocking send")
	}
	// Tiny events up to the inline limit: their frame headers make the
	// frames longer than the text; every event must go, or none.
	var tiny [][]byte
	for range maxInline / 10 {
		tiny = append(tiny, []byte("data: x\n\n\n")) // 10 bytes
	}
	if ok, queued := k.TrySend(batchOf(tiny)); ok {
		require.False(t, queued)
		want = append(want, tiny...)
	}
	require.NoError(t, k.Flush())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, m := range want {
		typ, got, err := c.Read(ctx)
		require.NoError(t, err, "message %d", i)
		require.Equal(t, websocket.MessageText, typ)
		require.Equal(t, string(m), string(got), "message %d", i)
	}
}

// The reader hands back the messages coder/websocket's client writes,
// whole (one frame, or fragmented into many), answers its pings between
// events, and answers its close with the same code.
func TestTheFrameReaderReadsTheClientsMessagesAndAnswersPingAndClose(t *testing.T) {
	o, c := dialOwned(t)
	type read struct {
		typ websocket.MessageType
		msg []byte
		err error
	}
	reads := make(chan read, 16)
	go func() {
		for {
			typ, msg, err := o.r.ReadMessage()
			reads <- read{typ, msg, err}
			if err != nil {
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(`{"type":"stop"}`)))
	r := <-reads
	require.NoError(t, r.err)
	require.Equal(t, websocket.MessageText, r.typ)
	require.Equal(t, `{"type":"stop"}`, string(r.msg))

	long := strings.Repeat("é", 40000)
	w, err := c.Writer(ctx, websocket.MessageText)
	require.NoError(t, err)
	for piece := range strings.SplitSeq(long, "é") {
		_, err := io.WriteString(w, piece+"é") // the writer's buffer cuts it into frames
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	r = <-reads
	require.NoError(t, r.err)
	require.Equal(t, long+"é", string(r.msg), "a fragmented message, whole")

	// A ping is answered while events go out (the client reads them).
	clientReads := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				clientReads <- err
				return
			}
		}
	}()
	for i := range 50 {
		require.NoError(t, o.k.WriteMessage([]byte("data: "+strconv.Itoa(i)+"\n\n")))
	}
	require.NoError(t, c.Ping(ctx), "the relay answers the ping")

	// The close handshake: coder/websocket's Close waits for the answer.
	require.NoError(t, c.Close(websocket.StatusNormalClosure, "bye"))
	r = <-reads
	require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(r.err))
	require.ErrorIs(t, o.k.WriteMessage([]byte("data: late\n\n")), net.ErrClosed, "nothing after the close frame")
}

// A frame no client may send (unmasked) closes with a protocol error.
func TestAnUnmaskedClientFrameIsAProtocolError(t *testing.T) {
	server, client := tcpPair(t)
	k := NewFrames(server, time.Second)
	r := k.NewReader(bufio.NewReader(server), 1024)
	go client.Write(append(appendTextHeader(nil, 2), "hi"...))
	_, _, err := r.ReadMessage()
	require.ErrorIs(t, err, errProtocol)
	server.Close()
	got, _ := io.ReadAll(client)
	f := frames(t, got)
	require.Len(t, f, 1)
	require.Equal(t, byte(finBit|opClose), f[0][0])
	require.Equal(t, uint16(websocket.StatusProtocolError), binary.BigEndian.Uint16(f[0][2:]))
}

// An event frame a full socket took only part of is finished before any
// other frame (a pong here) goes out.
func TestAPongWaitsForTheRestOfAnEventTheSocketTookPartOf(t *testing.T) {
	server, client := tcpPair(t)
	k := NewFrames(server, 5*time.Second)
	if k.now == nil {
		t.Skip("no non-blocking writev on this platform: nothing is ever sent in part")
	}
	event := bytes.Repeat([]byte("e"), maxInline-7) // an odd size: the socket fills inside one
	sent := 0
	for {
		ok, queued := k.TrySend(streamlog.Batch{Data: event, Ends: []int{len(event)}})
		require.True(t, ok, "the socket took part of an event before it took nothing (after %d whole ones)", sent)
		sent++
		if queued {
			break
		}
	}
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(client)
		read <- b
	}()
	require.NoError(t, k.pong([]byte("p")))
	require.NoError(t, k.Flush())
	server.Close()
	got := frames(t, <-read)
	require.Len(t, got, sent+1)
	for i, f := range got[:sent] {
		require.Equal(t, append(appendTextHeader(nil, len(event)), event...), f, "event %d", i)
	}
	require.Equal(t, []byte{finBit | opPong, 1, 'p'}, got[sent])
}

// After the close frame, no event may follow (RFC 6455 5.5.1).
func TestNoEventFollowsTheCloseFrame(t *testing.T) {
	server, client := tcpPair(t)
	k := NewFrames(server, time.Second)
	event := []byte("data: x\n\n")
	require.NoError(t, k.WriteMessage(event))
	require.NoError(t, k.WriteClose(websocket.StatusNormalClosure, ""))
	require.ErrorIs(t, k.WriteMessage(event), net.ErrClosed)
	require.ErrorIs(t, k.Send(batchOf([][]byte{event, event})), net.ErrClosed)
	ok, _ := k.TrySend(batchOf([][]byte{event}))
	require.False(t, ok)
	server.Close()
	got, err := io.ReadAll(client)
	require.NoError(t, err)
	require.Equal(t, [][]byte{append(appendTextHeader(nil, len(event)), event...), {finBit | opClose, 2, 0x03, 0xE8}}, frames(t, got))
}
