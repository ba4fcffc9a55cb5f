package element

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A stopped answer learns what it cost from the relay's answer to its
// DELETE: trickle-usage carries the usage and the message with it, and
// only the answer that was stopped takes it, once.
func TestAStoppedAnswerTakesWhatTheRelaySaysItCost(t *testing.T) {
	data, ends, _ := relayAnswer(t)
	info := `{"id":"s","state":"stopped","events":3,"upstream_cancelled":true,"usage":{"completion_tokens":42,"estimated":true}}`

	t.Run("the cost arrives after the end", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, data[:ends[2]])
		e.Stop()
		p.take(e)
		require.Equal(t, "stopped", p.state)
		require.Contains(t, p.end.Message, `"usage":null`, "the end knows no cost yet")
		e.Cost([]byte(info))
		p.take(e)
		require.Equal(t, "trickle-usage", p.events[len(p.events)-1])
		var got struct {
			Usage   map[string]any `json:"usage"`
			Message struct {
				Status     string         `json:"status"`
				Incomplete bool           `json:"incomplete"`
				Usage      map[string]any `json:"usage"`
			} `json:"message"`
		}
		detail := p.details[len(p.details)-1][len("trickle-usage "):]
		require.NoError(t, json.Unmarshal([]byte(detail), &got), detail)
		require.Equal(t, 42.0, got.Usage["output_tokens"])
		require.Equal(t, true, got.Usage["estimated"])
		require.Equal(t, got.Usage, got.Message.Usage)
		require.Equal(t, "stopped", got.Message.Status)
		require.True(t, got.Message.Incomplete)

		n := len(p.events)
		e.Cost([]byte(info))
		p.take(e)
		require.Len(t, p.events, n, "the cost is taken once")
	})

	t.Run("an answer the page moved on from takes nothing", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, data[:ends[2]])
		e.Stop()
		e.Do(askCmd(t, 2, ""), time.Time{}, nil)
		p.take(e)
		n := len(p.events)
		e.Cost([]byte(info))
		p.take(e)
		require.Len(t, p.events, n)
	})

	for name, body := range map[string]string{
		"an empty answer (the DELETE failed)": "",
		"not JSON":                            "<html>404</html>",
		"no usage":                            `{"id":"s","state":"stopped"}`,
		"a null usage":                        `{"usage":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			env, p, e, gen := streaming(t)
			env.arrive(gen, data[:ends[2]])
			e.Stop()
			p.take(e)
			n := len(p.events)
			e.Cost([]byte(body))
			p.take(e)
			require.Len(t, p.events, n)
			require.Contains(t, p.end.Message, `"usage":null`)
		})
	}
}

// A Stop's DELETE carries the request's headers (its authorization), and
// one the relay refused or never got is not a clean stop: trickle-error
// (status stopped, reason stopNotConfirmed) says where it went and what
// came back; a confirmed one brings the cost.
func TestAStopTheRelayDidNotConfirmIsSaid(t *testing.T) {
	data, ends, _ := relayAnswer(t)
	stopped := func(t *testing.T) (*fakeEnv, *page, *Element) {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "worker")
		e.Do(askCmd(t, 1, `,"headers":[["Authorization","Bearer tok"],["X-Trace","7"]]`), time.Time{}, nil)
		gen := env.conn().Gen
		require.True(t, e.Response(gen, Response{OK: true, StreamID: "s"}))
		env.arrive(gen, data[:ends[2]])
		e.Stop()
		p.take(e)
		require.Equal(t, "stopped", p.state)
		return env, p, e
	}

	t.Run("the DELETE carries the request's headers, not its body's", func(t *testing.T) {
		env, _, _ := stopped(t)
		require.Equal(t, []string{origin + "/v1/streams/s"}, env.cancels)
		require.Equal(t, [][2]string{{"Authorization", "Bearer tok"}, {"X-Trace", "7"}, {"Accept", "application/json"}}, env.cancelHeaders[0])
	})

	for name, r := range map[string]CancelResult{
		"refused (401)":  {URL: origin + "/v1/streams/s", Status: 401, Body: []byte(`{"error":{"message":"relay: missing bearer token"}}`)},
		"a server error": {URL: origin + "/v1/streams/s", Status: 502},
		"not reached":    {URL: origin + "/v1/streams/s", Err: "Failed to fetch"},
	} {
		t.Run(name, func(t *testing.T) {
			_, p, e := stopped(t)
			e.Cancelled(r)
			p.take(e)
			require.Equal(t, "trickle-error", p.events[len(p.events)-1])
			detail := p.details[len(p.details)-1][len("trickle-error "):]
			var got struct{ Status, Reason, Detail, Message string }
			require.NoError(t, json.Unmarshal([]byte(detail), &got), detail)
			require.Equal(t, "stopped", got.Status)
			require.Equal(t, "stopNotConfirmed", got.Reason)
			require.NotEmpty(t, got.Message)
			require.Contains(t, got.Detail, "DELETE "+origin+"/v1/streams/s")
			require.Contains(t, got.Detail, "connection was closed")
			if r.Status != 0 {
				require.Contains(t, got.Detail, strconv.Itoa(r.Status))
			} else {
				require.Contains(t, got.Detail, r.Err)
			}
			require.Equal(t, "stopped", p.state)
		})
	}

	t.Run("confirmed: the cost", func(t *testing.T) {
		_, p, e := stopped(t)
		e.Cancelled(CancelResult{URL: origin + "/v1/streams/s", Status: 200, Body: []byte(`{"usage":{"completion_tokens":3}}`)})
		p.take(e)
		require.Equal(t, "trickle-usage", p.events[len(p.events)-1])
	})
}

// The widget says it resumes (X-Trickle-Resume: on) to its own origin and
// to origins that answered as a relay, never to a plain backend on another
// origin, whose CORS preflight would refuse a custom header.
func TestTheWidgetDeclaresResumeWhereItIsSafe(t *testing.T) {
	req := func(url, pageOrigin string) Request {
		c := command(t, `{"t":"ask","id":1,"n":1,"url":"`+url+`","origin":"`+pageOrigin+`","prompt":"hi"}`)
		r, err := c.Request()
		require.NoError(t, err)
		return r
	}
	declares := func(r Request) bool {
		for _, h := range r.Headers {
			if h == [2]string{ResumeHeader, "on"} {
				return true
			}
		}
		return false
	}
	require.True(t, declares(req("https://same.test/v1/chat/completions", "https://same.test")))
	require.False(t, declares(req("https://plain-backend.test/api/chat", "https://page.test")))
	require.False(t, declares(req("https://relay-a.test/v1/chat/completions", "https://page.test")))

	env := newFakeEnv(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(command(t, `{"t":"ask","id":1,"n":1,"url":"https://relay-a.test/v1/chat/completions","origin":"https://page.test","prompt":"hi"}`), time.Time{}, nil)
	require.True(t, e.Response(env.conn().Gen, Response{OK: true, StreamID: "s", StreamURL: "../streams/s"}))
	require.True(t, declares(req("https://relay-a.test/v1/chat/completions", "https://page.test")), "once it answered as a relay")
	require.False(t, declares(req("https://plain-backend.test/api/chat", "https://page.test")))
}
