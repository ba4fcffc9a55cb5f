package relay

import (
	"bufio"
	"bytes"
	"context"
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
		size, op, ok := frameSize(got)
		require.True(t, ok)
		require.Equal(t, byte(opText), op)
		require.Equal(t, len(got), size, "frameSize reads the header written")
		for cut := range min(len(got), maxFrameHeader) {
			if _, _, ok := frameSize(got[:cut]); ok {
				require.GreaterOrEqual(t, cut, len(got)-len(p), "a %d-byte message: the header is whole only after %d bytes", n, len(got)-len(p))
			}
		}
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

// frames splits b into whole frames.
func frames(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(b) > 0 {
		size, _, ok := frameSize(b)
		require.True(t, ok && size <= len(b), "a cut frame at the end: %q", b)
		out = append(out, b[:size])
		b = b[size:]
	}
	return out
}

// However coder/websocket's buffered writer cuts its frames, they reach
// the socket whole, and an event written meanwhile goes out between two
// of them, never inside one.
func TestTheLibrarysFramesReachTheSocketWholeWithEventsBetweenThem(t *testing.T) {
	var lib []byte
	var libFrames [][]byte
	for _, n := range []int{0, 4, 125, 126, 300} { // pongs, and messages sent before a stream
		f := append(appendTextHeader(nil, n), bytes.Repeat([]byte{'p'}, n)...)
		f[0] = finBit | 0xA // pong
		libFrames = append(libFrames, f)
		lib = append(lib, f...)
	}
	event := []byte("id: s:1\ndata: {}\n\n")
	eventFrame := append(appendTextHeader(nil, len(event)), event...)
	for cut := 0; cut <= len(lib); cut++ {
		server, client := tcpPair(t)
		k := newWSSink(server, time.Second)
		w := (*wsLibraryWire)(k)
		n, err := w.Write(lib[:cut])
		require.NoError(t, err)
		require.Equal(t, cut, n)
		require.NoError(t, k.write(event))
		_, err = w.Write(lib[cut:])
		require.NoError(t, err)
		server.Close()
		got, err := io.ReadAll(client)
		require.NoError(t, err)
		// The frames wholly in the first piece, then the event, then
		// the rest.
		var want [][]byte
		at, placed := 0, false
		for _, f := range libFrames {
			if at+len(f) > cut && !placed {
				want, placed = append(want, eventFrame), true
			}
			want = append(want, f)
			at += len(f)
		}
		if !placed {
			want = append(want, eventFrame)
		}
		require.Equal(t, want, frames(t, got), "the library's bytes cut at %d", cut)
	}
}

// After the library's close frame, no event may follow (RFC 6455 5.5.1).
func TestNoEventFollowsTheCloseFrame(t *testing.T) {
	server, client := tcpPair(t)
	k := newWSSink(server, time.Second)
	event := []byte("data: x\n\n")
	require.NoError(t, k.write(event))
	closeFrame := []byte{finBit | opClose, 2, 0x03, 0xE8} // 1000
	_, err := (*wsLibraryWire)(k).Write(closeFrame)
	require.NoError(t, err)
	require.ErrorIs(t, k.write(event), net.ErrClosed)
	require.ErrorIs(t, k.send(batch{data: append(event, event...), ends: []int{len(event), 2 * len(event)}}), net.ErrClosed)
	ok, _ := k.trySend(batch{data: event, ends: []int{len(event)}})
	require.False(t, ok)
	server.Close()
	got, err := io.ReadAll(client)
	require.NoError(t, err)
	require.Equal(t, [][]byte{append(appendTextHeader(nil, len(event)), event...), closeFrame}, frames(t, got))
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
	batchOf := func(ms [][]byte) batch {
		var b batch
		for _, m := range ms {
			b.data = append(b.data, m...)
			b.ends = append(b.ends, len(b.data))
		}
		return b
	}
	sinks := make(chan *wsSink, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hj := &wsHijacker{ResponseWriter: w, timeout: 5 * time.Second}
		c, err := websocket.Accept(hj, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		go func() {
			for {
				if _, _, err := c.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		sinks <- hj.sink
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	k := <-sinks
	var want [][]byte
	for _, m := range msgs[:len(frameLengths)] {
		require.NoError(t, k.write(m))
		want = append(want, m)
	}
	require.NoError(t, k.send(batchOf(msgs)))
	want = append(want, msgs...)
	small := msgs[len(frameLengths):]
	sent := 0
	for i := range small {
		if ok, queued := k.trySend(batchOf(small[i : i+1])); ok {
			require.False(t, queued, "a few bytes on an empty socket")
			want = append(want, small[i])
			sent++
		}
	}
	if ok, _ := k.trySend(batchOf(small)); ok {
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
	if ok, queued := k.trySend(batchOf(tiny)); ok {
		require.False(t, queued)
		want = append(want, tiny...)
	}
	require.NoError(t, k.flush())
	for i, m := range want {
		typ, got, err := c.Read(ctx)
		require.NoError(t, err, "message %d", i)
		require.Equal(t, websocket.MessageText, typ)
		require.Equal(t, string(m), string(got), "message %d", i)
	}
}

// An event frame a full socket took only part of is finished before any
// frame of the library's (a pong here) goes out.
func TestALibraryFrameWaitsForTheRestOfAnEventTheSocketTookPartOf(t *testing.T) {
	server, client := tcpPair(t)
	k := newWSSink(server, 5*time.Second)
	if k.now == nil {
		t.Skip("no non-blocking writev on this platform: nothing is ever sent in part")
	}
	event := bytes.Repeat([]byte("e"), maxInline-7) // an odd size: the socket fills inside one
	sent := 0
	for {
		ok, queued := k.trySend(batch{data: event, ends: []int{len(event)}})
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
	pong := []byte{finBit | 0xA, 0}
	_, err := (*wsLibraryWire)(k).Write(pong)
	require.NoError(t, err)
	require.NoError(t, k.flush())
	server.Close()
	got := frames(t, <-read)
	require.Len(t, got, sent+1)
	for i, f := range got[:sent] {
		require.Equal(t, append(appendTextHeader(nil, len(event)), event...), f, "event %d", i)
	}
	require.Equal(t, pong, got[sent])
}
