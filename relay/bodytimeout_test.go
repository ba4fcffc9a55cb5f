package relay_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// A client that sends its body a byte at a time is answered 408 once the
// body timeout passes, long before its body would have come whole: it
// holds the relay's connection no longer. A body that arrives in time
// streams as usual, past the body's deadline.
func TestASlowBodyIsRefusedAtTheBodyTimeout(t *testing.T) {
	_, base := start(t, relay.WithBodyTimeout(300*time.Millisecond))
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(hello))
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			answered <- resp
		}
		close(answered)
	}()
	sent := 0
	var resp *http.Response
	for ; sent < len(hello) && resp == nil; sent++ {
		c.Write([]byte{hello[sent]})
		select {
		case resp = <-answered:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if resp == nil {
		resp = <-answered
	}
	require.NotNil(t, resp, "the relay answered")
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	require.Less(t, sent, len(hello), "answered before the body came whole")

	// In time: the answer streams to its end, well past the body's deadline.
	ok := post(t, base+"/v1/chat/completions?answer=short&gap_ms=15", hello)
	require.Equal(t, http.StatusOK, ok.StatusCode)
	evs, err := events(ok.Body)
	require.NoError(t, err)
	require.Equal(t, "[DONE]", evs[len(evs)-1].Data)
}

// A stream's log is bounded in bytes, whatever its events' sizes: over
// WithMaxStreamBytes the stream fails, as at WithMaxEvents, and its
// client is told so in the relay's words.
func TestAStreamOverItsByteBoundFails(t *testing.T) {
	_, base := start(t, relay.WithMaxStreamBytes(64<<10))
	resp := post(t, base+"/v1/chat/completions?answer=sample-100k&gap_ms=0&token_chars=64", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs, err := events(resp.Body)
	require.NoError(t, err)
	size := 0
	for _, ev := range evs {
		size += len(ev.Data)
	}
	require.Less(t, size, 64<<10, "the client got no more than the bound")
	in := info(t, base, resp.Header.Get("X-Trickle-Stream"))
	require.Equal(t, relay.StateFailed, in.State)
	require.Contains(t, in.Message, "reached the limit of 65536 bytes")
}
