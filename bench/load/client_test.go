package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/relaytest"
	"github.com/trickle-dev/trickle/sse"
)

// The scanner counts what the sse package's decoder sees, whatever the
// cuts, and flags repeated and skipped sequence numbers.
func TestTheScannerCountsEventsDuplicatesAndGapsInAnyChunking(t *testing.T) {
	text := ": trickle stream s\nretry: 2000\n\n" +
		"id: s:1\ndata: {\"delta\":\"a\"}\n\n" +
		": keep-alive\n\n" +
		"id: s:2\ndata: {\"delta\":\"b\"}\n\n" +
		"id: s:2\ndata: {\"delta\":\"b\"}\n\n" + // again: a duplicate
		"id: s:5\ndata: {\"delta\":\"e\"}\n\n" + // 3 and 4 skipped
		"id: s:6\nevent: trickle.status\ndata: {\"status\":\"cancelled\"}\n\n" +
		"id: s:6\ndata: [DONE]\n\n"
	dec, err := sse.NewDecoder(strings.NewReader(text))
	require.NoError(t, err)
	var answerEvents int
	for {
		ev, err := dec.Next()
		if err != nil {
			break
		}
		if ev.Type == "message" {
			answerEvents++
		}
	}
	for _, size := range []int{1, 2, 3, 7, 64, len(text)} {
		rec := &streamRec{arrived: make([]int64, 6)}
		s := &scanner{rec: rec}
		for i := 0; i < len(text); i += size {
			s.feed([]byte(text[i:min(i+size, len(text))]), int64(i+1))
		}
		require.Equal(t, "s", rec.id, "chunks of %d", size)
		require.Equal(t, 1, rec.dups, "chunks of %d", size)
		require.Equal(t, 2, rec.gaps, "chunks of %d", size)
		require.Equal(t, 4, rec.delivered(), "chunks of %d", size)
		require.Equal(t, answerEvents, rec.delivered()+rec.dups, "every answer event the decoder saw, chunks of %d", size)
		require.True(t, rec.done)
		require.Equal(t, `{"status":"cancelled"}`, rec.status)
	}
}

// Against a real relay, over both transports and with both clients, a
// stream cut by drop_after is resumed and counted exactly once per event.
func TestTheLeanClientsResumeACutStreamAndCountEveryEventOnce(t *testing.T) {
	startRelay(t)
	const tokens = 40
	body := `{"model":"m","stream":true,"max_tokens":40,"messages":[{"role":"user","content":"x"}]}`
	query := "?dialect=plain&answer=sample-20k&ttft_ms=0&gap_ms=1&jitter_ms=0&drop_after=7"
	for _, cl := range clientKinds() {
		for _, tr := range []string{"sse", "ws"} {
			name := cl + " client, " + tr
			*transport = tr
			rec := &streamRec{arrived: make([]int64, tokens+1)}
			connected, wire := streamOnce(t, cl, query, body, rec, name)
			require.True(t, rec.done, name)
			require.Equal(t, tokens+1, rec.delivered(), name)
			require.Equal(t, 1, rec.resumes, name)
			require.Zero(t, rec.dups, name)
			require.Zero(t, rec.gaps, name)
			require.EqualValues(t, 1, connected, name)
			require.Greater(t, wire, int64(tokens*20), name)
		}
	}
}

// A client told to stall stops reading for that long after the given event,
// then reads the rest: nothing lost, and the stream cannot have ended
// before the stall was over.
func TestAStalledClientPausesThenReadsEverything(t *testing.T) {
	startRelay(t)
	*transport = "sse"
	const tokens, stall = 30, 300 * time.Millisecond
	body := `{"model":"m","stream":true,"max_tokens":30,"messages":[{"role":"user","content":"x"}]}`
	query := "?dialect=plain&answer=sample-20k&ttft_ms=0&gap_ms=1&jitter_ms=0"
	for _, cl := range clientKinds() {
		rec := &streamRec{arrived: make([]int64, tokens+1), stallAt: 5, stallFor: stall}
		streamOnce(t, cl, query, body, rec, cl)
		require.True(t, rec.done, cl)
		require.Equal(t, tokens+1, rec.delivered(), cl)
		require.GreaterOrEqual(t, rec.arrived[tokens]-rec.arrived[4], int64(stall), cl+": the end marker came after the stall")
	}
}

// startRelay serves a relay with the simulated model on loopback for the
// test and points the load generator (-addr) at it.
func startRelay(t *testing.T) {
	_, ts := relaytest.Start(t)
	*addr = strings.TrimPrefix(ts.URL, "http://")
}

// clientKinds are the load generator's clients on this platform.
func clientKinds() []string {
	if hasEpoll {
		return []string{"goroutine", "epoll"}
	}
	return []string{"goroutine"}
}

// streamOnce runs one stream with the client of that kind until it ends
// (10 s at most), recording into rec; it returns the connections made and
// the bytes read.
func streamOnce(t *testing.T, kind, query, body string, rec *streamRec, name string) (connected, wire int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	streams, err := newStreamer(kind, deadline)
	require.NoError(t, err, name)
	var conns, bytes atomic.Int64
	ended := make(chan error, 1)
	streams.start(ctx, query, body, rec, &conns, &bytes, func(err error) { ended <- err })
	require.NoError(t, <-ended, name)
	streams.close()
	return conns.Load(), bytes.Load()
}
