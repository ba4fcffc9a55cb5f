package relay_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// holding is a hold-back checker on loopback that clears every sentence
// at once but the at-th it is asked about (from 1), which waits until the
// test calls release.
type holding struct {
	url     string
	arrived chan map[string]string // the held request, when it comes
	ended   chan error             // how it ended: nil released, or its context's error
	release func()

	mu  sync.Mutex
	got []map[string]string
}

func holdingChecker(t *testing.T, at int) *holding {
	t.Helper()
	h := &holding{arrived: make(chan map[string]string, 1), ended: make(chan error, 1)}
	released := make(chan struct{})
	var once sync.Once
	h.release = func() { once.Do(func() { close(released) }) }
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]string
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, req)
		n := len(h.got)
		h.mu.Unlock()
		if n == at {
			h.arrived <- req
			select {
			case <-released:
				h.ended <- nil
			case <-r.Context().Done():
				h.ended <- r.Context().Err()
				return
			}
		}
		json.NewEncoder(w).Encode(map[string]bool{"allow": true})
	}))
	t.Cleanup(func() {
		h.release()
		ts.Close()
	})
	h.url = ts.URL
	return h
}

// requests is what the checker was asked, in order.
func (h *holding) requests() []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]string(nil), h.got...)
}

// within waits for a value on ch for up to 10 s (a loaded machine).
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// textOf is the answer's text the events carry, read as the widget reads
// them.
func textOf(t *testing.T, dialect stream.Dialect, evs []sse.Event) string {
	t.Helper()
	var b []byte
	for _, ev := range evs {
		b = sse.AppendMessage(b, sse.Message{Event: ev.Type, Data: ev.Data})
	}
	return answerOf(t, dialect, b).Text()
}

// requireChained checks that the checker was asked about each sentence
// once, in order: each request's context is the sentences before it.
func requireChained(t *testing.T, reqs []map[string]string) string {
	t.Helper()
	var text strings.Builder
	for i, r := range reqs {
		require.Equal(t, text.String(), r["context"], "request %d: the context is every sentence before it, none twice", i)
		text.WriteString(r["sentence"])
	}
	return text.String()
}

// metricValues reads the relay's /metrics: each sample's line, name and
// labels as written, to its value.
func metricValues(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp := get(t, base+"/metrics")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		out[line[:i]] = v
	}
	require.NoError(t, sc.Err())
	return out
}

// readAll reads a response's body to its end.
func readAll(resp *http.Response) ([]byte, error) { return io.ReadAll(resp.Body) }

// requireWithheld reads a withheld answer: the text clients were shown.
func requireWithheld(t *testing.T, dialect stream.Dialect, body []byte) *stream.Answer {
	t.Helper()
	a := answerOf(t, dialect, body)
	require.ErrorIs(t, a.Err(), stream.ErrWithheld, "%s", body)
	require.Equal(t, stream.Failed, a.Status())
	require.Contains(t, string(body), stream.WithheldMessage)
	return a
}

// A checker that does not answer within --hold-back-timeout is a failed
// check: under block the answer is withheld from its first sentence,
// under allow every sentence goes out, each after the timeout.
func TestHoldBackACheckerThatTimesOutFollowsOnError(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Its body read, the server sees the relay give up.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(func() {
		hang.CloseClientConnections()
		hang.Close()
	})
	const timeout = 40 * time.Millisecond
	_, plain := start(t)
	_, want := reference(t, plain, shortQuery)

	_, block := start(t, relay.WithHoldBack(relay.HoldBack{URL: hang.URL, Timeout: timeout}))
	resp := post(t, block+"/v1/chat/completions"+shortQuery, hello)
	body, err := readAll(resp)
	require.NoError(t, err)
	a := requireWithheld(t, "openai", body)
	require.Empty(t, a.Text(), "nothing of an unchecked answer")
	in := info(t, block, resp.Header.Get("X-Trickle-Stream"))
	require.Equal(t, relay.StateWithheld, in.State)
	m := metricValues(t, block)
	require.Equal(t, 1.0, m[`trickle_hold_back_total{verdict="error"}`], "one check, failed")
	require.Equal(t, 0.0, m[`trickle_hold_back_total{verdict="allow"}`])
	require.Equal(t, 1.0, m["trickle_hold_back_seconds_count"])
	require.GreaterOrEqual(t, m["trickle_hold_back_seconds_sum"], timeout.Seconds(), "the sentence waited the whole timeout")

	_, allow := start(t, relay.WithHoldBack(relay.HoldBack{URL: hang.URL, Timeout: timeout, OnError: "allow"}))
	_, got := reference(t, allow, shortQuery)
	same(t, want, got, "on-error allow: the whole answer, after the timeouts")
	m = metricValues(t, allow)
	checks := m[`trickle_hold_back_total{verdict="error"}`]
	require.Greater(t, checks, 3.0, "every sentence timed out")
	require.Equal(t, checks, m["trickle_hold_back_seconds_count"])
	require.GreaterOrEqual(t, m["trickle_hold_back_seconds_sum"], checks*timeout.Seconds())
}

// A checker that answers anything but a 2xx {"allow": bool} has failed,
// whatever its body says; so has one that cannot be reached.
func TestHoldBackACheckerThatAnswersNonsenseHasFailed(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there any more
	for _, c := range []struct {
		name   string
		status int
		body   string
	}{
		{"500 saying allow", http.StatusInternalServerError, `{"allow": true}`},
		{"302", http.StatusFound, `{"allow": true}`},
		{"broken JSON", http.StatusOK, `{"allow": tru`},
		{"not JSON", http.StatusOK, `OK`},
		{"a string verdict", http.StatusOK, `{"allow": "yes"}`},
		{"empty", http.StatusOK, ``},
		{"unreachable", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := gone.URL
			if c.status != 0 {
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(c.status)
					fmt.Fprint(w, c.body)
				}))
				t.Cleanup(ts.Close)
				url = ts.URL
			}
			for _, onError := range []string{"block", "allow"} {
				_, base := start(t, relay.WithHoldBack(relay.HoldBack{URL: url, OnError: onError}))
				resp := post(t, base+"/v1/chat/completions"+shortQuery, hello)
				body, err := readAll(resp)
				require.NoError(t, err)
				m := metricValues(t, base)
				require.Zero(t, m[`trickle_hold_back_total{verdict="allow"}`], "on-error %s", onError)
				require.Positive(t, m[`trickle_hold_back_total{verdict="error"}`], "on-error %s", onError)
				if onError == "block" {
					require.Empty(t, requireWithheld(t, "openai", body).Text())
					continue
				}
				a := answerOf(t, "openai", body)
				require.Equal(t, stream.Complete, a.Status(), "on-error allow: %v", a.Err())
			}
		})
	}
}

// A checker that answers JSON without "allow" ({} or null) has not
// allowed: the answer is withheld and the verdict counted as a block,
// even with --hold-back-on-error allow (issue 36: it counted as an error,
// which allow let through).
func TestHoldBackACheckerAnswerWithoutAllowIsABlock(t *testing.T) {
	for _, body := range []string{`{}`, `{"allow": null}`, `{"allowed": true}`} {
		t.Run(body, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			}))
			t.Cleanup(ts.Close)
			for _, onError := range []string{"block", "allow"} {
				_, base := start(t, relay.WithHoldBack(relay.HoldBack{URL: ts.URL, OnError: onError}))
				got, err := readAll(post(t, base+"/v1/chat/completions"+shortQuery, hello))
				require.NoError(t, err)
				require.Empty(t, requireWithheld(t, "openai", got).Text(), "on-error %s", onError)
				m := metricValues(t, base)
				require.Positive(t, m[`trickle_hold_back_total{verdict="block"}`], "on-error %s", onError)
				require.Zero(t, m[`trickle_hold_back_total{verdict="error"}`], "on-error %s", onError)
			}
		})
	}
}

// A client that reconnects while a sentence is held gets the events
// cleared so far, then the rest once the sentence is cleared: every event
// once, in order, as without hold-back; the checker is asked about each
// sentence once.
func TestHoldBackAResumeWhileASentenceIsHeldGetsTheClearedEventsThenTheRest(t *testing.T) {
	_, plain := start(t)
	_, want := reference(t, plain, shortQuery)
	h := holdingChecker(t, 3)
	_, base := start(t, relay.WithHoldBack(relay.HoldBack{URL: h.url, Timeout: time.Minute}), relay.WithGrace(time.Minute))

	resp, cut := openSSE(t, http.MethodPost, base+"/v1/chat/completions"+shortQuery, hello, "")
	id := resp.Header.Get("X-Trickle-Stream")
	held := within(t, h.arrived, "the third sentence's check")
	// The events of the cleared sentences are all in the log before the
	// next sentence is asked about.
	n := info(t, base, id).Events
	require.GreaterOrEqual(t, n, 2, "two cleared sentences carry more than one event")
	got := readSSE(t, resp, 1, cut)

	resp, cut = openSSE(t, http.MethodGet, base+"/v1/streams/"+id, "", got[0].LastEventID)
	t.Cleanup(cut)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	dec := decoder(t, resp.Body)
	for len(got) < n {
		ev, err := dec.Next()
		require.NoError(t, err, "the resume gives the cleared events at once")
		got = append(got, ev)
	}
	shown := textOf(t, "openai", got)
	require.NotEmpty(t, shown)
	require.True(t, strings.HasPrefix(held["context"], shown), "only cleared text: %q is not a prefix of %q", shown, held["context"])
	require.Equal(t, n, info(t, base, id).Events, "nothing more while the sentence is held")
	require.Empty(t, h.ended, "still held")

	h.release()
	require.NoError(t, within(t, h.ended, "the held check's end"))
	for {
		ev, err := dec.Next()
		if err != nil {
			break
		}
		got = append(got, ev)
	}
	requireWhole(t, want, got, "a resume mid-hold")
	text := requireChained(t, h.requests())
	require.Equal(t, strings.TrimSpace(textOf(t, "openai", got)), text)
	require.Equal(t, relay.StateComplete, info(t, base, id).State)
}

// DELETE /v1/streams/{id} while a sentence is held stops the stream at
// once: the upstream request and the pending check are cancelled, and
// clients get the stopped ending after the cleared text.
func TestHoldBackAStopWhileASentenceIsHeldCancelsTheGeneration(t *testing.T) {
	f := newFake(t, forever)
	h := holdingChecker(t, 2)
	base := upstreamRelay(t, f, "openai", relay.WithHoldBack(relay.HoldBack{URL: h.url, Timeout: time.Minute}))
	resp := post(t, base+"/v1/chat/completions", hello)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id := resp.Header.Get("X-Trickle-Stream")
	held := within(t, h.arrived, "the second sentence's check")

	require.Equal(t, http.StatusOK, del(t, base+"/v1/streams/"+id).StatusCode)
	within(t, f.cancelled, "the upstream request's cancellation")
	require.ErrorIs(t, within(t, h.ended, "the held check's end"), context.Canceled, "the pending check is abandoned")
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Equal(t, relay.StatusEvent, evs[len(evs)-1].Type)
	require.Contains(t, evs[len(evs)-1].Data, `"stopped"`)
	require.True(t, strings.HasPrefix(held["context"], textOf(t, "openai", evs)), "nothing of the held sentence")
	in := info(t, base, id)
	require.Equal(t, relay.StateStopped, in.State)
	require.True(t, in.UpstreamCancelled)
	m := metricValues(t, base)
	require.Equal(t, 1.0, m[`trickle_hold_back_total{verdict="allow"}`], "the first sentence; the abandoned check has no verdict")
	require.Zero(t, m[`trickle_hold_back_total{verdict="block"}`])
	require.Zero(t, m[`trickle_hold_back_total{verdict="error"}`])
}

// Over the WebSocket a withheld answer ends as over SSE, in each dialect
// (OpenAI's error object, Anthropic's error event): the messages are the
// SSE endpoint's bytes.
func TestHoldBackAWithheldAnswerEndsTheSameOverTheWebSocket(t *testing.T) {
	_, base := start(t, relay.WithHoldBack(relay.HoldBack{Sim: "block=depends"}))
	for _, d := range []stream.Dialect{stream.DialectOpenAI, stream.DialectAnthropic} {
		t.Run(d.String(), func(t *testing.T) {
			c := wsDial(t, base, "?answer=short&token_chars=3&dialect="+d.String(), hello)
			msgs, err := wsMessages(t, c)
			require.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), "%v", err)
			body := strings.Join(msgs, "")
			a := requireWithheld(t, d, []byte(body))
			require.Contains(t, a.Text(), "Hello!")
			require.NotContains(t, a.Text(), "depends")
			// The status and the dialect's own ending are one entry of
			// the log, so one message (streamlog.AppendProviderEnd).
			evs, err := events(strings.NewReader(body))
			require.NoError(t, err)
			id, _, _ := strings.Cut(evs[0].LastEventID, ":")
			sse, err := readAll(get(t, base+"/v1/streams/"+id))
			require.NoError(t, err)
			require.Equal(t, string(sse), body, "the WebSocket carries the SSE endpoint's bytes")
			require.Equal(t, relay.StateWithheld, info(t, base, id).State)
			if d == stream.DialectAnthropic {
				require.Equal(t, "error", evs[len(evs)-1].Type, "Anthropic's error event ends it")
			}
		})
	}
}

// /metrics counts each check by verdict and records how long each
// sentence waited in trickle_hold_back_seconds.
func TestHoldBackMetricsCountEveryCheck(t *testing.T) {
	url, got := recordingChecker(t, "depends")
	_, base := start(t, relay.WithHoldBack(relay.HoldBack{URL: url}))
	before := metricValues(t, base)
	require.Zero(t, before["trickle_hold_back_seconds_count"])
	for _, v := range []string{"allow", "block", "error"} {
		require.Contains(t, before, `trickle_hold_back_total{verdict="`+v+`"}`, "every verdict is on /metrics from the start")
	}
	resp := post(t, base+"/v1/chat/completions"+shortQuery, hello)
	body, err := readAll(resp)
	require.NoError(t, err)
	requireWithheld(t, "openai", body)
	n := float64(len(got()))
	require.Greater(t, n, 1.0)
	m := metricValues(t, base)
	require.Equal(t, n-1, m[`trickle_hold_back_total{verdict="allow"}`])
	require.Equal(t, 1.0, m[`trickle_hold_back_total{verdict="block"}`])
	require.Zero(t, m[`trickle_hold_back_total{verdict="error"}`])
	require.Equal(t, n, m["trickle_hold_back_seconds_count"], "one wait per check")
	require.Positive(t, m["trickle_hold_back_seconds_sum"])
	require.Equal(t, n, m[`trickle_hold_back_seconds_bucket{le="+Inf"}`])

	// The checker is asked again for the next answer, the counts go on.
	resp = post(t, base+"/v1/chat/completions?dialect=openai&answer=code&token_chars=24", hello)
	body, err = readAll(resp)
	require.NoError(t, err)
	require.Equal(t, stream.Complete, answerOf(t, "openai", body).Status())
	m = metricValues(t, base)
	require.Equal(t, float64(len(got())), m["trickle_hold_back_seconds_count"])
}

// A reader of a withheld answer gets every cleared sentence whole, in
// every dialect and however the model cuts its tokens: the event that
// ends the last cleared sentence and starts the blocked one goes out cut
// to its cleared part.
func TestHoldBackAWithheldAnswerKeepsTheClearedSentencesWhole(t *testing.T) {
	url, got := recordingChecker(t, "depends")
	_, base := start(t, relay.WithHoldBack(relay.HoldBack{URL: url}))
	for _, d := range sim.Dialects() {
		for _, chars := range []int{1, 3, 4, 7, 24} {
			t.Run(d.String()+"/"+itoa(chars), func(t *testing.T) {
				resp := post(t, base+"/v1/chat/completions?answer=short&dialect="+d.String()+"&token_chars="+itoa(chars), hello)
				body, err := readAll(resp)
				require.NoError(t, err)
				a := requireWithheld(t, d, body)
				reqs := got()
				blocked := reqs[len(reqs)-1]
				require.Contains(t, blocked["sentence"], "depends")
				require.Equal(t, blocked["context"], a.Text(), "the sentences before the blocked one, whole, and nothing of it")
				require.True(t, strings.HasSuffix(a.Text(), "network."), "%q", a.Text())
			})
		}
	}
}

// An answer asked for in one piece cannot be held back sentence by
// sentence, so it must not get past the checker: a relay with hold-back
// refuses it, before any generation, and the upstream is asked nothing.
func TestHoldBackRefusesAnAnswerInOnePiece(t *testing.T) {
	const whole = `{"model":"m","messages":[{"role":"user","content":"hello"}]}`
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		return play(w, r, "text/event-stream", simEvents("openai", "code"), 0)
	})
	hold := relay.WithHoldBack(relay.HoldBack{Sim: "block=depends"})
	_, simulated := start(t, hold)
	upstream := upstreamRelay(t, f, "openai", hold)
	for _, base := range []string{simulated, upstream} {
		r := refusalOf(t, post(t, base+"/v1/chat/completions?answer=short", whole), http.StatusBadRequest)
		require.Equal(t, "stream_required", r.Error.Code)
		require.Equal(t, "stream", r.Error.Param)
		require.Contains(t, r.Error.Message, `"stream": true`)
	}
	require.Zero(t, f.requests.Load(), "the upstream was asked nothing")
	body, err := readAll(post(t, upstream+"/v1/chat/completions", hello))
	require.NoError(t, err)
	require.Equal(t, stream.Complete, answerOf(t, "openai", body).Status(), "a streamed request is answered")
}
