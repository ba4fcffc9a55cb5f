package sink

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// events is a batch of three SSE events, as a log holds them.
func events() streamlog.Batch {
	return batchOf([][]byte{[]byte("id: s:1\ndata: a\n\n"), []byte("id: s:2\ndata: b\n\n"), []byte("id: s:3\ndata: c\n\n")})
}

const wantEvents = "id: s:1\ndata: a\n\nid: s:2\ndata: b\n\nid: s:3\ndata: c\n\n"

// sseClient GETs url and returns the body as the client read it, and how
// the read ended.
func sseClient(t *testing.T, url string) (string, error) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestPathsReadAsTheirNames(t *testing.T) {
	for s, want := range map[string]Path{"fast": Fast, "": Fast, "plain": Plain} {
		p, err := ParsePath(s)
		require.NoError(t, err)
		require.Equal(t, want, p)
	}
	require.Equal(t, "fast", Fast.String())
	require.Equal(t, "plain", Plain.String())
	_, err := ParsePath("quick")
	require.EqualError(t, err, `write path "quick": want fast or plain`)
}

func TestTheResponseSinkSendsEventsAndKeepAlivesThroughNetHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		k := NewResponse(w, time.Second)
		defer k.Release()
		require.NoError(t, k.Send(events()))
		require.NoError(t, k.KeepAlive())
		ok, queued := k.TrySend(events())
		require.False(t, ok || queued, "net/http's writer cannot send without blocking")
		require.NoError(t, k.Flush())
		require.False(t, k.HalfClose())
	}))
	defer srv.Close()
	got, err := sseClient(t, srv.URL)
	require.NoError(t, err)
	require.Equal(t, wantEvents+string(KeepAlive), got)
}

func TestTheResponseSinkWorksWhereWriteDeadlinesAreNotSupported(t *testing.T) {
	rec := httptest.NewRecorder()
	k := NewResponse(rec, time.Second)
	require.NoError(t, k.Send(events()))
	require.Equal(t, wantEvents, rec.Body.String())
	require.True(t, rec.Flushed)
}

// chunkedServer serves each request by hijacking it and handing the
// connection to serve as a Chunked sink.
func chunkedServer(t *testing.T, serve func(k *Chunked)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		require.NoError(t, err)
		defer conn.Close()
		serve(NewChunked(conn, 5*time.Second))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestTheChunkedSinkIsAnHTTPResponseAnyClientReads(t *testing.T) {
	url := chunkedServer(t, func(k *Chunked) {
		require.NoError(t, k.WriteHead(http.Header{"Content-Type": {"text/event-stream"}, "X-Trickle-Stream": {"s"}}, []byte(": hi\n\n")))
		require.NoError(t, k.Send(events()))
		ok, queued := k.TrySend(batchOf([][]byte{[]byte("id: s:4\ndata: d\n\n")}))
		require.True(t, ok, "an idle loopback socket takes a small chunk at once")
		require.False(t, queued)
		require.NoError(t, k.Flush())
		require.NoError(t, k.KeepAlive())
		require.NoError(t, k.Finish())
	})
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "s", resp.Header.Get("X-Trickle-Stream"))
	require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	require.True(t, resp.Close, "the connection is not reused")
	require.NotEmpty(t, resp.Header.Get("Date"))
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the terminating chunk is a clean end")
	require.Equal(t, ": hi\n\n"+wantEvents+"id: s:4\ndata: d\n\n"+string(KeepAlive), string(b))
}

func TestAChunkedResponseHalfClosedIsACutNeverACleanEnd(t *testing.T) {
	url := chunkedServer(t, func(k *Chunked) {
		require.NoError(t, k.WriteHead(http.Header{"Content-Type": {"text/event-stream"}}, []byte(": hi\n\n")))
		require.NoError(t, k.Send(events()))
		require.True(t, k.HalfClose())
	})
	got, err := sseClient(t, url)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF, "no terminating chunk: the client knows it was cut")
	require.Equal(t, ": hi\n\n"+wantEvents, got, "after everything already sent")
}

// stuckClient is a loopback TCP pair whose client never reads.
func stuckClient(t *testing.T) net.Conn {
	t.Helper()
	server, _ := tcpPair(t)
	return server
}

func TestAClientThatDoesNotReadIsCutAtTheWriteTimeout(t *testing.T) {
	big := batchOf([][]byte{[]byte("data: " + strings.Repeat("x", 256<<10) + "\n\n")})
	for _, tc := range []struct {
		name string
		send func(conn net.Conn) error
	}{
		{"chunked", func(conn net.Conn) error {
			k := NewChunked(conn, 50*time.Millisecond)
			for {
				if err := k.Send(big); err != nil {
					return err
				}
			}
		}},
		{"WebSocket frames", func(conn net.Conn) error {
			k := NewFrames(conn, 50*time.Millisecond)
			for {
				if err := k.Send(big); err != nil {
					return err
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.send(stuckClient(t))
			require.ErrorIs(t, err, streamlog.ErrCut)
		})
	}
}

func TestAChunkedSinkQueuesWhatAFullSocketDidNotTakeAndFlushesItFirst(t *testing.T) {
	server, client := tcpPair(t)
	k := NewChunked(server, 5*time.Second)
	if k.now == nil {
		t.Skip("no non-blocking writer on this platform")
	}
	big := batchOf([][]byte{[]byte("data: " + strings.Repeat("y", 64<<10) + "\n\n")})
	var sent int
	for {
		ok, queued := k.TrySend(big)
		if !ok {
			break
		}
		sent++
		if queued {
			ok, _ := k.TrySend(big)
			require.False(t, ok, "nothing is sent past what waits")
			break
		}
	}
	require.Positive(t, sent)
	read := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, client)
		read <- n
	}()
	require.NoError(t, k.Flush())
	require.NoError(t, k.Send(big), "a blocking send after the queue")
	server.Close()
	chunk := int64(len("10006\r\n") + len(big.Data) + 2)
	require.Equal(t, int64(sent+1)*chunk, <-read, "every chunk whole, none twice")
}

// acceptOn serves one WebSocket on path and hands it to serve.
func acceptOn(t *testing.T, path Path, serve func(ws WS)) *websocket.Conn {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		ws, err := AcceptWS(w, r, path, 5*time.Second, 1<<10)
		require.NoError(t, err)
		serve(ws)
	}))
	t.Cleanup(func() {
		<-done
		srv.Close()
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func TestAWebSocketOnEitherPathCarriesTheRequestTheEventsAndTheClose(t *testing.T) {
	for _, path := range []Path{Fast, Plain} {
		t.Run(path.String(), func(t *testing.T) {
			served := make(chan error, 1)
			c := acceptOn(t, path, func(ws WS) {
				typ, first, err := ws.ReadFirst(5 * time.Second)
				if err != nil || typ != websocket.MessageText || string(first) != `{"stream":true}` {
					served <- errors.New("the first message did not arrive as sent: " + string(first))
					return
				}
				k := ws.Sink()
				require.NoError(t, k.Send(events()))
				require.NoError(t, k.KeepAlive())
				require.NoError(t, k.Flush())
				require.NoError(t, ws.Write([]byte(`{"done":true}`)))
				msg, err := ws.Read()
				if err != nil || string(msg) != "stop" {
					served <- errors.New("the client's stop did not arrive")
					return
				}
				ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
				ws.Close(websocket.StatusNormalClosure, "bye")
				served <- nil
			})
			ctx := t.Context()
			require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(`{"stream":true}`)))
			var got []string
			for range 5 {
				typ, msg, err := c.Read(ctx)
				require.NoError(t, err)
				require.Equal(t, websocket.MessageText, typ)
				got = append(got, string(msg))
			}
			require.Equal(t, []string{"id: s:1\ndata: a\n\n", "id: s:2\ndata: b\n\n", "id: s:3\ndata: c\n\n", string(KeepAlive), `{"done":true}`}, got,
				"one message per event")
			require.NoError(t, c.Write(ctx, websocket.MessageText, []byte("stop")))
			_, _, err := c.Read(ctx)
			require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err))
			require.NoError(t, <-served)
		})
	}
}

func TestAWebSocketThatSendsNothingTimesOutOnItsFirstRead(t *testing.T) {
	for _, path := range []Path{Fast, Plain} {
		t.Run(path.String(), func(t *testing.T) {
			c := acceptOn(t, path, func(ws WS) {
				_, _, err := ws.ReadFirst(20 * time.Millisecond)
				require.Error(t, err)
				ws.CloseNow()
			})
			_, _, err := c.Read(t.Context())
			require.Error(t, err)
		})
	}
}

func TestAFastWebSocketClosesWhenItsReaderSeesTheEnd(t *testing.T) {
	c := acceptOn(t, Fast, func(ws WS) {
		done := make(chan struct{})
		ws.WatchReads(done)
		go func() {
			for {
				if _, err := ws.Read(); err != nil {
					close(done)
					return
				}
			}
		}()
		ws.Close(websocket.StatusGoingAway, "shutting down")
	})
	_, _, err := c.Read(t.Context())
	require.Equal(t, websocket.StatusGoingAway, websocket.CloseStatus(err))
}

func TestAClientMessageOverTheLimitEndsTheWebSocket(t *testing.T) {
	for _, path := range []Path{Fast, Plain} {
		t.Run(path.String(), func(t *testing.T) {
			failed := make(chan error, 1)
			c := acceptOn(t, path, func(ws WS) {
				_, _, err := ws.ReadFirst(5 * time.Second)
				failed <- err
				ws.CloseNow()
			})
			c.Write(t.Context(), websocket.MessageText, []byte(strings.Repeat("x", 2<<10)))
			require.Error(t, <-failed)
		})
	}
}

func TestARefusalThroughTheLibraryIsOneMessageThenTheClose(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		require.NoError(t, err)
		ws := LibraryWS(c, time.Second)
		ws.SetWriteDeadline(time.Now().Add(time.Second)) // no connection of its own: nothing to set
		require.NoError(t, ws.Write([]byte(`{"error":"origin"}`)))
		ws.Close(CloseCode(http.StatusForbidden), "origin not allowed")
	}))
	defer srv.Close()
	c, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	defer c.CloseNow()
	_, msg, err := c.Read(t.Context())
	require.NoError(t, err)
	require.Equal(t, `{"error":"origin"}`, string(msg))
	_, _, err = c.Read(t.Context())
	require.Equal(t, websocket.StatusPolicyViolation, websocket.CloseStatus(err))
}

func TestCloseCodesSayWhetherToTryAgain(t *testing.T) {
	for status, want := range map[int]websocket.StatusCode{
		http.StatusNotFound:            websocket.StatusNormalClosure,
		http.StatusGone:                websocket.StatusNormalClosure,
		http.StatusTooManyRequests:     websocket.StatusTryAgainLater,
		http.StatusServiceUnavailable:  websocket.StatusTryAgainLater,
		http.StatusInternalServerError: websocket.StatusInternalError,
		http.StatusForbidden:           websocket.StatusPolicyViolation,
		http.StatusBadRequest:          websocket.StatusPolicyViolation,
	} {
		require.Equal(t, want, CloseCode(status), status)
	}
}

func TestAPrefixConnReadsWhatNetHTTPBufferedFirst(t *testing.T) {
	server, client := tcpPair(t)
	go client.Write([]byte("rest"))
	r := bufio.NewReader(&prefixConn{Conn: server, prefix: []byte("first ")})
	b := make([]byte, 10)
	_, err := io.ReadFull(r, b)
	require.NoError(t, err)
	require.Equal(t, "first rest", string(b))
	_, err = libraryMute{}.Write([]byte("x"))
	require.Error(t, err, "the library never writes on a connection the relay owns")
}
