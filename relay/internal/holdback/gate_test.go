package holdback

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wire"
)

// host hears when a log ends.
type host struct{ ended chan wire.State }

func (h host) Token(bool, time.Duration) {}
func (h host) Touch(*streamlog.Log)      {}
func (h host) Ended(_ *streamlog.Log, s wire.State) {
	h.ended <- s
}
func (h host) Watched(string) bool         { return false }
func (h host) DropFollowed(*streamlog.Log) {}
func quiet() *slog.Logger                  { return slog.New(slog.DiscardHandler) }
func delta(s string) string {
	b, _ := json.Marshal(s)
	return `{"choices":[{"delta":{"content":` + string(b) + `}}]}`
}
func anthropicDelta(s string) (string, string) {
	b, _ := json.Marshal(s)
	return "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(b) + `}}`
}

// newLog is a stream log of dialect behind gates g; the returned channel
// hears its end.
func newLog(t *testing.T, g *Gates, dialect string) (*streamlog.Log, chan wire.State, chan struct{}) {
	t.Helper()
	h := host{ended: make(chan wire.State, 1)}
	l := streamlog.New(&streamlog.Config{MaxEventSize: 1 << 16, MaxEvents: 1 << 10, Grace: time.Minute, Logger: quiet()}, h, "s1", dialect)
	cancelled := make(chan struct{})
	l.SetCancel(sync.OnceFunc(func() { close(cancelled) }))
	g.Hold(l, "req-1")
	return l, h.ended, cancelled
}

// texts is what a client of l reads: the text of each OpenAI event, and
// the status it ended with.
func logged(t *testing.T, l *streamlog.Log) (texts []string, status string) {
	t.Helper()
	b, _, _ := l.Read(0, 0, nil)
	dec, err := sse.NewDecoder(strings.NewReader(string(b.Data)))
	require.NoError(t, err)
	for {
		ev, err := dec.Next()
		if err != nil {
			return texts, status
		}
		if ev.Type == stream.StatusEventType {
			var st struct{ Status string }
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &st))
			status = st.Status
			continue
		}
		var d struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		if json.Unmarshal([]byte(ev.Data), &d) == nil && len(d.Choices) > 0 {
			texts = append(texts, d.Choices[0].Delta.Content)
		} else {
			texts = append(texts, ev.Data)
		}
	}
}

// asked is a checker that records each request and answers with verdict.
type asked struct {
	mu       sync.Mutex
	requests []Request
	verdict  func(Request) (bool, error)
}

func (a *asked) Check(ctx context.Context, r Request) (bool, error) {
	a.mu.Lock()
	a.requests = append(a.requests, r)
	a.mu.Unlock()
	return a.verdict(r)
}

func gatesWith(c Checker, onError string, observe func(string, time.Duration)) *Gates {
	g, _ := New(Settings{Sim: "block=x", OnError: onError}, observe, quiet())
	g.checker = c
	return g
}

func TestAClearedAnswerGoesOutWholeAndEachSentenceIsCheckedOnceInOrder(t *testing.T) {
	tokens := []string{"# Tea\n\n", "Green tea is", "n't bitter. Brew", " it at 80 °C.", "\n\n- Warm the pot", "\n- Add leaves"}
	c := &asked{verdict: func(Request) (bool, error) { return true, nil }}
	var verdicts []string
	g := gatesWith(c, "", func(v string, _ time.Duration) { verdicts = append(verdicts, v) })
	l, ended, cancelled := newLog(t, g, "openai")
	for _, tok := range tokens {
		require.True(t, l.Emit("", delta(tok), true))
	}
	require.True(t, l.Emit("", "[DONE]", false))
	l.End(streamlog.StateComplete, "")
	require.Equal(t, streamlog.StateComplete, <-ended)

	texts, status := logged(t, l)
	require.Equal(t, append(append([]string{}, tokens...), "[DONE]"), texts, "every event, as it came")
	require.Empty(t, status)
	require.False(t, l.Info().UpstreamCancelled)
	select {
	case <-cancelled:
		t.Fatal("a cleared answer cancels nothing")
	default:
	}

	var whole strings.Builder
	for _, r := range c.requests {
		require.Equal(t, whole.String(), r.Context, "the context is everything cleared before")
		require.NotEmpty(t, strings.TrimSpace(r.Sentence))
		require.Equal(t, "s1", r.StreamID)
		require.Equal(t, "req-1", r.RequestID)
		whole.WriteString(r.Sentence)
	}
	require.Equal(t, strings.Join(tokens, ""), strings.TrimRight(whole.String(), "\n"), "the sentences are the answer, each once")
	require.GreaterOrEqual(t, len(c.requests), 4, "heading, two sentences, the list")
	require.Len(t, verdicts, len(c.requests))
	for _, v := range verdicts {
		require.Equal(t, string(VerdictAllow), v)
	}
}

func TestABlockedSentenceWithholdsItAndEverythingAfterAndCancelsTheGeneration(t *testing.T) {
	g, err := New(Settings{Sim: "block= Secret "}, nil, quiet())
	require.NoError(t, err)
	l, ended, cancelled := newLog(t, g, "openai")
	for _, tok := range []string{"Fine so far. The sec", "ret is 42", ". More here. And", " more"} {
		l.Emit("", delta(tok), true)
	}
	// The generation goes on: the blocked sentence stops it.
	require.Equal(t, streamlog.StateWithheld, <-ended)
	<-cancelled
	require.True(t, l.Info().UpstreamCancelled)
	texts, status := logged(t, l)
	require.Equal(t, []string{"Fine so far."}, texts, "the cleared sentence's end is cut out of the token that runs on")
	require.Equal(t, "withheld", status)
	require.Equal(t, stream.WithheldMessage, l.Info().Message)
	require.False(t, l.Emit("", delta("late"), true))
}

func TestAGateReadsAnAnthropicAnswer(t *testing.T) {
	g, _ := New(Settings{Sim: "block=forbidden"}, nil, quiet())
	l, ended, _ := newLog(t, g, "anthropic")
	for _, tok := range []string{"All fine. ", "Then forbidden", " words."} {
		ev, data := anthropicDelta(tok)
		l.Emit(ev, data, true)
	}
	l.End(streamlog.StateComplete, "")
	require.Equal(t, streamlog.StateWithheld, <-ended)
	require.Equal(t, 1, l.Count()-1, "the first event, then the status")
}

func TestACheckerThatFailsWithholdsTheAnswerUnlessTheOperatorSaidAllow(t *testing.T) {
	for _, tc := range []struct {
		onError string
		want    wire.State
	}{{"", streamlog.StateWithheld}, {OnErrorBlock, streamlog.StateWithheld}, {OnErrorAllow, streamlog.StateComplete}} {
		t.Run("on error "+tc.onError, func(t *testing.T) {
			var verdicts []string
			g := gatesWith(&asked{verdict: func(Request) (bool, error) { return false, errors.New("checker down") }}, tc.onError,
				func(v string, _ time.Duration) { verdicts = append(verdicts, v) })
			l, ended, _ := newLog(t, g, "openai")
			l.Emit("", delta("One. Two."), true)
			l.End(streamlog.StateComplete, "")
			require.Equal(t, tc.want, <-ended)
			require.Equal(t, string(VerdictError), verdicts[0])
		})
	}
}

func TestACheckThatOutlastsItsTimeoutIsAnError(t *testing.T) {
	g, err := New(Settings{Sim: "block=x", Timeout: 10 * time.Millisecond}, nil, quiet())
	require.NoError(t, err)
	g.checker = checkerFunc(func(ctx context.Context, _ Request) (bool, error) {
		<-ctx.Done()
		return false, ctx.Err()
	})
	l, ended, _ := newLog(t, g, "openai")
	l.Emit("", delta("Slow."), true)
	l.End(streamlog.StateComplete, "")
	require.Equal(t, streamlog.StateWithheld, <-ended)
}

type checkerFunc func(context.Context, Request) (bool, error)

func (f checkerFunc) Check(ctx context.Context, r Request) (bool, error) { return f(ctx, r) }

func TestAStopWhileASentenceIsCheckedEndsTheGateWithoutAVerdict(t *testing.T) {
	asking := make(chan struct{})
	var verdicts []string
	g := gatesWith(checkerFunc(func(ctx context.Context, _ Request) (bool, error) {
		close(asking)
		<-ctx.Done()
		return true, nil
	}), "", func(v string, _ time.Duration) { verdicts = append(verdicts, v) })
	l, ended, _ := newLog(t, g, "openai")
	l.Emit("", delta("Hello. "), true)
	l.End(streamlog.StateComplete, "")
	<-asking
	require.True(t, l.Stop(streamlog.StateStopped, "relay: stopped"))
	require.Equal(t, streamlog.StateStopped, <-ended)
	texts, status := logged(t, l)
	require.Empty(t, texts)
	require.Equal(t, "stopped", status)
	require.Empty(t, verdicts, "the check was cut by the stop, not decided")
}

func TestAGateThatCannotReadTheDialectFailsClosed(t *testing.T) {
	g, _ := New(Settings{Sim: "block=x"}, nil, quiet())
	l, ended, _ := newLog(t, g, "no-such-dialect")
	require.Equal(t, streamlog.StateWithheld, <-ended)
	require.False(t, l.Emit("", delta("Hi."), true))
}

func TestAStreamWithoutADialectIsReadAsOpenAI(t *testing.T) {
	g, _ := New(Settings{Sim: "block=x"}, nil, quiet())
	l, ended, _ := newLog(t, g, "")
	l.Emit("", delta("Fine."), true)
	l.End(streamlog.StateComplete, "")
	require.Equal(t, streamlog.StateComplete, <-ended)
}

func TestNilGatesHoldNothingAndAdmitEveryRequest(t *testing.T) {
	var g *Gates
	l, ended, _ := newLog(t, g, "openai")
	l.Emit("", delta("x"), true)
	require.Equal(t, 1, l.Count(), "logged at once")
	l.End(streamlog.StateComplete, "")
	require.Equal(t, streamlog.StateComplete, <-ended)
	require.NoError(t, g.Admit(false))
}

func TestGatesRefuseAnAnswerInOnePiece(t *testing.T) {
	g, _ := New(Settings{Sim: "block=x"}, nil, nil)
	require.NoError(t, g.Admit(true))
	err := g.Admit(false)
	require.Error(t, err)
	require.Contains(t, err.Error(), `"stream": true`)
}

func TestNewRefusesSettingsThatCannotWorkAndNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     Settings
		field string
	}{
		{"no checker", Settings{}, "URL"},
		{"both checkers", Settings{URL: "http://c/check", Sim: "block=x"}, "Sim"},
		{"a simulated checker without a word", Settings{Sim: "block= "}, "Sim"},
		{"a simulated checker of another kind", Settings{Sim: "allow=x"}, "Sim"},
		{"a relative URL", Settings{URL: "/check"}, "URL"},
		{"a URL of another scheme", Settings{URL: "ftp://c/check"}, "URL"},
		{"a negative timeout", Settings{Sim: "block=x", Timeout: -time.Second}, "Timeout"},
		{"an unknown error policy", Settings{Sim: "block=x", OnError: "ignore"}, "OnError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.s, nil, nil)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.field, fe.Field)
			require.True(t, strings.HasPrefix(err.Error(), "holdback: "+tc.field+" "), err.Error())
		})
	}
	g, err := New(Settings{URL: "https://checker.example/v1"}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, DefaultTimeout, g.timeout)
	require.False(t, g.allowOnError)
}

func TestTheHTTPCheckerPostsTheSentenceAndReadsItsVerdict(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		answer string
		allow  bool
		err    string
	}{
		{"allowed", 200, `{"allow":true}`, true, ""},
		{"blocked", 200, `{"allow": false, "why": "secret"}`, false, ""},
		{"a verdict without allow", 200, `{"ok":true}`, false, `answered "{\"ok\":true}"`},
		{"not JSON", 200, `yes`, false, `not {"allow": true|false}`},
		{"a failed checker", 503, `{"allow":true}`, false, "503 Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Request
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, http.MethodPost, r.Method)
				require.Equal(t, "application/json", r.Header.Get("Content-Type"))
				b, _ := io.ReadAll(r.Body)
				json.Unmarshal(b, &got)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.answer)
			}))
			defer srv.Close()
			g, err := New(Settings{URL: srv.URL, Client: srv.Client()}, nil, nil)
			require.NoError(t, err)
			want := Request{Text: "It is 42.", Sentence: "It is **42**.", Context: "Hi. ", StreamID: "s", RequestID: "r"}
			allow, err := g.checker.Check(t.Context(), want)
			require.Equal(t, want, got)
			require.Equal(t, tc.allow, allow)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			if tc.name == "a verdict without allow" {
				require.ErrorIs(t, err, ErrNoAllow, "an answer without allow is a block, not a failure")
			} else {
				require.ErrorIs(t, err, ErrChecker)
			}
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestTheHTTPCheckerSaysAnUnreachableCheckerFailed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	g, err := New(Settings{URL: srv.URL}, nil, nil)
	require.NoError(t, err)
	_, err = g.checker.Check(t.Context(), Request{})
	require.ErrorIs(t, err, ErrChecker)
	_, err = (&httpChecker{url: "http://a b", client: http.DefaultClient}).Check(t.Context(), Request{})
	require.ErrorIs(t, err, ErrChecker)
}
