package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/chat"
	"github.com/trickle-dev/trickle/stream"
)

// recording reads one of the stream package's recorded upstream answers.
func recording(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "stream", "testdata", name))
	require.NoError(t, err)
	return b
}

// event is one relayed event as emit hears it.
type event struct{ Type, Data string }

// recordedEvents is what a faithful relay emits for a recording, read
// without the sse package: SSE blocks split on blank lines (the
// recordings used here have single-line data fields), or NDJSON lines.
func recordedEvents(rec []byte, ndjson bool) []event {
	var out []event
	if ndjson {
		for line := range strings.Lines(string(rec)) {
			if l := strings.TrimSpace(line); l != "" {
				out = append(out, event{Data: l})
			}
		}
		return out
	}
	for block := range strings.SplitSeq(string(rec), "\n\n") {
		var ev event
		var has bool
		for line := range strings.Lines(block) {
			line = strings.TrimRight(line, "\n")
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev.Type = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				ev.Data, has = v, true
			}
		}
		if has {
			out = append(out, ev)
		}
	}
	return out
}

// replay writes a recording the way a model API streams it: a few bytes
// at a time, flushed, so that events arrive cut anywhere.
func replay(w http.ResponseWriter, contentType string, rec []byte) {
	replayIn(w, contentType, rec, 97)
}

// replayIn writes rec in flushed pieces of size bytes.
func replayIn(w http.ResponseWriter, contentType string, rec []byte, size int) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	f := w.(http.Flusher)
	for len(rec) > 0 {
		n := min(len(rec), size)
		w.Write(rec[:n])
		f.Flush()
		rec = rec[n:]
	}
}

// recorder is an upstream on loopback: it records each request and
// answers it with its handler.
type recorder struct {
	URL      string
	requests atomic.Int32
	mu       sync.Mutex
	headers  []http.Header
	bodies   [][]byte
	gone     chan struct{} // one send per request whose context ended before the handler returned
}

func newRecorder(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) *recorder {
	t.Helper()
	rc := &recorder{gone: make(chan struct{}, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(rc.requests.Add(1))
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.headers = append(rc.headers, r.Header.Clone())
		rc.bodies = append(rc.bodies, b)
		rc.mu.Unlock()
		h(w, r, n)
		if r.Context().Err() != nil {
			rc.gone <- struct{}{}
		}
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	rc.URL = srv.URL + "/v1/endpoint"
	return rc
}

// sawEveryRequestGo waits until every request that reached the upstream
// has seen the relay give up on it. (On a loaded machine a timeout may
// fire before a request is even sent: then there is nothing to see.)
func (rc *recorder) sawEveryRequestGo() {
	for range rc.requests.Load() {
		<-rc.gone
	}
}

func (rc *recorder) header(i int) http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.headers[i]
}

func (rc *recorder) body(i int) []byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.bodies[i]
}

// generous timeouts that no test here waits for unless it sets one lower.
var generous = Defaults{FirstTokenTimeout: time.Minute, IdleTimeout: time.Minute, TotalTimeout: time.Minute}

func checked(t *testing.T, u Upstream) *Upstream {
	t.Helper()
	require.NoError(t, u.Check(generous))
	return &u
}

// collect runs u and returns what it relayed.
func collect(t *testing.T, ctx context.Context, u *Upstream, maxEvent int) ([]event, int, []int, error) {
	t.Helper()
	var got []event
	var retries []int
	n, err := u.Run(ctx, "s1", []byte(`{}`), maxEvent, func(typ, data string) bool {
		got = append(got, event{typ, data})
		return true
	}, func(attempt int, err error) {
		require.Error(t, err)
		retries = append(retries, attempt)
	})
	return got, n, retries, err
}

func TestCheckRefusesAnUpstreamThatCannotWorkAndNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		u     Upstream
		field string
	}{
		{"a relative URL", Upstream{URL: "/v1/chat", Dialect: stream.DialectOpenAI}, "URL"},
		{"a URL of another scheme", Upstream{URL: "ftp://host/x", Dialect: stream.DialectOpenAI}, "URL"},
		{"a URL without a host", Upstream{URL: "http:///x", Dialect: stream.DialectOpenAI}, "URL"},
		{"a URL that does not parse", Upstream{URL: "http://[::1", Dialect: stream.DialectOpenAI}, "URL"},
		{"a dialect it cannot write a request for", Upstream{URL: "http://h/x", Dialect: stream.DialectGemini}, "Dialect"},
		{"no dialect", Upstream{URL: "http://h/x"}, "Dialect"},
		{"a negative first-token timeout", Upstream{URL: "http://h/x", Dialect: stream.DialectOpenAI, FirstTokenTimeout: -1}, "FirstTokenTimeout"},
		{"a negative idle timeout", Upstream{URL: "http://h/x", Dialect: stream.DialectOllama, IdleTimeout: -1}, "IdleTimeout"},
		{"a negative total timeout", Upstream{URL: "https://h/x", Dialect: stream.DialectAnthropic, TotalTimeout: -time.Second}, "TotalTimeout"},
		{"negative retries", Upstream{URL: "http://h/x", Dialect: stream.DialectOpenAI, Retries: -1}, "Retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.u.Check(generous)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.field, fe.Field)
			require.True(t, strings.HasPrefix(err.Error(), tc.field+" "), err.Error())
			require.NotEmpty(t, fe.Reason)
		})
	}
}

func TestCheckFillsTheDefaultsLeftAtZeroAndKeepsTheRest(t *testing.T) {
	u := Upstream{URL: "http://127.0.0.1:1/v1", Dialect: stream.DialectOpenAI, IdleTimeout: 3 * time.Second}
	require.NoError(t, u.Check(Defaults{FirstTokenTimeout: time.Second, IdleTimeout: 2 * time.Second, TotalTimeout: 9 * time.Second}))
	require.Equal(t, time.Second, u.FirstTokenTimeout)
	require.Equal(t, 3*time.Second, u.IdleTimeout)
	require.Equal(t, 9*time.Second, u.TotalTimeout)
	require.NotNil(t, u.Client, "a checked upstream has a client")

	own := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	v := Upstream{URL: "http://h/x", Dialect: stream.DialectOllama, Client: own}
	require.NoError(t, v.Check(generous))
	require.Same(t, own.Transport, v.Client.Transport, "a client given keeps its transport")
	require.Equal(t, time.Minute, v.Client.Timeout, "and its timeout")
	require.NotNil(t, v.Client.CheckRedirect, "but never follows a redirect")
	require.Nil(t, own.CheckRedirect, "the client given is not changed")
}

func TestDialectsIsACopyTheCallerCannotChange(t *testing.T) {
	d := Dialects()
	require.Equal(t, []stream.Dialect{stream.DialectOpenAI, stream.DialectAnthropic, stream.DialectOllama}, d)
	d[0] = stream.DialectGemini
	require.Equal(t, stream.DialectOpenAI, Dialects()[0])
}

// decodeRequest decodes a body as the relay does: its members once, the
// request read from them.
func decodeRequest(t *testing.T, body string) (*chat.Request, map[string]json.RawMessage) {
	t.Helper()
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &members))
	var req chat.Request
	require.NoError(t, chat.Read(members, &req))
	return &req, members
}

func TestBodyWritesTheClientsRequestInTheUpstreamsDialect(t *testing.T) {
	const client = `{"model":"page-model","stream":true,"temperature":0.5,"max_tokens":77,
		"messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Use markdown."}]},
		{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":[{"type":"text","text":"Tea?"}]}]}`
	for _, tc := range []struct {
		name      string
		dialect   stream.Dialect
		model     string
		streaming bool
		want      string
	}{
		{"openai keeps every field, sets the model and asks for usage", stream.DialectOpenAI, "", true,
			`{"model":"page-model","stream":true,"stream_options":{"include_usage":true},"temperature":0.5,"max_tokens":77,
			"messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Use markdown."}]},
			{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":[{"type":"text","text":"Tea?"}]}]}`},
		{"openai without streaming asks for no usage", stream.DialectOpenAI, "relay-model", false,
			`{"model":"relay-model","stream":false,"temperature":0.5,"max_tokens":77,
			"messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Use markdown."}]},
			{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":[{"type":"text","text":"Tea?"}]}]}`},
		{"anthropic takes the system and developer messages out as its system", stream.DialectAnthropic, "relay-model", true,
			`{"model":"relay-model","max_tokens":77,"system":"Be brief.\n\nUse markdown.","stream":true,
			"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]},{"role":"assistant","content":[{"type":"text","text":"Hello"}]},{"role":"user","content":[{"type":"text","text":"Tea?"}]}]}`},
		{"ollama flattens each message to its text, its output capped by num_predict", stream.DialectOllama, "", false,
			`{"model":"page-model","stream":false,"options":{"num_predict":77},
			"messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":"Use markdown."},
			{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"Tea?"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := Upstream{Dialect: tc.dialect, Model: tc.model}
			req, members := decodeRequest(t, client)
			got, err := u.Body(req, members, tc.streaming)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(got))
		})
	}
}

func TestBodyForAnthropicTakesMaxCompletionTokensOverMaxTokensAndDefaultsTo4096(t *testing.T) {
	u := Upstream{Dialect: stream.DialectAnthropic}
	for body, want := range map[string]float64{
		`{"model":"m","messages":[]}`:                                                       4096,
		`{"model":"m","max_tokens":10,"messages":[]}`:                                       10,
		`{"model":"m","max_tokens":10,"max_completion_tokens":20,"messages":[]}`:            20,
		`{"model":"m","max_completion_tokens":30,"messages":[{"role":"user","content":1}]}`: 30,
	} {
		req, members := decodeRequest(t, body)
		got, err := u.Body(req, members, true)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(got, &m))
		require.Equal(t, want, m["max_tokens"], body)
		require.NotContains(t, m, "system", "no system message, no system field")
	}
}

func TestBodyRefusesARequestWithoutAModelAsTheClientsFault(t *testing.T) {
	for _, d := range Dialects() {
		u := Upstream{Dialect: d}
		_, err := u.Body(&chat.Request{}, map[string]json.RawMessage{}, true)
		require.ErrorIs(t, err, chat.ErrBadRequest, d)
		require.ErrorIs(t, err, ErrNoModel, d)
		require.Contains(t, err.Error(), "--upstream-model", "the operator is told how to name one")
	}
}

func TestRunRelaysARecordedAnswerOfEachDialectEventByEventAndEndsCleanly(t *testing.T) {
	for _, tc := range []struct {
		dialect     stream.Dialect
		file        string
		contentType string
		auth        func(h http.Header) bool
	}{
		{stream.DialectOpenAI, "openai-text.sse", "text/event-stream", func(h http.Header) bool {
			return h.Get("Authorization") == "Bearer sk-test" && h.Get("x-api-key") == "" && h.Get("anthropic-version") == ""
		}},
		{stream.DialectOpenAI, "openai-tools.sse", "text/event-stream; charset=utf-8", nil},
		{stream.DialectAnthropic, "anthropic-text.sse", "text/event-stream", func(h http.Header) bool {
			return h.Get("x-api-key") == "sk-test" && h.Get("Authorization") == "" && h.Get("anthropic-version") == "2023-06-01"
		}},
		{stream.DialectAnthropic, "anthropic-thinking-tool.sse", "text/event-stream", nil},
		{stream.DialectOllama, "ollama-thinking.ndjson", "application/x-ndjson", func(h http.Header) bool {
			return h.Get("Authorization") == "Bearer sk-test"
		}},
		{stream.DialectOllama, "ollama-tools.ndjson", "application/x-ndjson", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rec := recording(t, tc.file)
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { replay(w, tc.contentType, rec) })
			u := checked(t, Upstream{URL: up.URL, Dialect: tc.dialect, Key: "sk-test"})

			got, n, retries, err := collect(t, t.Context(), u, 1<<20)
			require.NoError(t, err)
			want := recordedEvents(rec, tc.dialect == stream.DialectOllama)
			require.Equal(t, want, got, "every event once, in order, with its type")
			require.Equal(t, len(want), n)
			require.Empty(t, retries)
			require.EqualValues(t, 1, up.requests.Load())

			h := up.header(0)
			require.Equal(t, "application/json", h.Get("Content-Type"))
			require.Contains(t, h.Get("Accept"), "text/event-stream")
			if tc.auth != nil {
				require.True(t, tc.auth(h), "the key goes where the dialect wants it: %v", h)
			}
			require.Equal(t, `{}`, string(up.body(0)), "the payload is sent as it is")
		})
	}
}

func TestRunRelaysTheSameEventsHoweverTheUpstreamCutsItsBytes(t *testing.T) {
	for _, tc := range []struct {
		dialect     stream.Dialect
		file        string
		contentType string
	}{
		{stream.DialectOpenAI, "openai-tools.sse", "text/event-stream"},
		{stream.DialectAnthropic, "anthropic-thinking-tool.sse", "text/event-stream"},
		{stream.DialectOllama, "ollama-tools.ndjson", "application/x-ndjson"},
	} {
		rec := recording(t, tc.file)
		want := recordedEvents(rec, tc.dialect == stream.DialectOllama)
		for _, size := range []int{1, 2, 3, 7, 64, len(rec)} {
			t.Run(fmt.Sprintf("%s in pieces of %d bytes", tc.file, size), func(t *testing.T) {
				up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { replayIn(w, tc.contentType, rec, size) })
				u := checked(t, Upstream{URL: up.URL, Dialect: tc.dialect})
				got, _, _, err := collect(t, t.Context(), u, 1<<20)
				require.NoError(t, err)
				require.Equal(t, want, got)
			})
		}
	}
}

func TestRunSaysAnAnswerCutBeforeItsEndMarkerWasNotCompleteAndDoesNotRetryIt(t *testing.T) {
	whole := string(recording(t, "openai-text.sse"))
	withoutDone, ok := strings.CutSuffix(whole, "data: [DONE]\n\n")
	require.True(t, ok)
	for _, tc := range []struct {
		name        string
		dialect     stream.Dialect
		rec         []byte
		contentType string
		want        error
	}{
		{"an OpenAI answer without [DONE]", stream.DialectOpenAI, []byte(withoutDone), "text/event-stream", ErrNoEndMarker},
		{"an Ollama answer cut inside its last line", stream.DialectOllama, recording(t, "ollama-truncated.ndjson"), "application/x-ndjson", ErrNoEndMarker},
		{"an OpenAI answer cut inside an event", stream.DialectOpenAI, recording(t, "openai-truncated.sse"), "text/event-stream", ErrUpstream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { replay(w, tc.contentType, tc.rec) })
			u := checked(t, Upstream{URL: up.URL, Dialect: tc.dialect, Retries: 3})
			got, n, retries, err := collect(t, t.Context(), u, 1<<20)
			require.ErrorIs(t, err, tc.want)
			require.NotEmpty(t, got)
			require.Equal(t, len(got), n)
			require.Contains(t, err.Error(), fmt.Sprintf("after %d events", n))
			require.Empty(t, retries, "an answer already begun is never asked for again: it would be doubled")
			require.EqualValues(t, 1, up.requests.Load())
		})
	}
}

func TestRunRetriesAnEmptyAnswerThatClosedAtOnce(t *testing.T) {
	rec := recording(t, "openai-text.sse")
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Content-Type", "text/event-stream")
			return // 200 and no byte
		}
		replay(w, "text/event-stream", rec)
	})
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, Retries: 1})
	got, _, retries, err := collect(t, t.Context(), u, 1<<20)
	require.NoError(t, err)
	require.Equal(t, []int{1}, retries)
	require.Equal(t, recordedEvents(rec, false), got)
}

func TestRunNeverRelaysTheUpstreamsOwnErrorAndSaysItFailed(t *testing.T) {
	for _, tc := range []struct {
		dialect     stream.Dialect
		file        string
		contentType string
	}{
		{stream.DialectOpenAI, "openai-error.sse", "text/event-stream"},
		{stream.DialectAnthropic, "anthropic-overloaded.sse", "text/event-stream"},
		{stream.DialectOllama, "ollama-error.ndjson", "application/x-ndjson"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rec := recording(t, tc.file)
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { replay(w, tc.contentType, rec) })
			u := checked(t, Upstream{URL: up.URL, Dialect: tc.dialect, Retries: 2})
			got, _, retries, err := collect(t, t.Context(), u, 1<<20)
			require.ErrorIs(t, err, ErrUpstream)
			require.NotErrorIs(t, err, ErrNoEndMarker)
			require.ErrorIs(t, err, ErrReported)
			require.Contains(t, err.Error(), "reported an error", "the log has the upstream's own event")
			want := recordedEvents(rec, tc.dialect == stream.DialectOllama)
			require.Equal(t, want[:len(got)], got, "what came before the error is relayed as it came")
			require.Less(t, len(got), len(want), "the error event itself is not relayed: the relay writes its own")
			require.Equal(t, "the model's service reported an error", Public(err))
			require.Empty(t, retries)
		})
	}
}

func TestRunRetriesOnlyTheStatusesWorthRetrying(t *testing.T) {
	rec := recording(t, "openai-text.sse")
	for _, tc := range []struct {
		name    string
		status  int
		retried bool
	}{
		{"a server error is retried", http.StatusBadGateway, true},
		{"a rate limit is retried", http.StatusTooManyRequests, true},
		{"a refused key is not", http.StatusUnauthorized, false},
		{"a bad request is not", http.StatusBadRequest, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					http.Error(w, `{"error":"at internal-host-7 with key sk-..."}`, tc.status)
					return
				}
				replay(w, "text/event-stream", rec)
			})
			u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, Retries: 1})
			got, _, retries, err := collect(t, t.Context(), u, 1<<20)
			if tc.retried {
				require.NoError(t, err)
				require.Equal(t, []int{1}, retries)
				require.Equal(t, recordedEvents(rec, false), got)
				return
			}
			var se *StatusError
			require.ErrorAs(t, err, &se)
			require.ErrorIs(t, err, ErrUpstream)
			require.Equal(t, tc.status, se.Code)
			require.Equal(t, up.URL, se.URL)
			require.Contains(t, se.Body, "internal-host-7", "the log hears the upstream's own words")
			require.Contains(t, err.Error(), up.URL)
			require.NotContains(t, Public(err), "internal-host-7", "the client never does")
			require.Empty(t, retries)
			require.Empty(t, got)
			require.EqualValues(t, 1, up.requests.Load())
		})
	}
}

func TestRunGivesUpAfterItsRetriesAndReturnsTheLastFailure(t *testing.T) {
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOllama, Retries: 2})
	_, _, retries, err := collect(t, t.Context(), u, 1<<20)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusServiceUnavailable, se.Code)
	require.Equal(t, []int{1, 2}, retries[:2], "onRetry hears of each failed attempt, numbered from 1")
	require.EqualValues(t, 3, up.requests.Load(), "the first request and two retries")
}

func TestRunRetriesAnUpstreamThatCannotBeReached(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/v1/chat/completions"
	srv.Close() // nothing listens there now
	u := checked(t, Upstream{URL: url, Dialect: stream.DialectOpenAI, Retries: 1})
	_, n, retries, err := collect(t, t.Context(), u, 1<<20)
	require.ErrorIs(t, err, ErrUpstream)
	require.Contains(t, err.Error(), url)
	require.Zero(t, n)
	require.Equal(t, 1, retries[0])
	require.Equal(t, "the relay could not reach the model's service, or it broke off the answer", Public(err))
}

func TestRunNeverFollowsARedirectEvenOneThatKeepsTheMethodAndBody(t *testing.T) {
	rec := recording(t, "anthropic-text.sse")
	target := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		replay(w, "text/event-stream", rec)
	})
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		from := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Redirect(w, r, target.URL, code)
		})
		u := checked(t, Upstream{URL: from.URL, Dialect: stream.DialectAnthropic, Key: "k"})
		got, _, retries, err := collect(t, t.Context(), u, 1<<20)
		var se *StatusError
		require.ErrorAs(t, err, &se, code)
		require.Equal(t, code, se.Code)
		require.Equal(t, target.URL, se.Location)
		require.Empty(t, got)
		require.Empty(t, retries, "a redirect is not retried")
	}
	require.Zero(t, target.requests.Load(), "the target never sees the key or the body")
}

// blockUntilGone answers 200 and sends first (if any), then waits until
// the relay gives up on the request.
func blockUntilGone(first string) func(w http.ResponseWriter, r *http.Request, _ int) {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(first))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func TestRunTimesOutAnUpstreamThatSendsNothingAndSaysSo(t *testing.T) {
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { <-r.Context().Done() })
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, FirstTokenTimeout: 20 * time.Millisecond})
	_, n, _, err := collect(t, t.Context(), u, 1<<20)
	require.ErrorIs(t, err, ErrFirstTokenTimeout)
	require.ErrorIs(t, err, ErrUpstream)
	require.Contains(t, err.Error(), "stream s1")
	require.Zero(t, n)
	require.Equal(t, "the model's service sent nothing within the first-token timeout", Public(err))
	up.sawEveryRequestGo() // the upstream saw the request cancelled
}

func TestRunTimesOutAnUpstreamThatHeadersButSendsNoByte(t *testing.T) {
	up := newRecorder(t, blockUntilGone(""))
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, FirstTokenTimeout: 20 * time.Millisecond, Retries: 1})
	_, _, retries, err := collect(t, t.Context(), u, 1<<20)
	require.ErrorIs(t, err, ErrFirstTokenTimeout)
	require.Equal(t, 1, retries[0], "nothing came, so asking again doubles nothing")
	require.LessOrEqual(t, up.requests.Load(), int32(2))
	up.sawEveryRequestGo()
}

func TestRunTimesOutAnUpstreamThatFallsSilentAfterItBegan(t *testing.T) {
	up := newRecorder(t, blockUntilGone("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"))
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, FirstTokenTimeout: time.Minute, IdleTimeout: 20 * time.Millisecond, Retries: 3})
	// The first-token watchdog is reset to the idle timeout by the first byte.
	got, n, retries, err := collect(t, t.Context(), u, 1<<20)
	require.ErrorIs(t, err, ErrIdleTimeout)
	require.Contains(t, err.Error(), "after 1 events")
	require.Len(t, got, 1)
	require.Equal(t, 1, n)
	require.Empty(t, retries)
	require.Equal(t, "the model's service went silent past the idle timeout", Public(err))
	up.sawEveryRequestGo()
}

func TestRunStopsAnAnswerThatOutlastsTheTotalTimeout(t *testing.T) {
	up := newRecorder(t, blockUntilGone("data: {}\n\n"))
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, TotalTimeout: 30 * time.Millisecond})
	_, _, _, err := collect(t, t.Context(), u, 1<<20)
	require.ErrorIs(t, err, ErrTotalTimeout, "whether the first event came in time or not")
	require.Equal(t, "the model's answer exceeded the total timeout", Public(err))
	up.sawEveryRequestGo()
}

func TestRunStopsWhenTheCallerCancelsAndTheUpstreamSeesItGo(t *testing.T) {
	up := newRecorder(t, blockUntilGone("data: {}\n\n"))
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, Retries: 3})
	ctx, cancel := context.WithCancel(t.Context())
	var retried atomic.Int32
	n, err := u.Run(ctx, "s1", []byte(`{}`), 1<<20, func(string, string) bool {
		cancel() // the client left after the first event
		return true
	}, func(int, error) { retried.Add(1) })
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, n)
	require.Zero(t, retried.Load())
	up.sawEveryRequestGo()
}

func TestRunDoesNotRetryWhenTheCallerCancelledBeforeTheAnswer(t *testing.T) {
	arrived := make(chan struct{}, 1)
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, Retries: 5})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived // the client leaves while the upstream is thinking
		cancel()
	}()
	_, _, retries, err := collect(t, ctx, u, 1<<20)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, retries)
	require.EqualValues(t, 1, up.requests.Load())
}

func TestRunStopsReadingWhenEmitSaysNoMore(t *testing.T) {
	rec := recording(t, "openai-text.sse")
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { replay(w, "text/event-stream", rec) })
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, Retries: 2})
	var seen int
	n, err := u.Run(t.Context(), "s1", nil, 1<<20, func(string, string) bool {
		seen++
		return seen < 3
	}, func(int, error) { t.Error("retried") })
	require.Error(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, 3, seen, "no event after the one refused")
}

func TestRunRefusesAnEventOverTheLimitInEitherFraming(t *testing.T) {
	for _, tc := range []struct {
		dialect     stream.Dialect
		file        string
		contentType string
	}{
		{stream.DialectOpenAI, "openai-text.sse", "text/event-stream"},
		{stream.DialectOllama, "ollama-thinking.ndjson", "application/x-ndjson"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			rec := recording(t, tc.file)
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { replay(w, tc.contentType, rec) })
			u := checked(t, Upstream{URL: up.URL, Dialect: tc.dialect})
			got, _, _, err := collect(t, t.Context(), u, 64)
			require.ErrorIs(t, err, ErrUpstream)
			require.Empty(t, got, "every recorded event is longer than 64 bytes")
		})
	}
}

func TestRunReadsAnOllamaAnswerSentAsServerSentEvents(t *testing.T) {
	var b strings.Builder
	nd := recording(t, "ollama-thinking.ndjson")
	for line := range strings.Lines(string(nd)) {
		b.WriteString("data: " + strings.TrimSpace(line) + "\n\n")
	}
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		replay(w, "text/event-stream", []byte(b.String()))
	})
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOllama})
	got, _, _, err := collect(t, t.Context(), u, 1<<20)
	require.NoError(t, err)
	require.Equal(t, recordedEvents(nd, true), got)
}

func TestForwardCopiesAOneShotAnswerAndReadsItsOutputTokens(t *testing.T) {
	for _, tc := range []struct {
		dialect stream.Dialect
		answer  string
		tokens  int
	}{
		{stream.DialectOpenAI, `{"choices":[{"message":{"content":"Hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":12}}`, 12},
		{stream.DialectAnthropic, `{"content":[{"type":"text","text":"Hi"}],"usage":{"input_tokens":3,"output_tokens":7}}`, 7},
		{stream.DialectOllama, `{"message":{"content":"Hi"},"done":true,"eval_count":5}`, 5},
		// No usage: a token per four bytes of the answer, rounded up.
		{stream.DialectOpenAI, `{"choices":[]}`, 4},
		{stream.DialectOpenAI, `{"choices":[{"message":{"content":"Hello there"}}]}`, 13},
	} {
		t.Run(string(tc.dialect)+" "+tc.answer, func(t *testing.T) {
			up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.Header().Set("X-Internal", "secret")
				w.WriteHeader(http.StatusCreated)
				io.WriteString(w, tc.answer)
			})
			u := checked(t, Upstream{URL: up.URL, Dialect: tc.dialect, Key: "k"})
			rw := httptest.NewRecorder()
			n, err := u.Forward(t.Context(), rw, []byte(`{"stream":false}`))
			require.NoError(t, err)
			require.Equal(t, tc.tokens, n)
			require.Equal(t, http.StatusCreated, rw.Code)
			require.Equal(t, tc.answer, rw.Body.String())
			require.Equal(t, "application/json; charset=utf-8", rw.Header().Get("Content-Type"))
			require.Empty(t, rw.Header().Get("X-Internal"), "only the content type is passed on")
			require.Equal(t, `{"stream":false}`, string(up.body(0)))
		})
	}
}

func TestForwardWritesNothingForABodyThatIsNoCompletion(t *testing.T) {
	for _, body := range []string{`not json`, `<html>portal</html>`, `{"status":"queued"}`, `{"choices":[{"message":{"content":"cut`} {
		up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { io.WriteString(w, body) })
		u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI})
		rw := httptest.NewRecorder()
		_, err := u.Forward(t.Context(), rw, nil)
		require.ErrorIs(t, err, ErrNotCompletion, body)
		require.Empty(t, rw.Body.String(), body)
		require.Equal(t, "the model's service answered with something that is not a completion", Public(err))
	}
}

func TestForwardWritesNothingForAFailedAnswer(t *testing.T) {
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		http.Error(w, "quota of key sk-live-1 exhausted", http.StatusTooManyRequests)
	})
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI})
	rw := httptest.NewRecorder()
	_, err := u.Forward(t.Context(), rw, nil)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "quota of key sk-live-1 exhausted", se.Body)
	require.Equal(t, "429 Too Many Requests", se.Status)
	require.Empty(t, rw.Body.String())
	require.False(t, rw.Flushed)
	require.Equal(t, "the model's service is over its rate limit (429); try again shortly", Public(err))
}

func TestForwardSaysAnUnreachableUpstreamFailed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	u := checked(t, Upstream{URL: url, Dialect: stream.DialectOpenAI})
	_, err := u.Forward(t.Context(), httptest.NewRecorder(), nil)
	require.ErrorIs(t, err, ErrUpstream)
}

func TestForwardStopsAtTheTotalTimeout(t *testing.T) {
	up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) { <-r.Context().Done() })
	u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, TotalTimeout: 20 * time.Millisecond})
	_, err := u.Forward(t.Context(), httptest.NewRecorder(), nil)
	require.ErrorIs(t, err, ErrTotalTimeout)
	up.sawEveryRequestGo()
}

func TestPublicNamesTheKindOfFailureAndNeverItsDetail(t *testing.T) {
	se := func(code int) error {
		return &StatusError{URL: "http://internal:8080/v1", Code: code, Status: http.StatusText(code), Body: "trace at internal"}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{se(401), "the model's service refused the relay's credentials (401); the operator must check the relay's key"},
		{se(403), "the model's service refused the relay's credentials (403); the operator must check the relay's key"},
		{se(429), "the model's service is over its rate limit (429); try again shortly"},
		{se(500), "the model's service failed (500); try again shortly"},
		{se(529), "the model's service failed (529); try again shortly"},
		{se(404), "the model's service refused the request (404)"},
		{ErrIdleTimeout, "the model's service went silent past the idle timeout"},
		{errors.New("dial tcp: connection refused"), "the relay could not reach the model's service, or it broke off the answer"},
	} {
		got := Public(tc.err)
		require.Equal(t, tc.want, got)
		require.NotContains(t, got, "internal")
	}
	bad := errors.Join(chat.ErrBadRequest, errors.New("no model named"))
	require.Equal(t, bad.Error(), Public(bad), "the client's own mistake is told to the client")
}

func TestStatusErrorNamesTheURLAndUnwrapsToErrUpstream(t *testing.T) {
	err := &StatusError{URL: "http://u/v1", Code: 502, Status: "502 Bad Gateway", Body: "upstream down"}
	require.Equal(t, "relay: upstream failed: http://u/v1 answered 502 Bad Gateway: upstream down", err.Error())
	require.ErrorIs(t, err, ErrUpstream)
}

func TestMeterReadsTheOutputTokensEachDialectReportsInItsStream(t *testing.T) {
	for _, tc := range []struct {
		dialect stream.Dialect
		file    string
		want    int
	}{
		{stream.DialectOpenAI, "openai-text.sse", 41},
		{stream.DialectAnthropic, "anthropic-text.sse", 15},
		{stream.DialectOllama, "ollama-thinking.ndjson", 282},
		{stream.DialectOpenAI, "openai-truncated.sse", 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			u := Upstream{Dialect: tc.dialect}
			m := u.NewMeter()
			var last, prev int
			for _, ev := range recordedEvents(recording(t, tc.file), tc.dialect == stream.DialectOllama) {
				last = m.See(ev.Type, ev.Data)
				require.GreaterOrEqual(t, last, prev, "the count never goes back")
				prev = last
			}
			require.Equal(t, tc.want, last)
		})
	}
}

func TestAMeterWithoutADecoderCountsNothing(t *testing.T) {
	require.Zero(t, (&Meter{}).See("", `{"usage":{"completion_tokens":3}}`))
}

func TestCappedKeepsOnlyItsFirstBytesButSwallowsAll(t *testing.T) {
	c := &capped{b: new(bytes.Buffer), n: 5}
	for _, p := range []string{"abc", "def", "ghi"} {
		n, err := c.Write([]byte(p))
		require.NoError(t, err)
		require.Equal(t, len(p), n)
	}
	require.Equal(t, "abcde", c.b.String())
}

// onRetry hears of each attempt that is tried again, not of the last one:
// the relay's log said "retrying" and counted the final failure twice.
func TestRunTellsOnRetryOnlyOfTheAttemptsItRetries(t *testing.T) {
	for _, retries := range []int{0, 1, 2} {
		up := newRecorder(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Error(w, "down", http.StatusServiceUnavailable)
		})
		u := checked(t, Upstream{URL: up.URL, Dialect: stream.DialectOpenAI, Retries: retries})
		_, _, told, err := collect(t, t.Context(), u, 1<<20)
		require.Error(t, err)
		require.EqualValues(t, retries+1, up.requests.Load())
		require.Len(t, told, retries, "with Retries %d", retries)
	}
}
