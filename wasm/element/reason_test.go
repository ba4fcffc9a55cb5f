package element

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// readerSafe fails unless text is something a reader may see or hear: no
// markup, no URL or protocol word, no Go error prefix, no error chain.
func readerSafe(t *testing.T, text string) {
	t.Helper()
	lower := strings.ToLower(text)
	require.NotContains(t, text, "<", "%q", text)
	require.NotContains(t, lower, "http", "%q", text)
	require.NotContains(t, text, "://", "%q", text)
	for _, prefix := range []string{"stream:", "trickle:", "sse:", "relay:"} {
		require.NotContains(t, lower, prefix, "%q", text)
	}
}

func TestEveryReasonIsOneShortPlainSentence(t *testing.T) {
	seen := map[string]Reason{}
	for r := ReasonNone + 1; r < reasonCount; r++ {
		t.Run(r.String(), func(t *testing.T) {
			s := English.Reason(r, 401)
			require.NotEmpty(t, s)
			readerSafe(t, s)
			require.True(t, strings.HasSuffix(s, "."), "%q ends as a sentence", s)
			require.NotContains(t, strings.TrimSuffix(s, "."), ". ", "%q is one sentence", s)
			require.NotContains(t, s, "{", "every placeholder is filled: %q", s)
			require.LessOrEqual(t, len([]rune(s)), 80, "%q is short", s)
			require.Equal(t, s[:1], strings.ToUpper(s[:1]), "%q starts as a sentence", s)
			prev, dup := seen[s]
			require.False(t, dup, "%v and %v say the same", prev, r)
			seen[s] = r
		})
	}
	require.Empty(t, English.Reason(ReasonNone, 0), "a complete answer needs no reason")
	require.Equal(t, English.Reason(ReasonUnknown, 0), English.Reason(reasonCount+3, 0), "a reason out of range is said as unknown")
	require.Equal(t, "The server refused the request (401).", English.Reason(ReasonRefused, 401))
}

// end is one way an answer can end: the response (its status and body),
// how its byte stream ended, and what the reader must be told.
type end struct {
	name string
	// status is the response's HTTP status (0: 200); body its bytes.
	status int
	body   string
	// cut ends the stream: nil for a clean end, else the transport's error.
	cut error

	reason Reason
	code   int
	st     stream.Status
	retry  bool
}

const htmlBody = "<html><head><title>401 Unauthorized</title></head><body><h1>401 Unauthorized</h1><p>See https://auth.internal.example:8443/login</p></body></html>"

func text(s string) string {
	return fmt.Sprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", s)
}

func ends() []end {
	net := ConnError("http://10.0.0.7:8080/v1/chat/completions", "Failed to fetch")
	return []end{
		{name: "401 with an HTML body", status: 401, body: htmlBody, reason: ReasonRefused, code: 401, st: stream.Failed},
		{name: "403 with a JSON error", status: 403, body: `{"error":{"message":"key sk-… has no access to http://internal/"}}`, reason: ReasonRefused, code: 403, st: stream.Failed},
		{name: "404", status: 404, body: "404 page not found\n", reason: ReasonNotFound, code: 404, st: stream.Failed},
		{name: "429", status: 429, body: `{"error":"rate limited"}`, reason: ReasonRateLimited, code: 429, st: stream.Failed, retry: true},
		{name: "500 with an HTML body", status: 500, body: htmlBody, reason: ReasonServerError, code: 500, st: stream.Failed, retry: true},
		{name: "503 with no body", status: 503, reason: ReasonServerError, code: 503, st: stream.Failed, retry: true},
		{name: "400", status: 400, body: "bad model\n", reason: ReasonRejected, code: 400, st: stream.Failed},
		{name: "a network error before any byte", cut: net, reason: ReasonNetwork, st: stream.Failed, retry: true},
		{name: "a WebSocket that never opened", cut: wsErr(false, 1006), reason: ReasonNetwork, st: stream.Failed, retry: true},
		{name: "a connection dropped after the answer began", body: text("Hello, ") + text("wor"), cut: net, reason: ReasonDropped, st: stream.Failed, retry: true},
		{name: "a WebSocket cut after the answer began", body: text("Hello"), cut: wsErr(true, 1011), reason: ReasonDropped, st: stream.Failed, retry: true},
		{name: "a body that ends without the end marker", body: text("Hello, ") + text("world"), reason: ReasonCutOff, st: stream.Incomplete, retry: true},
		{name: "nothing came for the idle timeout", body: text("Hello, "), cut: fmt.Errorf("%w: nothing came from http://10.0.0.7:8080/v1/chat/completions for 1m0s (the element's idle-timeout)", ErrIdle), reason: ReasonIdle, st: stream.Incomplete, retry: true},
		{name: "an empty body", body: "", reason: ReasonEmpty, st: stream.Incomplete, retry: true},
		{name: "an HTML page where the stream should be", body: htmlBody, reason: ReasonUnreadable, st: stream.Failed},
		{name: "JSON of no dialect", body: "{\"hello\":\"there\"}\n", reason: ReasonUnreadable, st: stream.Failed},
		{name: "the provider's error in the stream", body: text("Hi") + `data: {"error":{"message":"overloaded at http://10.0.0.9/","type":"server_error"}}` + "\n\n", reason: ReasonUpstream, st: stream.Failed, retry: true},
		{name: "the relay relayed the model's failure", body: text("Hi") + `data: {"error":{"message":"relay: upstream returned 502","type":"server_error"}}` + "\n\nevent: trickle.status\ndata: {\"status\":\"failed\",\"message\":\"relay: upstream returned 502\"}\n\n", reason: ReasonUpstream, st: stream.Failed, retry: true},
		{name: "the relay itself failed (a fleet's relay generating the answer died)", body: text("Hi") + "event: trickle.status\ndata: {\"status\":\"failed\",\"message\":\"relay: the relay generating this answer stopped (no news from it for over 3s); send the request again\"}\n\n", reason: ReasonRelay, st: stream.Failed, retry: true},
		{name: "the relay no longer has the stream", body: "event: trickle.status\ndata: {\"status\":\"gone\"}\n\n", reason: ReasonExpired, st: stream.Failed, retry: true},
		{name: "the relay withheld the rest of the answer", body: "data: {\"choices\":[{\"delta\":{\"content\":\"Hi.\"}}]}\n\nevent: trickle.status\ndata: {\"status\":\"withheld\",\"message\":\"This answer was withheld.\"}\n\n", reason: ReasonWithheld, st: stream.Failed, retry: false},
		{name: "an event too large, then no end", body: text("Hi") + text(strings.Repeat("x", stream.DefaultMaxEventSize+1)), reason: ReasonTooLarge, st: stream.Incomplete},
		{name: "a fault of the widget's own", body: text("Hi"), cut: errors.New("trickle: internal error: index out of range"), reason: ReasonUnknown, st: stream.Failed, retry: true},
	}
}

func wsErr(opened bool, code int) error {
	_, err := WSClose("ws://10.0.0.7:8080/v1/ws", opened, code, "internal")
	return err
}

// finish runs one ending through a Session, as the widget does, and
// returns the final update the page gets and what the status region said.
func finish(t *testing.T, e end, cfg Config) (protocol.Update, string) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	cfg.Now = clock.Now
	s := newSession(t, cfg)
	var err error
	if e.status != 0 {
		err = HTTPError(e.status, []byte(e.body)) // the widget reads a failed response's body as its explanation
	} else {
		require.NoError(t, s.Write([]byte(e.body)))
		err = e.cut
	}
	s.End(err)
	var u protocol.Update
	sc := &screen{}
	p := s.Frame()
	sc.apply(t, p)
	u.Patch, u.HasPatch = p, true
	Finish(&u, s.Outcome(), s.Metrics(), true, string(AppendMessage(nil, s.Answer())))
	for {
		due, ok := s.NextAnnouncement()
		if !ok {
			break
		}
		clock.now = due
		sc.apply(t, s.Frame())
	}
	return u, sc.status
}

func TestEveryWayAnAnswerEndsIsExplainedInOneSentenceAndItsChainGoesToTheDetail(t *testing.T) {
	for _, e := range ends() {
		t.Run(e.name, func(t *testing.T) {
			u, spoken := finish(t, e, Config{})
			o := u.End
			require.Equal(t, e.st.String(), o.Status)
			want := English.Reason(e.reason, e.code)
			require.Equal(t, want, o.Notice, "the notice is the reason's sentence")
			require.Equal(t, e.retry, o.Retry, "retry is offered where it can help")
			readerSafe(t, o.Notice)
			readerSafe(t, u.Patch.Shown)
			readerSafe(t, spoken)
			require.NotContains(t, u.Patch.Shown, want, "the status line does not repeat the notice")
			require.Equal(t, English.Status(e.st)+" "+want, spoken, "the listener hears the status, then why")
			require.NotEmpty(t, o.Detail, "the developer gets the chain")

			var errEv *protocol.DOMEvent
			for i := range u.Events {
				if u.Events[i].Name == "trickle-error" {
					errEv = &u.Events[i]
				}
			}
			if e.st != stream.Failed {
				require.Nil(t, errEv, "an answer that ended early is no error event")
				return
			}
			require.NotNil(t, errEv)
			var d struct {
				Status, Message, Reason, Detail string
				HTTPStatus                      int
			}
			require.NoError(t, json.Unmarshal([]byte(errEv.Detail), &d))
			require.Equal(t, want, d.Message)
			require.Equal(t, e.reason.String(), d.Reason)
			require.Equal(t, e.code, d.HTTPStatus)
			require.Equal(t, o.Detail, d.Detail)
			if e.status != 0 {
				require.Contains(t, d.Detail, fmt.Sprintf("HTTP %d", e.status), "the chain names the status")
			}
			if e.cut != nil {
				require.Contains(t, d.Detail, e.cut.Error(), "the chain keeps the transport's error")
			}
		})
	}
}

func TestEveryReasonIsReachedByAnEnding(t *testing.T) {
	reached := map[Reason]bool{}
	for _, e := range ends() {
		reached[e.reason] = true
	}
	for r := ReasonNone + 1; r < reasonCount; r++ {
		require.True(t, reached[r], "no ending in the table gives %v", r)
	}
}

func TestAnAnswerThatCompletesOrIsStoppedHasNoReason(t *testing.T) {
	data, _, _ := events(t, sim.Params{Answer: "short"})
	s := newSession(t, Config{})
	require.NoError(t, s.Write(data))
	s.End(nil)
	r, code := Explain(s.Status(), s.Err(), s.Answer(), s.Metrics().Bytes)
	require.Equal(t, ReasonNone, r)
	require.Zero(t, code)
	o := s.Outcome()
	require.Empty(t, o.Notice())
	require.Empty(t, o.Detail())
	require.Equal(t, "Answer complete.", o.Spoken())

	s = newSession(t, Config{})
	require.NoError(t, s.Write(data[:len(data)/2]))
	s.End(ErrStoppedByUser)
	o = s.Outcome()
	require.Equal(t, ReasonNone, o.Reason)
	require.Equal(t, "Stopped.", o.Notice())
	require.False(t, o.Retry())
	require.Equal(t, "Answer stopped.", o.Spoken())
	require.Empty(t, o.Detail(), "a stop is no failure to explain")
}

func TestHTTPErrorIsAStatusErrorThatKeepsTheBodysStart(t *testing.T) {
	err := HTTPError(401, []byte(htmlBody))
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 401, se.Status)
	require.Equal(t, "trickle: the server answered HTTP 401: "+htmlBody, err.Error(), "the developer's detail keeps the body")
	require.ErrorIs(t, ConnError("u", "x"), ErrConnection)
	require.ErrorIs(t, wsErr(false, 1006), ErrConnection)
	require.ErrorIs(t, wsErr(true, 1011), ErrConnection)
}
