package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/buffering"
	"github.com/trickle-dev/trickle/stream"
)

func openaiChunk(tok string) string {
	return fmt.Sprintf("data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", tok)
}

var probeTokens = []string{"The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "dog."}

// streamingServer writes one event per token, flushing, gap apart.
func streamingServer(t *testing.T, gap time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, tok := range probeTokens {
			io.WriteString(w, openaiChunk(tok))
			f.Flush()
			time.Sleep(gap)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// bufferedServer generates an answer of the given number of tokens but
// holds it, as a buffering proxy does, and writes it all at once at the end.
func bufferedServer(t *testing.T, hold time.Duration, tokens int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		var b strings.Builder
		for i := 0; i < tokens; i++ {
			b.WriteString(openaiChunk(probeTokens[i%len(probeTokens)]))
		}
		b.WriteString("data: [DONE]\n\n")
		time.Sleep(hold)
		io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func probeJSON(t *testing.T, args ...string) (int, probeReport, string) {
	t.Helper()
	code, out, stderr := trickle(t, "", append([]string{"probe"}, args...)...)
	var rep probeReport
	if out != "" {
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	}
	return code, rep, stderr
}

func TestProbeSaysAStreamThatTricklesIsStreaming(t *testing.T) {
	// 50 ms between tokens: a loaded machine that delays the probe's read
	// of one token shortens the gap after it, so the checks below leave
	// half of every gap as margin (15 ms gaps against a 10 ms floor
	// flaked under load).
	srv := streamingServer(t, 50*time.Millisecond)
	require.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1:"))
	code, rep, stderr := probeJSON(t, srv.URL)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "streaming", rep.Verdict, rep.Explanation)
	require.Equal(t, buffering.Streamed, rep.Buffering)
	require.Equal(t, len(probeTokens), rep.Tokens)
	require.True(t, rep.EndMarker)
	require.Equal(t, stream.DialectOpenAI, rep.Dialect)
	require.Equal(t, "complete", rep.AnswerStatus)
	require.Equal(t, 200, rep.StatusCode)
	require.NotNil(t, rep.TTFBMS)
	require.NotNil(t, rep.TTFTMS)
	require.LessOrEqual(t, *rep.TTFBMS, *rep.TTFTMS)
	require.Less(t, *rep.TTFTMS, *rep.LastByteMS)
	require.GreaterOrEqual(t, rep.Gaps.P50, 25.0, "tokens were written 50 ms apart")
	require.GreaterOrEqual(t, rep.Gaps.Max, rep.Gaps.P95)
	require.GreaterOrEqual(t, rep.Gaps.P95, rep.Gaps.P50)
	require.GreaterOrEqual(t, rep.SpreadMS, 7*25.0)
	require.Greater(t, rep.Bytes, int64(100))
	require.Contains(t, rep.Explanation, "Streaming")
}

func TestProbeSaysAStreamThatArrivesAllAtOnceIsBuffered(t *testing.T) {
	srv := bufferedServer(t, 60*time.Millisecond, buffering.MinTokens)
	code, rep, stderr := probeJSON(t, srv.URL)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "buffered", rep.Verdict, rep.Explanation)
	require.Equal(t, buffering.Buffered, rep.Buffering)
	require.Equal(t, buffering.MinTokens, rep.Tokens)
	require.True(t, rep.EndMarker)
	require.GreaterOrEqual(t, *rep.TTFBMS, 50.0)
	require.Equal(t, 0.0, rep.Gaps.Max, "every token arrived in the same read")
	require.Contains(t, rep.Explanation, "arrived together")
	require.Contains(t, rep.Explanation, "proxy")
}

// A short answer that arrives at once may come from a fast model: the probe
// does not call it buffered, and says how many tokens would.
func TestProbeCallsAShortAnswerArrivingAtOnceInconclusive(t *testing.T) {
	srv := bufferedServer(t, 10*time.Millisecond, len(probeTokens))
	code, rep, stderr := probeJSON(t, srv.URL)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "inconclusive", rep.Verdict, rep.Explanation)
	require.Equal(t, len(probeTokens), rep.Tokens)
	require.Contains(t, rep.Explanation, "fast model")
	require.Contains(t, rep.Explanation, fmt.Sprintf("at least %d tokens", buffering.MinTokens))
}

// The usage text quotes package buffering's figures.
func TestProbeUsageStatesTheBufferedDefinition(t *testing.T) {
	require.Contains(t, probeUsage, fmt.Sprintf("at least %d tokens within %d ms", buffering.MinTokens, buffering.Window.Milliseconds()))
}

func TestProbeReadsOllamaNDJSONAndSendsBodyAndHeaders(t *testing.T) {
	var gotMethod, gotBody, gotHeader, gotCT string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotMethod, gotHeader, gotCT = r.Method, r.Header.Get("X-Api-Key"), r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, tok := range []string{"Hel", "lo", "!"} {
			fmt.Fprintf(w, "{\"message\":{\"role\":\"assistant\",\"content\":%q},\"done\":false}\n", tok)
			w.(http.Flusher).Flush()
			time.Sleep(30 * time.Millisecond) // three tokens over 60+ ms: past the 50 ms window
		}
		io.WriteString(w, `{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":3}`+"\n")
	}))
	defer srv.Close()
	code, rep, stderr := probeJSON(t, srv.URL, "-d", `{"model":"m","stream":true}`, "-H", "X-Api-Key: secret")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "POST", gotMethod)
	require.Equal(t, `{"model":"m","stream":true}`, gotBody)
	require.Equal(t, "secret", gotHeader)
	require.Equal(t, "application/json", gotCT)
	require.Equal(t, stream.DialectOllama, rep.Dialect)
	require.Equal(t, 3, rep.Tokens)
	require.True(t, rep.EndMarker)
	require.Equal(t, "streaming", rep.Verdict)
	require.NotNil(t, rep.Usage)
}

func TestProbeReportsAStreamWithoutItsEndMarker(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, openaiChunk("cut"))
	}))
	defer srv.Close()
	code, rep, _ := probeJSON(t, srv.URL)
	require.Equal(t, 0, code)
	require.False(t, rep.EndMarker)
	require.Equal(t, "incomplete", rep.AnswerStatus)
	require.Equal(t, "inconclusive", rep.Verdict)
}

func TestProbeFailsOnAnErrorStatusButStillReports(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	code, rep, stderr := probeJSON(t, srv.URL)
	require.Equal(t, 1, code)
	require.Equal(t, 401, rep.StatusCode)
	require.Contains(t, stderr, "401")
}

func TestProbeUsageErrors(t *testing.T) {
	code, _, stderr := trickle(t, "", "probe")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "exactly one URL")
	code, _, stderr = trickle(t, "", "probe", "-H", "no colon", "http://127.0.0.1:1/")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "Name: value")
	code, _, stderr = trickle(t, "", "probe", "http://127.0.0.1:1/")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "GET http://127.0.0.1:1/")
}

func TestGapPercentilesUseNearestRank(t *testing.T) {
	base := time.Unix(0, 0)
	var times []time.Time
	at := base
	for _, g := range []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 100} {
		at = at.Add(time.Duration(g) * time.Millisecond)
		times = append(times, at)
	}
	// times[0] is after the first gap, so the 9 gaps are 20..100 ms.
	g := gaps(times)
	require.Equal(t, gapStats{P50: 60, P95: 100, Max: 100}, g)
	require.Equal(t, gapStats{}, gaps(times[:1]))
}

func TestProbeSaysAStreamFlushedInBlocksIsBatched(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// 60 tokens, flushed 20 at a time 40 ms apart: what a proxy with a
		// small buffer does to a stream.
		for burst := 0; burst < 3; burst++ {
			var b strings.Builder
			for i := 0; i < 20; i++ {
				b.WriteString(openaiChunk("tok "))
			}
			if burst == 2 {
				b.WriteString("data: [DONE]\n\n")
			}
			io.WriteString(w, b.String())
			w.(http.Flusher).Flush()
			if burst < 2 {
				time.Sleep(40 * time.Millisecond)
			}
		}
	}))
	defer srv.Close()
	code, rep, stderr := probeJSON(t, srv.URL)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, 60, rep.Tokens)
	require.Equal(t, "batched", rep.Verdict, rep.Explanation)
	require.GreaterOrEqual(t, rep.Gaps.Max, 30.0)
	require.Equal(t, 0.0, rep.Gaps.P50, "most tokens share a read with the one before")
}

func TestProbeGivesUpAtTheTimeoutAndReportsWhatCame(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, openaiChunk("one ")+openaiChunk("two "))
		w.(http.Flusher).Flush()
		select { // stall until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	code, rep, stderr := probeJSON(t, "--timeout", "150ms", srv.URL)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "the body failed")
	require.Equal(t, 2, rep.Tokens)
	require.False(t, rep.EndMarker)
	require.Equal(t, "failed", rep.AnswerStatus)
}
