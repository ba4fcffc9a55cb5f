package element

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
	"github.com/trickle-dev/trickle/wire"
)

// relayRefs asks a real relay, mounted under prefix, for the
// X-Trickle-Stream-URL it writes on a stream's POST and on a resume's GET,
// and the stream's id.
func relayRefs(t *testing.T, prefix string) (id, post, resume string) {
	t.Helper()
	srv, _ := relaytest.Start(t, relay.WithSimDefaults(relay.SimDefaults{TTFT: time.Millisecond, Gap: time.Millisecond, TokenChars: 5}))
	var h http.Handler = srv.Handler()
	if prefix != "" {
		h = http.StripPrefix(prefix, h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	resp, err := http.Post(ts.URL+prefix+"/v1/chat/completions?answer=short", "application/json",
		strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hello"}]}`))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	id, post = resp.Header.Get(wire.HeaderStream), resp.Header.Get(wire.HeaderStreamURL)
	require.NotEmpty(t, id)
	require.NotEmpty(t, post)
	req, err := http.NewRequest(http.MethodGet, ts.URL+prefix+"/v1/streams/"+id, nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, id, resp.Header.Get(wire.HeaderStream))
	resume = resp.Header.Get(wire.HeaderStreamURL)
	require.NotEmpty(t, resume)
	return id, post, resume
}

// A stream that drops again and again resumes each time where the relay
// says it lives, and a Stop after the last resume goes there too. The
// relay writes its header relative to each request (the POST's
// "../streams/ID", a resume's "ID"): the element resolves each against its
// own request, not the endpoint (a second resume went to /v1/chat/ID and
// was refused with 404). Headers are the real relay's, at the root and
// mounted under a prefix; every number of drops from 1 to 3.
func TestEveryResumeFollowsTheStreamURLOfTheRequestThatCarriedIt(t *testing.T) {
	data, ends, text := relayAnswer(t)
	require.Greater(t, len(ends), 4)
	for _, prefix := range []string{"", "/ai", "/a/b"} {
		id, postRef, resumeRef := relayRefs(t, prefix)
		want := origin + prefix + "/v1/streams/" + id
		endpoint := origin + prefix + "/v1/chat/completions?answer=short"
		ask := command(t, `{"t":"ask","id":1,"n":1,"url":"`+endpoint+`","origin":"`+origin+`","prompt":"hello"}`)
		for drops := 1; drops <= 3; drops++ {
			for _, stop := range []bool{false, true} {
				env, p := newFakeEnv(t), newPage(t)
				e := NewElement(1, env, env.clock(), nil, "worker")
				e.Do(ask, time.Time{}, nil)
				gen := env.conn().Gen
				require.True(t, e.Response(gen, Response{OK: true, StreamID: id, StreamURL: postRef}))
				at := 0
				for d := range drops {
					env.arrive(gen, data[at:ends[d+1]])
					at = ends[d+1]
					require.True(t, e.Ended(gen, End{Kind: EndReadError, Err: "reset"}))
					timers := env.retryTimers()
					require.Len(t, timers, d+1, "a resume is due after drop %d", d+1)
					e.Timer(timers[d], false)
					c := env.conn()
					require.Equal(t, want, c.URL, "prefix %q: resume %d of %d", prefix, d+1, drops)
					require.Equal(t, "GET", c.Method)
					gen = c.Gen
					require.True(t, e.Response(gen, Response{OK: true, StreamID: id, StreamURL: resumeRef}))
				}
				if stop {
					e.Stop()
					p.take(e)
					require.Equal(t, []string{want}, env.cancels, "prefix %q: the Stop after %d resumes", prefix, drops)
					continue
				}
				env.arrive(gen, data[at:])
				require.True(t, e.Ended(gen, End{Kind: EndDone}))
				p.frame(e)
				require.Equal(t, "complete", p.state)
				require.Equal(t, text, p.text, "nothing lost over %d resumes", drops)
			}
		}
	}
}
