package element

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// fakeEnv is an Element's browser: it records what the element asks for
// and hands it the bytes a test says arrived.
type fakeEnv struct {
	t       *testing.T
	now     time.Time
	opened  []Conn
	closed  []string // "gen" or "gen stop"
	sent    []string // "gen: text"
	cancels []string
	// cancelHeaders are the headers of each Cancel.
	cancelHeaders [][][2]string
	timers        []armed
	inbox         map[int][][]byte
	wants         int // Want calls: the host posts a frame only after one
}

type armed struct {
	after time.Duration
	timer Timer
}

func newFakeEnv(t *testing.T) *fakeEnv {
	return &fakeEnv{t: t, now: time.Unix(1_700_000_000, 0), inbox: map[int][][]byte{}}
}

func (f *fakeEnv) Now() time.Time              { return f.now }
func (f *fakeEnv) EpochMS(t time.Time) float64 { return float64(t.UnixMicro()) / 1000 }
func (f *fakeEnv) Open(c Conn)                 { f.opened = append(f.opened, c) }
func (f *fakeEnv) Close(gen int, stop bool) {
	f.closed = append(f.closed, strconv.Itoa(gen)+map[bool]string{true: " stop"}[stop])
}
func (f *fakeEnv) Send(gen int, text string) {
	f.sent = append(f.sent, fmt.Sprintf("%d: %s", gen, text))
}
func (f *fakeEnv) Cancel(url string, h [][2]string) {
	f.cancels = append(f.cancels, url)
	f.cancelHeaders = append(f.cancelHeaders, h)
}
func (f *fakeEnv) After(d time.Duration, t Timer) { f.timers = append(f.timers, armed{d, t}) }
func (f *fakeEnv) Want()                          { f.wants++ }
func (f *fakeEnv) Say([]byte)                     {}

func (f *fakeEnv) Take(gen int) []byte {
	chunks := f.inbox[gen]
	if len(chunks) == 0 {
		return nil
	}
	delete(f.inbox, gen)
	took := f.EpochMS(f.now)
	arrived := make([]float64, len(chunks))
	for i := range arrived {
		arrived[i] = took
	}
	return protocol.AppendInbox(nil, took, chunks, arrived)
}

// arrive puts b in connection gen's inbox, as the page's reader would.
func (f *fakeEnv) arrive(gen int, b []byte) {
	f.inbox[gen] = append(f.inbox[gen], append([]byte(nil), b...))
}

// conn is the last connection opened.
func (f *fakeEnv) conn() Conn {
	f.t.Helper()
	require.NotEmpty(f.t, f.opened, "a connection was opened")
	return f.opened[len(f.opened)-1]
}

// retryTimers are the resume timers armed so far.
func (f *fakeEnv) retryTimers() []Timer {
	var ts []Timer
	for _, a := range f.timers {
		if a.timer.Kind == TimerRetry {
			ts = append(ts, a.timer)
		}
	}
	return ts
}

// page is what the page knows of the element, from its updates.
type page struct {
	t        *testing.T
	text     string
	state    string
	streamID string
	screen   screen
	resolved map[int]string
	events   []string
	details  []string // "name detail" of each event
	end      *protocol.Ending
	resets   int
	gone     bool
}

func newPage(t *testing.T) *page { return &page{t: t, resolved: map[int]string{}} }

// frame runs a frame on e and applies its updates.
func (p *page) frame(e *Element) {
	if e.Active() {
		e.Frame()
	}
	p.take(e)
}

func (p *page) take(e *Element) {
	for _, u := range e.TakeUpdates(nil) {
		if u.Reset {
			p.resets++
			p.text, p.screen, p.end = "", screen{}, nil
		}
		if u.HasPatch {
			p.screen.apply(p.t, u.Patch)
		}
		// The page reads every update through JSON.parse.
		p.text += jsonRoundTrip(p.t, u.Text)
		if u.State != "" {
			p.state = u.State
		}
		if u.SetStreamID {
			p.streamID = u.StreamID
		}
		if u.End != nil {
			end := *u.End
			end.Message = withContent(end.Message, `{`, p.text)
			p.end = &end
		}
		for _, ev := range u.Events {
			p.events = append(p.events, ev.Name)
			detail := ev.Detail
			if ev.Name == "trickle-end" {
				detail = withContent(detail, `"message":{`, p.text)
			}
			p.details = append(p.details, ev.Name+" "+detail)
		}
		if u.Resolve != "" {
			_, twice := p.resolved[u.N]
			require.False(p.t, twice, "call %d settles once", u.N)
			p.resolved[u.N] = u.Resolve
		}
		p.gone = p.gone || u.Gone
	}
}

const origin = "https://app.test"

// jsonRoundTrip is s as the page has it once JSON.parse read it from an
// update (invalid UTF-8 replaced).
func jsonRoundTrip(t *testing.T, s string) string {
	var out string
	require.NoError(t, json.Unmarshal(jsonx.AppendString(nil, s), &out))
	return out
}

// withContent puts text back as the content of the message that follows
// at in j, where Go left it out (AppendEndMessage), as answer.js does.
func withContent(j, at, text string) string {
	head := at + `"role":"assistant",`
	i := strings.Index(j, head)
	if i < 0 || strings.HasPrefix(j[i+len(head):], `"content":`) {
		return j
	}
	i += len(head)
	return j[:i] + `"content":` + string(jsonx.AppendString(nil, text)) + "," + j[i:]
}

// command is a command as the page sends it.
func command(t *testing.T, json string) Command {
	t.Helper()
	c, err := ParseCommand(json)
	require.NoError(t, err)
	return c
}

func askCmd(t *testing.T, n int, extra string) Command {
	return command(t, `{"t":"ask","id":1,"n":`+strconv.Itoa(n)+`,"url":"`+origin+`/v1/chat/completions","origin":"`+origin+`","prompt":"hello"`+extra+`}`)
}

// relayAnswer is a simulated generation as the relay sends it, with
// stream ids "s:<seq>".
func relayAnswer(t *testing.T) (data []byte, ends []int, text string) {
	data, ends, a := events(t, sim.Params{Answer: "short", TokenChars: 5})
	return data, ends, a.Text
}

// streaming is an element asked once (call 1) whose response came, from
// the relay's stream "s": its browser, its page and its connection.
func streaming(t *testing.T) (*fakeEnv, *page, *Element, int) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 1, ""), time.Time{}, nil)
	gen := env.conn().Gen
	require.True(t, e.Response(gen, Response{OK: true, StreamID: "s"}))
	return env, p, e, gen
}

// openAIChunks is text as OpenAI chunks, a word an event, with relay ids
// "s:<seq>", then [DONE].
func openAIChunks(t *testing.T, text string) []byte {
	var data []byte
	for i, tok := range strings.SplitAfter(text, " ") {
		content, err := json.Marshal(tok)
		require.NoError(t, err)
		data = fmt.Appendf(data, "id: s:%d\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", i+1, content)
	}
	return append(data, "data: [DONE]\n\n"...)
}

func TestAnElementStreamsAnAnswerAndSettlesItsCall(t *testing.T) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 7, ""), env.now, nil)
	p.take(e)
	require.Equal(t, 1, p.resets)
	require.Equal(t, "streaming", p.state)
	require.Equal(t, []string{"trickle-start"}, p.events)

	c := env.conn()
	require.Equal(t, Conn{Gen: c.Gen, URL: origin + "/v1/chat/completions", Method: "POST", Headers: c.Headers, Body: c.Body}, c)
	require.JSONEq(t, `{"messages":[{"role":"user","content":"hello"}],"stream":true}`, c.Body)
	require.True(t, e.Response(c.Gen, Response{OK: true, StreamID: "s"}))

	data, _, text := relayAnswer(t)
	half := len(data) / 2
	env.arrive(c.Gen, data[:half])
	p.frame(e)
	require.Equal(t, "s", p.streamID)
	require.Contains(t, p.events, "trickle-first-token")
	require.NotEmpty(t, p.text)
	require.Empty(t, p.resolved, "the call settles with the answer's end")

	env.arrive(c.Gen, data[half:])
	p.frame(e)
	require.Equal(t, text, p.text)
	require.Equal(t, "complete", p.state)
	require.Equal(t, map[int]string{7: "complete"}, p.resolved)
	require.Equal(t, "complete", p.end.Status)
	require.Equal(t, "trickle-end", p.events[len(p.events)-1])
	require.Equal(t, []string{strconv.Itoa(c.Gen)}, env.closed, "the end marker closes the connection")
	require.Equal(t, convert(t, text, RenderOptions(render.Policy{SameOrigin: origin})...), p.screen.settled)

	// The body's end after the end marker is a stale connection's.
	require.False(t, e.Ended(c.Gen, End{Kind: EndDone}))
	require.Empty(t, env.cancels)
}

// The answer is the same wherever the network cuts the bytes and wherever
// frames fall between them.
func TestAnElementsAnswerIsTheSameAtEveryCut(t *testing.T) {
	text := "# Title\n\nA *short* answer — with `code`, é and 🙂:\n\n- one\n- two\n"
	data := openAIChunks(t, text)
	want := convert(t, text, RenderOptions(render.Policy{SameOrigin: origin})...)
	for cut := 0; cut <= len(data); cut++ {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "main")
		e.Do(askCmd(t, 1, ""), time.Time{}, nil)
		gen := env.conn().Gen
		require.True(t, e.Response(gen, Response{OK: true}))
		env.arrive(gen, data[:cut])
		p.frame(e)
		env.arrive(gen, data[cut:])
		p.frame(e)
		if p.state != "complete" || p.text != text || p.screen.settled != want {
			t.Fatalf("cut at %d: %s, %q", cut, p.state, p.text)
		}
	}
}

// A connection that drops mid-event resumes after the last event it
// brought whole, and the answer loses nothing and repeats nothing,
// whichever event the drop follows.
func TestADroppedConnectionResumesAfterItsLastEventAtEveryEvent(t *testing.T) {
	data, ends, text := relayAnswer(t)
	for drop := 1; drop < len(ends); drop++ {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "worker")
		e.Do(askCmd(t, 1, `,"headers":[["Authorization","Bearer k"]]`), time.Time{}, nil)
		first := env.conn()
		require.True(t, e.Response(first.Gen, Response{OK: true, StreamID: "s"}))
		cut := ends[drop-1]
		env.arrive(first.Gen, data[:cut+(ends[drop]-cut)/2])
		p.frame(e)
		require.True(t, e.Ended(first.Gen, End{Kind: EndReadError, Err: "network error"}))
		p.frame(e)
		require.Equal(t, "streaming", p.state, "drop %d: not ended", drop)
		timers := env.retryTimers()
		require.Len(t, timers, 1)
		require.Len(t, env.opened, 1, "the resume waits for its timer")

		e.Timer(timers[0], false)
		resume := env.conn()
		require.Equal(t, origin+"/v1/streams/s", resume.URL)
		require.Equal(t, "GET", resume.Method)
		require.Contains(t, resume.Headers, [2]string{"Last-Event-ID", "s:" + strconv.Itoa(drop)})
		require.Contains(t, resume.Headers, [2]string{"Authorization", "Bearer k"}, "a resume carries the request's authorization")
		require.True(t, e.Response(resume.Gen, Response{OK: true, StreamID: "s"}))
		env.arrive(resume.Gen, data[cut:]) // the relay replays after that id
		p.frame(e)
		require.Equal(t, text, p.text, "drop %d", drop)
		require.Equal(t, "complete", p.state, "drop %d", drop)
		require.Equal(t, map[int]string{1: "complete"}, p.resolved)
	}
}

// A resume that brings nothing new and ends cleanly means the relay has
// nothing more: the answer ends incomplete instead of asking forever.
func TestAResumeThatBringsNothingEndsTheAnswerIncomplete(t *testing.T) {
	data, ends, _ := relayAnswer(t)
	env, p, e, gen := streaming(t)
	env.arrive(gen, data[:ends[1]])
	require.True(t, e.Ended(gen, End{Kind: EndReadError, Err: "reset"}))
	e.Timer(env.retryTimers()[0], false)
	gen = env.conn().Gen
	e.Response(gen, Response{OK: true, StreamID: "s"})
	require.True(t, e.Ended(gen, End{Kind: EndDone}))
	p.frame(e)
	require.Equal(t, "incomplete", p.state)
	require.Len(t, env.retryTimers(), 1, "no second resume")
	require.Equal(t, map[int]string{1: "incomplete"}, p.resolved)
}

func TestStopRaces(t *testing.T) {
	data, ends, _ := relayAnswer(t)

	t.Run("before the response: the request is aborted and its response is stale", func(t *testing.T) {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "worker")
		e.Do(askCmd(t, 1, ""), time.Time{}, nil)
		gen := env.conn().Gen
		e.Do(command(t, `{"t":"stop","id":1}`), time.Time{}, nil)
		p.take(e)
		require.Equal(t, []string{strconv.Itoa(gen) + " stop"}, env.closed)
		require.Empty(t, env.cancels, "no stream id yet: nothing to cancel at the relay")
		require.Equal(t, map[int]string{1: "stopped"}, p.resolved)
		require.False(t, e.Response(gen, Response{OK: true, StreamID: "s"}), "the aborted fetch's response comes late")
		require.False(t, e.Ended(gen, End{Kind: EndFetchError, Err: "aborted"}))
		p.frame(e)
		require.Equal(t, "stopped", p.state)
		require.Empty(t, p.streamID, "a stale response tells the page nothing")
	})

	t.Run("mid-answer: what arrived before Stop stays, the relay is asked to cancel", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, data[:ends[2]])
		e.Stop() // before any frame took those bytes
		p.take(e)
		require.Equal(t, "stopped", p.state)
		require.NotEmpty(t, p.text, "the bytes in the inbox at Stop are part of the answer")
		require.Equal(t, []string{origin + "/v1/streams/s"}, env.cancels)
		require.Equal(t, "Stopped.", p.end.Notice)
		require.False(t, p.end.Retry)
		env.arrive(gen, data[ends[2]:])
		p.frame(e)
		require.Equal(t, "stopped", p.state, "nothing arrives after Stop")
		e.Stop()
		require.Len(t, env.cancels, 1, "a second Stop does nothing")
	})

	t.Run("while a resume waits: the timer finds the answer stopped", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, data[:ends[1]])
		e.Ended(gen, End{Kind: EndReadError, Err: "reset"})
		e.Stop()
		p.take(e)
		e.Timer(env.retryTimers()[0], false)
		require.Len(t, env.opened, 1, "a stopped answer is not resumed")
		require.Equal(t, []string{origin + "/v1/streams/s"}, env.cancels)
		require.Equal(t, map[int]string{1: "stopped"}, p.resolved)
	})

	t.Run("over a WebSocket: the socket carries the stop, and no DELETE goes beside it", func(t *testing.T) {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "worker")
		e.Do(askCmd(t, 1, `,"transport":"websocket"`), time.Time{}, nil)
		c := env.conn()
		require.True(t, c.WebSocket)
		require.Equal(t, "wss://app.test/v1/ws", c.URL)
		require.True(t, e.Opened(c.Gen))
		require.Len(t, env.sent, 1)
		require.Contains(t, env.sent[0], `"stream":true`, "the request is the first message")
		env.arrive(c.Gen, data[:ends[1]])
		e.Stop()
		p.take(e)
		require.Equal(t, []string{strconv.Itoa(c.Gen) + " stop"}, env.closed)
		require.Empty(t, env.cancels, "the stop went on the socket, whose stopped status says what it cost")
		require.False(t, e.Ended(c.Gen, End{Kind: EndDone, Close: &WSClosed{URL: c.URL, Code: 1000}}))
		require.Equal(t, map[int]string{1: "stopped"}, p.resolved)
		require.False(t, e.StopStatus("id: s:9\ndata: {}\n\n"), "an event that is not the relay's status")
		require.True(t, e.StopStatus("id: s:10\nevent: trickle.status\ndata: {\"status\":\"stopped\",\"usage\":{\"completion_tokens\":7}}\n\n"))
		p.take(e)
		require.Equal(t, "trickle-usage", p.events[len(p.events)-1], "the stopped status's usage is the cost")
	})

	t.Run("mid-sentence, nothing whole left to say: the ending is asked for at once", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, openAIChunks(t, "A sentence that the reader stops befo")[:60])
		p.frame(e)
		env.now = env.now.Add(5 * time.Second) // the tail stalls; nothing to announce
		wants := env.wants
		e.Stop()
		require.Greater(t, env.wants, wants, "without Want the host never posts the final update (the page would stay streaming)")
		p.take(e)
		require.Equal(t, "stopped", p.state)
		require.Equal(t, map[int]string{1: "stopped"}, p.resolved)
	})

	t.Run("after the end: nothing to stop", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, data)
		p.frame(e)
		require.Equal(t, "complete", p.state)
		e.Stop()
		p.frame(e)
		require.Equal(t, "complete", p.state)
		require.Empty(t, env.cancels)
	})
}

// A new ask replaces the answer in progress: its call settles as stopped,
// and its connection's late news is stale.
func TestAnAskReplacesTheAnswerInProgress(t *testing.T) {
	data, ends, text := relayAnswer(t)
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 1, ""), time.Time{}, nil)
	old := env.conn().Gen
	e.Response(old, Response{OK: true, StreamID: "s"})
	env.arrive(old, data[:ends[1]])
	p.frame(e)

	e.Do(askCmd(t, 2, ""), time.Time{}, nil)
	p.take(e)
	require.Equal(t, map[int]string{1: "stopped"}, p.resolved)
	require.Equal(t, 2, p.resets)
	fresh := env.conn().Gen
	require.NotEqual(t, old, fresh)
	require.False(t, e.Ended(old, End{Kind: EndReadError, Err: "aborted"}))
	env.arrive(old, []byte("data: stale\n\n"))
	require.True(t, e.Response(fresh, Response{OK: true, StreamID: "t"}))
	env.arrive(fresh, data)
	p.frame(e)
	require.Equal(t, text, p.text)
	require.Equal(t, "t", p.streamID)
	require.Equal(t, map[int]string{1: "stopped", 2: "complete"}, p.resolved)
}

func TestRetryAsksAgainAndDetachReleases(t *testing.T) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(command(t, `{"t":"retry","id":1,"n":3}`), time.Time{}, nil)
	p.take(e)
	require.Equal(t, map[int]string{3: "idle"}, p.resolved, "retry with nothing asked yet")
	require.Empty(t, env.opened)

	e.Do(askCmd(t, 4, ""), time.Time{}, nil)
	first := env.conn()
	e.Response(first.Gen, Response{OK: false, Status: 401})
	env.arrive(first.Gen, []byte(`{"error":{"message":"bad key"}}`))
	require.True(t, e.Ended(first.Gen, End{Kind: EndDone}))
	p.frame(e)
	require.Equal(t, "failed", p.state)
	require.Contains(t, p.events, "trickle-error")
	require.False(t, p.end.Retry, "a refused request does not offer to retry: asking again the same way cannot help")
	require.Equal(t, "The server refused the request (401).", p.end.Notice)

	e.Do(command(t, `{"t":"retry","id":1,"n":5}`), time.Time{}, nil)
	again := env.conn()
	require.Equal(t, first.Body, again.Body, "retry sends the same request")
	require.NotEqual(t, first.Gen, again.Gen)

	e.Do(command(t, `{"t":"detach","id":1}`), time.Time{}, nil)
	p.take(e)
	require.True(t, e.Gone())
	require.True(t, p.gone)
	require.False(t, e.Active())
	require.Equal(t, "stopped", p.resolved[5], "a detached element's call still settles")
	require.Contains(t, env.closed, strconv.Itoa(again.Gen)+" stop")
	require.False(t, e.Response(again.Gen, Response{OK: true}))
	e.Timer(Timer{Kind: TimerAnnounce}, false)
	p.take(e)
}

// The page's early request is adopted, not sent again: its response is
// known, so Stop can cancel at the relay before Go saw a byte.
func TestTheEarlyRequestIsAdoptedOnce(t *testing.T) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 1, ""), time.Time{}, &Early{OK: true, StreamID: "s"})
	c := env.conn()
	require.True(t, c.Adopt)
	e.Stop()
	p.take(e)
	require.Equal(t, []string{origin + "/v1/streams/s"}, env.cancels)

	e.Do(command(t, `{"t":"retry","id":1,"n":2}`), time.Time{}, nil)
	require.False(t, env.conn().Adopt, "a retry sends the request again")
	require.Equal(t, "POST", env.conn().Method)
}

// An answer whose early view already told the page it started and
// painted its first token (the page dispatched trickle-start and
// trickle-first-token) is not told of them again by Go; an early view
// that told neither (the wasm came before the first token), and the
// retry after it, are told as ever.
func TestGoDoesNotTellTheFirstTokenTheEarlyViewAlreadyTold(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		early  *Early
		want   []string
		times  string // the metrics' ttft_ms and ttfat_ms
	}{
		{"told both", "short", &Early{OK: true, StreamID: "s", StartTold: true, FirstTokenTold: true, FirstTokenMS: 123.4},
			[]string{"trickle-end"}, `"ttft_ms":123.4,"ttfat_ms":123.4,`},
		{"told both, after thinking", "thinking", &Early{OK: true, StreamID: "s", StartTold: true, FirstTokenTold: true, FirstTokenMS: 300},
			[]string{"trickle-end"}, `"ttft_ms":250,"ttfat_ms":300,`},
		{"told the start only", "short", &Early{OK: true, StreamID: "s", StartTold: true},
			[]string{"trickle-first-token", "trickle-end"}, `"ttft_ms":250,"ttfat_ms":250,`},
		{"told nothing", "short", &Early{OK: true, StreamID: "s"},
			[]string{"trickle-start", "trickle-first-token", "trickle-end"}, `"ttft_ms":250,"ttfat_ms":250,`},
		{"no early view", "short", nil,
			[]string{"trickle-start", "trickle-first-token", "trickle-end"}, `"ttft_ms":250,"ttfat_ms":250,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, _, a := events(t, sim.Params{Answer: tc.answer, TokenChars: 5})
			env, p := newFakeEnv(t), newPage(t)
			e := NewElement(1, env, env.clock(), nil, "worker")
			e.Do(askCmd(t, 1, ""), env.now, tc.early)
			c := env.conn()
			if tc.early == nil {
				require.True(t, e.Response(c.Gen, Response{OK: true, StreamID: "s"}))
			}
			env.now = env.now.Add(250 * time.Millisecond)
			env.arrive(c.Gen, data)
			p.frame(e)
			require.Equal(t, a.Text, p.text)
			require.Equal(t, tc.want, p.events)
			require.Contains(t, p.details[len(p.details)-1], tc.times, "the metrics give what the page was told")

			// A retry is a new answer, with no early view: Go tells it all,
			// with its own times.
			p.events, p.details = nil, nil
			e.Do(command(t, `{"t":"retry","id":1,"n":2}`), env.now, nil)
			r := env.conn()
			require.True(t, e.Response(r.Gen, Response{OK: true, StreamID: "s2"}))
			env.now = env.now.Add(100 * time.Millisecond)
			env.arrive(r.Gen, data)
			p.frame(e)
			require.Equal(t, []string{"trickle-start", "trickle-first-token", "trickle-end"}, p.events)
			require.Contains(t, p.details[len(p.details)-1], `"ttfat_ms":100,`)
		})
	}
}

// A WebSocket that drops after opening resumes on the relay's resume URL
// with the resume message; one refused at the handshake is not resumed.
func TestAWebSocketResumesWithTheResumeMessage(t *testing.T) {
	data, ends, text := relayAnswer(t)
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 1, `,"transport":"websocket"`), time.Time{}, nil)
	c := env.conn()
	e.Opened(c.Gen)
	env.arrive(c.Gen, data[:ends[2]])
	require.True(t, e.Ended(c.Gen, End{Kind: EndDone, Close: &WSClosed{URL: c.URL, Code: 1006}}))
	e.Timer(env.retryTimers()[0], false)
	r := env.conn()
	require.True(t, r.WebSocket)
	require.Equal(t, "wss://app.test/v1/ws", r.URL)
	require.True(t, e.Opened(r.Gen))
	require.Equal(t, strconv.Itoa(r.Gen)+": "+ResumeMessage("s", "s:3"), env.sent[len(env.sent)-1])
	env.arrive(r.Gen, data[ends[2]:])
	p.frame(e)
	require.Equal(t, text, p.text)
	require.Equal(t, "complete", p.state)

	env2, p2 := newFakeEnv(t), newPage(t)
	e2 := NewElement(1, env2, env2.clock(), nil, "worker")
	e2.Do(askCmd(t, 1, `,"transport":"websocket"`), time.Time{}, nil)
	c2 := env2.conn()
	require.True(t, e2.Ended(c2.Gen, End{Kind: EndDone, Close: &WSClosed{URL: c2.URL, Code: 1006}}))
	p2.frame(e2)
	require.Equal(t, "failed", p2.state, "refused at the handshake")
	require.Empty(t, env2.retryTimers())
	require.Equal(t, "Could not reach the server.", p2.end.Notice)
	require.Contains(t, p2.end.Detail, "WebSocket", "the developer's detail says which connection")
}

// An ask of something that is not a request fails its call without
// starting an answer.
func TestABadAskFailsItsCallOnly(t *testing.T) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(command(t, `{"t":"ask","id":1,"n":9,"url":"`+origin+`/v1/chat/completions","type":"number"}`), time.Time{}, nil)
	p.take(e)
	require.Equal(t, map[int]string{9: "failed"}, p.resolved)
	require.Equal(t, []string{"trickle-error"}, p.events)
	require.Empty(t, env.opened)
	require.False(t, e.Active())
}

// The GC pacer is held from an answer's start to its end: the idle
// collection an ended answer asks for does not run while another streams.
func TestTheCollectorIsHeldWhileAnAnswerStreams(t *testing.T) {
	data, _, _ := relayAnswer(t)
	idle, collected := 0, 0
	gc := &GCPacer{Idle: func() { idle++ }, Collect: func() { collected++ }}
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), gc, "worker")
	e.Do(askCmd(t, 1, ""), time.Time{}, nil)
	e.Do(askCmd(t, 2, ""), time.Time{}, nil) // the first answer ends, stopped
	gc.OnIdle()
	require.Zero(t, collected, "the second answer streams")
	gen := env.conn().Gen
	e.Response(gen, Response{OK: true})
	env.arrive(gen, data)
	p.frame(e)
	require.Equal(t, "complete", p.state)
	require.Equal(t, 2, idle, "each end asks for idle time")
	gc.OnIdle()
	require.Equal(t, 1, collected, "with no answer streaming, the collector runs at idle time")
}

// A relay mounted under a prefix: the resume and the Stop go where its
// X-Trickle-Stream-URL says, resolved against the endpoint, and the page's
// early request carries the header to Go as well.
func TestAResumeAndAStopFollowTheRelaysStreamURLUnderAPrefix(t *testing.T) {
	data, ends, text := relayAnswer(t)
	endpoint := origin + "/ai/v1/chat/completions?answer=short"
	ask := command(t, `{"t":"ask","id":1,"n":1,"url":"`+endpoint+`","origin":"`+origin+`","prompt":"hello"}`)
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(ask, time.Time{}, nil)
	gen := env.conn().Gen
	require.Equal(t, endpoint, env.conn().URL)
	require.True(t, e.Response(gen, Response{OK: true, StreamID: "s", StreamURL: "../streams/s"}))
	env.arrive(gen, data[:ends[1]])
	require.True(t, e.Ended(gen, End{Kind: EndReadError, Err: "reset"}))
	e.Timer(env.retryTimers()[0], false)
	resume := env.conn()
	require.Equal(t, origin+"/ai/v1/streams/s", resume.URL, "the resume is the relay's, under its prefix, without the query")
	require.Equal(t, "GET", resume.Method)
	e.Response(resume.Gen, Response{OK: true, StreamID: "s"})
	env.arrive(resume.Gen, data[ends[1]:])
	require.True(t, e.Ended(resume.Gen, End{Kind: EndDone}))
	p.frame(e)
	require.Equal(t, text, p.text)
	require.Equal(t, "complete", p.state)

	env2, p2 := newFakeEnv(t), newPage(t)
	e2 := NewElement(1, env2, env2.clock(), nil, "worker")
	e2.Do(ask, time.Time{}, &Early{OK: true, StreamID: "s", StreamURL: "../streams/s"})
	e2.Stop()
	p2.take(e2)
	require.Equal(t, []string{origin + "/ai/v1/streams/s"}, env2.cancels, "Stop reaches the relay under /ai/")
}

func (f *fakeEnv) clock() Clock { return Clock{Now: f.Now, EpochMS: f.EpochMS} }
