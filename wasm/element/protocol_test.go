package element

import (
	"encoding/json"
	"errors"
	"github.com/trickle-dev/trickle/a11y"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

func TestHTTPErrorCutsTheBodyAtACharacterAndStaysValidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
	}{
		{"400 bytes of two-byte characters", strings.Repeat("é", 200)},
		{"400 bytes of three-byte characters, cut mid-character", strings.Repeat("語", 133) + "x"},
		{"four-byte characters", strings.Repeat("🙂", 100)},
		{"invalid UTF-8", "bad \xff\xfe bytes " + strings.Repeat("\xe2\x82", 200)},
		{"long ASCII", strings.Repeat("a", 1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := HTTPError(502, []byte(tc.body))
			msg := err.Error()
			require.True(t, utf8.ValidString(msg), "%q", msg)
			require.True(t, strings.HasPrefix(msg, "trickle: the server answered HTTP 502: "), msg)
			shown := strings.TrimPrefix(msg, "trickle: the server answered HTTP 502: ")
			require.LessOrEqual(t, utf8.RuneCountInString(shown), maxErrorRunes+1, "at most 300 characters and the ellipsis")
			// What is shown is the body's start, character for character.
			want := strings.ToValidUTF8(tc.body, "\uFFFD")
			require.True(t, strings.HasPrefix(want, strings.TrimSuffix(shown, "…")), "%q is not the start of the body", shown)

			// And it makes JSON that parses (the trickle-error detail).
			var detail struct{ Status, Message, Reason, Detail string }
			require.NoError(t, json.Unmarshal([]byte(ErrorEvent("The server failed to answer (502).", "serverError", msg, 502).Detail), &detail))
			require.Equal(t, msg, detail.Detail)
		})
	}
	require.EqualError(t, HTTPError(404, []byte("  \n")), "trickle: the server answered HTTP 404")
}

func TestWSCloseTellsARefusedFromACutFromANormalClose(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opened bool
		code   int
		clean  bool
		err    string
	}{
		{"refused at the handshake", false, 1006, false, "could not open the WebSocket ws://r/v1/ws (closed with code 1006)"},
		{"cut after opening", true, 1006, false, "the WebSocket closed with code 1006 gone"},
		{"going away", true, 1001, false, "closed with code 1001"},
		{"normal close", true, 1000, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clean, err := WSClose("ws://r/v1/ws", tc.opened, tc.code, "gone")
			require.Equal(t, tc.clean, clean)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestTheResumerFollowsTheRelaysStreamWithBackoff(t *testing.T) {
	for _, tc := range []struct {
		name     string
		streamID string
		end      ConnEnd
		ok       bool
	}{
		{"a dropped relay stream resumes", "s1", ConnEnd{Opened: true, Clean: true}, true},
		{"an error resumes", "s1", ConnEnd{Opened: true}, true},
		{"no stream id: nothing to resume", "", ConnEnd{Opened: true, Clean: true}, false},
		{"a WebSocket refused at the handshake is not resumed", "s1", ConnEnd{}, false},
		{"a resume that ended cleanly with nothing new: the relay has no more", "s1", ConnEnd{Opened: true, Clean: true, Resumed: true}, false},
		{"a resume that brought events resumes again", "s1", ConnEnd{Opened: true, Clean: true, Resumed: true, Events: true}, true},
		{"a resume that errored resumes again", "s1", ConnEnd{Opened: true, Resumed: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Resumer
			_, ok := r.Next(tc.streamID, tc.end, 0)
			require.Equal(t, tc.ok, ok)
		})
	}

	var r Resumer
	var delays []time.Duration
	for {
		d, ok := r.Next("s", ConnEnd{Opened: true}, 0)
		if !ok {
			break
		}
		delays = append(delays, d)
	}
	require.Len(t, delays, DefaultBackoff.Attempts, "attempts run out")
	require.Equal(t, DefaultBackoff.Base, delays[0])
	d, ok := r.Next("s", ConnEnd{Opened: true, Events: true}, 0)
	require.True(t, ok, "a connection that brought events starts the count again")
	require.Equal(t, DefaultBackoff.Base, d)
	r.Reset()
	d, _ = r.Next("s", ConnEnd{Opened: true}, 2*time.Second)
	require.Equal(t, 2*time.Second, d, "the server's retry: comes first")
}

func TestParseCommandReadsWhatTheLoaderSends(t *testing.T) {
	c, err := ParseCommand(`{"t":"ask","id":3,"n":7,"at":1733100000123.5,"url":"https://r.test/v1/chat/completions?answer=short","ws":"","transport":"websocket","dialect":"","announce":"off","model":"m","images":" https://a.test  https://b.test ","origin":"https://page.test","metrics":true,"headers":[["Authorization","Bearer t"],["X-A","1"]],"body":{"messages":[],"temperature":0.5},"extra":[1,2]}`)
	require.NoError(t, err)
	require.Equal(t, protocol.Ask, c.Kind)
	require.Equal(t, 3, c.ID)
	require.Equal(t, 7, c.N)
	require.Equal(t, 1733100000123.5, c.At)
	require.True(t, c.ShowMetrics)
	require.Equal(t, [][2]string{{"Authorization", "Bearer t"}, {"X-A", "1"}}, c.Headers)
	require.Equal(t, `{"messages":[],"temperature":0.5}`, c.Body)
	require.False(t, c.HasPrompt)

	cfg := c.Config()
	require.Equal(t, stream.DialectAuto, cfg.Dialect)
	require.Equal(t, a11y.ModeOff, cfg.Announce)
	for attr, want := range map[string]a11y.Mode{"": a11y.ModeSentences, " Complete ": a11y.ModeComplete, "loud": a11y.ModeSentences} {
		c.Announce = attr
		require.Equal(t, want, c.Config().Announce, "announce=%q", attr)
	}
	require.Equal(t, render.Policy{SameOrigin: "https://page.test", AllowedImageOrigins: []string{"https://a.test", "https://b.test"}}, cfg.Policy)
	require.Equal(t, "trickle-3-", cfg.FootnotePrefix, "the element's own footnote ids")

	r, err := c.Request()
	require.NoError(t, err)
	require.True(t, r.WebSocket)
	require.Equal(t, "wss://r.test/v1/ws?access_token=t&answer=short", r.WSURL, "the bearer token rides the handshake's query")
	require.Equal(t, "wss://r.test/v1/ws?access_token=t", r.WSResume)
	require.JSONEq(t, `{"messages":[],"stream":true,"temperature":0.5}`, r.Body, "a body gets stream:true and nothing else, not the model attribute")

	_, err = ParseCommand(`{"t":"ask","id":"three"}`)
	require.Error(t, err, "a command of another build is an error, not a zero")
	_, err = ParseCommand(`{"t":`)
	require.Error(t, err)
}

func TestAnAsksRequestTakesThePromptOrTheBodyAndNothingElse(t *testing.T) {
	base := Command{Kind: "ask", URL: "https://r.test/v1/chat/completions", Headers: [][2]string{{"content-type", "text/plain"}, {"X-Tenant", "acme"}}}

	c := base
	c.Prompt, c.HasPrompt = "hi", true
	r, err := c.Request()
	require.NoError(t, err)
	require.Equal(t, PromptBody("hi", ""), r.Body)
	require.Equal(t, [][2]string{{"X-Tenant", "acme"}, {"Content-Type", "application/json"}, {"Accept", "text/event-stream"}}, r.Headers,
		"the body is JSON and the answer SSE, whatever the page's headers say")
	require.Equal(t, [][2]string{{"X-Tenant", "acme"}, {"Accept", "text/event-stream"}, {"Last-Event-ID", "s:4"}}, r.ResumeHeaders("s:4"))

	for _, tc := range []struct{ body, typ string }{{"", "number"}, {"", "undefined"}, {"null", ""}, {"[1]", ""}} {
		c := base
		c.Body, c.ArgType = tc.body, tc.typ
		_, err := c.Request()
		require.ErrorIs(t, err, ErrBadRequestBody, "%+v", tc)
	}

	c = Command{Kind: "stream", URL: "https://own.test/x"}
	r, err = c.Request()
	require.NoError(t, err)
	require.True(t, r.Stream)
	require.Empty(t, r.Body, "stream() sends the page's own init")
}

// The page parses every message with JSON.parse: whatever the model sent —
// invalid UTF-8, U+2028, quotes, markup — each update must be JSON, and
// read back to what was meant.
func TestEveryUpdateIsJSONWhateverTheModelSent(t *testing.T) {
	nasty := "a\"b\\c\u2028d</script>\xff\xfe<img onerror=x>"
	u := protocol.Update{ID: 2, Reset: true, HasPatch: true, Text: nasty, State: "failed", StreamID: nasty, SetStreamID: true, Arrived: 1733100000123.25}
	u.Patch = protocol.Patch{Append: "<p>" + nasty + "</p>", TailChanged: true, TailPatch: protocol.TailPatch{Path: []int{2, 0}, Keep: 1, Text: nasty, HTML: "<b>x</b>"},
		Thinking: nasty, Tools: nasty, ToolsChanged: true, Announce: []string{nasty, "two"}, Status: nasty, StatusChanged: true, Final: true, Unwrap: true}
	u.Events = append(u.Events, StartEvent(), FirstTokenEvent(Metrics{TTFT: 12.5, TTFAT: 40}))
	Finish(&u, Outcome{Status: stream.Failed, Err: errors.New(nasty), Reason: ReasonUpstream}, Metrics{TTFT: 1.5, Thread: "worker"}, true, string(AppendMessage(nil, nastyAnswer(t, nasty))))
	u.N, u.Gone = 9, true

	var got struct {
		ID    int  `json:"id"`
		Reset bool `json:"reset"`
		P     struct {
			A      string `json:"a"`
			Path   []int  `json:"path"`
			Keep   int    `json:"keep"`
			Text   string `json:"text"`
			HTML   string `json:"html"`
			Final  bool   `json:"final"`
			Unwrap bool   `json:"unwrap"`
		} `json:"p"`
		Thinking string            `json:"thinking"`
		Tools    *string           `json:"tools"`
		Say      string            `json:"say"`
		Status   *string           `json:"status"`
		Text     string            `json:"text"`
		State    string            `json:"state"`
		SID      *string           `json:"sid"`
		M        map[string]any    `json:"m"`
		End      map[string]any    `json:"end"`
		Ev       []json.RawMessage `json:"ev"`
		N        int               `json:"n"`
		Resolve  string            `json:"resolve"`
		Gone     bool              `json:"gone"`
		Arr      float64           `json:"arr"`
	}
	frame := protocol.AppendFrame(nil, []protocol.Update{u, {ID: 3, State: "streaming"}})
	var msg struct {
		T string            `json:"t"`
		U []json.RawMessage `json:"u"`
	}
	require.NoError(t, json.Unmarshal(frame, &msg), "%s", frame)
	require.Equal(t, "frame", msg.T)
	require.Len(t, msg.U, 2)
	require.NoError(t, json.Unmarshal(msg.U[0], &got))

	clean := string([]rune(nasty)) // each byte that is not UTF-8 becomes U+FFFD, as encoding/json writes it
	require.Equal(t, 2, got.ID)
	require.True(t, got.Reset)
	require.Equal(t, "<p>"+clean+"</p>", got.P.A)
	require.Equal(t, []int{2, 0}, got.P.Path)
	require.Equal(t, 1, got.P.Keep)
	require.Equal(t, clean, got.P.Text)
	require.True(t, got.P.Final && got.P.Unwrap)
	require.Equal(t, clean, got.Thinking)
	require.Equal(t, clean, *got.Tools)
	require.Equal(t, "<p>a&#34;b\\c\u2028d&lt;/script&gt;\uFFFD\uFFFD&lt;img onerror=x&gt;</p><p>two</p>", got.Say, "announcements are escaped HTML")
	require.Equal(t, clean, *got.Status)
	require.Equal(t, clean, got.Text)
	require.Equal(t, "failed", got.State)
	require.Equal(t, clean, *got.SID)
	require.Equal(t, "worker", got.M["thread"])
	require.Equal(t, "failed", got.End["status"])
	require.Equal(t, English.Reasons[ReasonUpstream], got.End["notice"], "the notice is the reason's sentence, never the error")
	require.Equal(t, clean, got.End["detail"], "the error goes to the console")
	require.Equal(t, true, got.End["retry"])
	require.NotEmpty(t, got.End["rows"])
	require.Len(t, got.Ev, 4, "start, first token, error, end")
	require.JSONEq(t, `["trickle-first-token",{"ttft_ms":12.5,"ttfat_ms":40}]`, string(got.Ev[1]),
		"the first answer token's event carries both times")
	var errEv []json.RawMessage
	require.NoError(t, json.Unmarshal(got.Ev[2], &errEv))
	require.JSONEq(t, `"trickle-error"`, string(errEv[0]))
	var detail struct {
		Status, Message, Reason, Detail string
		HTTPStatus                      *int
	}
	require.NoError(t, json.Unmarshal(errEv[1], &detail))
	require.Equal(t, "failed", detail.Status)
	require.Equal(t, English.Reasons[ReasonUpstream], detail.Message)
	require.Equal(t, "upstream", detail.Reason)
	require.Equal(t, clean, detail.Detail)
	require.Nil(t, detail.HTTPStatus, "no HTTP status explains it")
	require.Equal(t, 9, got.N)
	require.Equal(t, "failed", got.Resolve)
	require.True(t, got.Gone)
	require.Equal(t, 1733100000123.25, got.Arr)
}

func TestAnUnchangedTailIsKeptAndAStoppedAnswerOffersNoRetry(t *testing.T) {
	u := protocol.Update{ID: 1, HasPatch: true, Patch: protocol.Patch{Append: "<p>x</p>"}}
	var got struct {
		P struct {
			Keep int   `json:"keep"`
			Path []int `json:"path"`
		} `json:"p"`
	}
	require.NoError(t, json.Unmarshal(u.AppendJSON(nil), &got))
	require.Equal(t, -1, got.P.Keep, "keep -1: the tail did not change")

	var s protocol.Update
	Finish(&s, Outcome{Status: stream.Stopped, Err: stream.ErrStopped}, Metrics{}, false, string(AppendMessage(nil, stream.NewAnswer())))
	require.Equal(t, "Stopped.", s.End.Notice)
	require.False(t, s.End.Retry)
	require.Nil(t, s.End.Rows, "no metrics rows without show-metrics")
	require.Equal(t, "stopped", s.Resolve)

	var c protocol.Update
	Finish(&c, Outcome{Status: stream.Complete}, Metrics{}, false, string(AppendMessage(nil, stream.NewAnswer())))
	require.Empty(t, c.End.Notice)
	require.False(t, c.End.Retry)
	require.True(t, (&protocol.Update{ID: 4}).Empty())
}

func TestResumeMessageIsJSON(t *testing.T) {
	var m map[string]string
	require.NoError(t, json.Unmarshal([]byte(ResumeMessage("s\"1", "s\"1:\xff")), &m))
	require.Equal(t, map[string]string{"type": "resume", "stream": "s\"1", "last_event_id": "s\"1:\uFFFD"}, m)
}

func TestASayMessageCarriesOnlyTheLiveRegions(t *testing.T) {
	u := protocol.Update{ID: 5, HasPatch: true, Patch: protocol.Patch{Announce: []string{"One <b>."}, Status: "Answer complete.", StatusChanged: true}}
	var got struct {
		T string           `json:"t"`
		U []map[string]any `json:"u"`
	}
	require.NoError(t, json.Unmarshal(protocol.AppendSay(nil, &u), &got))
	require.Equal(t, "say", got.T)
	require.Equal(t, []map[string]any{{"id": 5.0, "say": "<p>One &lt;b&gt;.</p>", "status": "Answer complete."}}, got.U)
}

func TestHTTPErrorExplainsAJSONErrorBodyByItsMessage(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"the relay and OpenAI", `{"error":{"message":"origin https://a.example is not allowed: start the relay with --allow-origin https://a.example","type":"forbidden"}}`,
			"trickle: the server answered HTTP 403: origin https://a.example is not allowed: start the relay with --allow-origin https://a.example"},
		{"Anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			"trickle: the server answered HTTP 403: Overloaded"},
		{"Gemini, in an array", `[{"error":{"code":403,"message":"API key not valid.","status":"PERMISSION_DENIED"}}]`,
			"trickle: the server answered HTTP 403: API key not valid."},
		{"Ollama", `{"error":"model \"llama9\" not found, try pulling it first"}`,
			`trickle: the server answered HTTP 403: model "llama9" not found, try pulling it first`},
		{"a bare message", ` {"message": "Forbidden"} `, "trickle: the server answered HTTP 403: Forbidden"},
		{"JSON without a message is shown as it is", `{"detail":"nope"}`, `trickle: the server answered HTTP 403: {"detail":"nope"}`},
		{"an empty message is no message", `{"error":{"message":"  "}}`, `trickle: the server answered HTTP 403: {"error":{"message":"  "}}`},
		{"a message nested deeper is not an error's", `{"data":{"error":{"message":"x"}}}`, `trickle: the server answered HTTP 403: {"data":{"error":{"message":"x"}}}`},
		{"broken JSON is shown as it is", `{"error":{"message":"cut`, `trickle: the server answered HTTP 403: {"error":{"message":"cut`},
		{"text", "Forbidden\n", "trickle: the server answered HTTP 403: Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.EqualError(t, HTTPError(403, []byte(tc.body)), tc.want)
		})
	}
	// A long message is cut at a character like any body.
	long := `{"error":{"message":"` + strings.Repeat("語", 400) + `"}}`
	msg := strings.TrimPrefix(HTTPError(500, []byte(long)).Error(), "trickle: the server answered HTTP 500: ")
	require.Equal(t, strings.Repeat("語", maxErrorRunes)+"…", msg)
}
