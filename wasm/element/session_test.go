package element

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// events renders a simulated generation as the relay sends it: SSE events
// with ids "s:<seq>"; ends[i] is the byte offset after event i+1.
func events(t *testing.T, p sim.Params) (data []byte, ends []int, answer sim.Answer) {
	t.Helper()
	g, err := sim.New(p)
	require.NoError(t, err)
	seq := 0
	for {
		m, ok := g.Next()
		if !ok {
			break
		}
		seq++
		data = sse.AppendMessage(data, sse.Message{ID: "s:" + strconv.Itoa(seq), Event: m.Event, Data: m.Data})
		ends = append(ends, len(data))
	}
	return data, ends, g.Answer()
}

// screen is what the DOM would hold, applying patches the way element_js.go
// does.
type screen struct {
	settled, tail, thinking, tools, status string
	shown                                  string // the visible status line
	announced                              []string
	final                                  bool
	unwrapped                              int
	words                                  *Strings // the session's, when not English
}

func (s *screen) apply(t *testing.T, p protocol.Patch) {
	if s.final {
		require.True(t, p.Append == "" && !p.TailChanged && p.Thinking == "" && !p.ToolsChanged && !p.Final,
			"nothing but announcements after the final frame: %+v", p)
	}
	s.settled += p.Append
	if p.TailChanged {
		s.tail = p.Tail
	}
	if p.Unwrap {
		require.True(t, p.Final, "only the final frame unwraps the tail")
		s.settled += s.tail // the tail's nodes stay, without their wrapper
		s.tail = ""
		s.unwrapped++
	}
	s.thinking += p.Thinking
	if p.ToolsChanged {
		s.tools = p.Tools
	}
	s.announced = append(s.announced, p.Announce...)
	if p.StatusChanged {
		s.status = p.Status
	}
	if p.ShownChanged {
		s.shown = p.Shown
	}
	responding := a11y.StatusResponding
	if s.words != nil {
		responding = s.words.Responding
	}
	if !s.final && !p.Final {
		// Responding from the answer's start (empty only for a session
		// given no Begin, no byte yet) until the final frame.
		require.Contains(t, []string{"", responding}, s.shown, "the visible status says responding until the final frame")
	}
	if p.Final {
		s.final = true
		require.Empty(t, s.tail, "everything settles at the end")
		require.True(t, p.ShownChanged, "the final frame shows how the answer ended at once")
		require.NotEqual(t, responding, s.shown)
	}
}

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// drive feeds data in random cuts with frames in between, optionally
// dropping the connection after event dropAt (mid-event: half of the next
// event arrives first) and resuming after it; then ends and drains the
// announcer.
func drive(t *testing.T, rng *rand.Rand, data []byte, ends []int, dropAt int, end error) (*Session, *screen) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newSession(t, Config{Policy: render.Policy{SameOrigin: "https://app.test"}, Now: clock.Now})
	sc := &screen{}
	frame := func() {
		p := s.Frame()
		sc.apply(t, p)
		// Between frames, the page shows settled+tail: always a prefix
		// render of the text so far.
		if !sc.final {
			require.Equal(t, convert(t, s.Text(), RenderOptions(render.Policy{SameOrigin: "https://app.test"})...), sc.settled+sc.tail)
		}
	}
	feed := func(b []byte) {
		for len(b) > 0 {
			n := 1 + rng.IntN(96)
			n = min(n, len(b))
			require.NoError(t, s.Write(b[:n]))
			b = b[n:]
			clock.now = clock.now.Add(time.Duration(rng.IntN(20)) * time.Millisecond)
			if rng.IntN(4) == 0 {
				frame()
			}
		}
	}
	if dropAt > 0 && dropAt < len(ends) {
		cut := ends[dropAt-1]
		half := cut + (ends[dropAt]-cut)/2
		feed(data[:half]) // the connection breaks mid-event
		s.Reconnect()
		require.Equal(t, "s:"+strconv.Itoa(dropAt), s.LastEventID(), "resume after the last complete event")
		feed(data[cut:]) // the relay replays what came after that id
	} else {
		feed(data)
	}
	s.End(end)
	frame()
	shownAtEnd := sc.shown
	for {
		due, ok := s.NextAnnouncement()
		if !ok {
			break
		}
		clock.now = due
		sc.apply(t, s.Frame())
	}
	require.Equal(t, shownAtEnd, sc.shown, "the visible status does not change after the final frame")
	require.Equal(t, s.Outcome().Spoken(), sc.status, "the spoken status catches up with the visible one")
	require.True(t, strings.HasPrefix(sc.status, sc.shown), "and says it first, then why (the notice is not heard): %q", sc.status)
	return s, sc
}

// The visible status line shows the element's state at once; the status
// region a screen reader hears keeps its order (last sentences, then the
// end status, MinGap later).
func TestTheVisibleStatusIsNeverBehindTheSpokenOne(t *testing.T) {
	data, _, _ := events(t, sim.Params{Answer: "short", TokenChars: 4})
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newSession(t, Config{Now: clock.Now})
	require.False(t, s.Dirty(), "an element never asked has nothing to show")
	require.False(t, s.Frame().ShownChanged)
	s.Begin()
	require.True(t, s.Dirty())
	first := s.Frame()
	require.True(t, first.ShownChanged)
	require.Equal(t, a11y.StatusResponding, first.Shown)
	require.NoError(t, s.Write(data))
	s.End(nil)
	final := s.Frame()
	require.True(t, final.Final)
	require.True(t, final.ShownChanged)
	require.Equal(t, a11y.StatusComplete, final.Shown, "complete on screen in the final frame")
	require.False(t, final.StatusChanged && final.Status == a11y.StatusComplete,
		"the spoken status waits: the answer's sentences go first")
	var spokenAt time.Time
	lastWords := clock.now
	for {
		due, ok := s.NextAnnouncement()
		if !ok {
			break
		}
		clock.now = due
		p := s.Frame()
		require.False(t, p.ShownChanged, "the visible status already said it")
		if len(p.Announce) > 0 {
			lastWords = clock.now
		}
		if p.StatusChanged {
			require.Equal(t, a11y.StatusComplete, p.Status)
			spokenAt = clock.now
		}
	}
	require.False(t, spokenAt.IsZero())
	require.GreaterOrEqual(t, spokenAt.Sub(lastWords), a11y.MinGap)
}

func wantUnits(t testing.TB, text string) string {
	doc, err := render.NewDocument(RenderOptions(render.Policy{SameOrigin: "https://app.test"})...)
	require.NoError(t, err)
	blocks := append(doc.Update(text).Settled, doc.Finish().Settled...)
	var out []string
	for _, u := range a11y.Units(blocks) {
		out = append(out, u.Text)
	}
	return strings.Join(out, " ")
}

func TestASessionShowsAndAnnouncesEveryDialectInAnyCut(t *testing.T) {
	rounds := 4
	if testing.Short() {
		rounds = 1
	}
	unwrapped := 0
	t.Cleanup(func() {
		if !t.Failed() {
			require.Positive(t, unwrapped, "final frames keep the tail's nodes when it already shows the rest")
		}
	})
	for _, dialect := range sim.Dialects() {
		for _, answer := range []string{"short", "thinking", "tool-call"} {
			t.Run(dialect.String()+"/"+answer, func(t *testing.T) {
				data, ends, want := events(t, sim.Params{Dialect: dialect, Answer: answer, TokenChars: 3, Tools: []sim.Tool{sim.Weather}})
				for round := 0; round < rounds; round++ {
					rng := rand.New(rand.NewPCG(uint64(round), 7))
					dropAt := 0
					if round%2 == 1 {
						dropAt = 1 + rng.IntN(len(ends)-1)
					}
					s, sc := drive(t, rng, data, ends, dropAt, nil)
					require.Equal(t, stream.Complete, s.Status(), "round %d, drop after %d", round, dropAt)
					require.Equal(t, want.Text, s.Text())
					require.Equal(t, convert(t, want.Text, RenderOptions(render.Policy{SameOrigin: "https://app.test"})...), sc.settled,
						"all Append (and the unwrapped tail) equal the one-shot render")
					unwrapped += sc.unwrapped
					if dialect != "plain" {
						require.Equal(t, want.Thinking, strings.TrimSpace(sc.thinking))
					}
					if want.Tool != nil && dialect != "plain" {
						require.Contains(t, sc.tools, "<code>"+want.Tool.Name+"</code>")
					}
					require.Equal(t, wantUnits(t, want.Text), strings.Join(sc.announced, " "), "each unit announced once, in order")
					require.Equal(t, a11y.StatusComplete, sc.status)
					m := s.Metrics()
					require.Positive(t, m.Tokens)
					require.Equal(t, dropAt > 0, m.Reconnects == 1)
				}
			})
		}
	}
}

func TestASessionWithoutTheEndMarkerIsIncomplete(t *testing.T) {
	data, ends, want := events(t, sim.Params{Answer: "short", NoEnd: true})
	s, sc := drive(t, rand.New(rand.NewPCG(1, 2)), data, ends, 0, nil)
	require.Equal(t, stream.Incomplete, s.Status())
	require.Equal(t, want.Text, s.Text())
	require.Equal(t, ReasonCutOff, s.Outcome().Reason)
	require.Equal(t, "The answer ended before the model finished.", s.Outcome().Notice())
	require.NotEqual(t, a11y.StatusComplete, sc.status)
	require.NotEmpty(t, sc.status)
}

func TestAStoppedSessionKeepsWhatItShowedAndSettlesIt(t *testing.T) {
	data, ends, _ := events(t, sim.Params{Answer: "sample-20k", TokenChars: 16})
	half := ends[len(ends)/2]
	s, sc := drive(t, rand.New(rand.NewPCG(3, 4)), data[:half], ends[:len(ends)/2], 0, ErrStoppedByUser)
	require.Equal(t, stream.Stopped, s.Status())
	require.NotEmpty(t, s.Text())
	require.Equal(t, convert(t, s.Text(), RenderOptions(render.Policy{SameOrigin: "https://app.test"})...), sc.settled)
}

func TestAFailedTransportFailsTheSessionWithItsReason(t *testing.T) {
	data, ends, _ := events(t, sim.Params{Answer: "short"})
	s, _ := drive(t, rand.New(rand.NewPCG(5, 6)), data[:ends[10]], ends[:10], 0, errTest("network down"))
	require.Equal(t, stream.Failed, s.Status())
	require.ErrorContains(t, s.Err(), "network down")
	require.Equal(t, ReasonUnknown, s.Outcome().Reason, "an error of no known kind")
	require.Equal(t, "Something went wrong.", s.Outcome().Notice())
	require.ErrorContains(t, errors.New(s.Outcome().Detail()), "network down", "the detail keeps the chain")
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestOnEventSeesEveryDecodedEventAndTheSessionsAnswer(t *testing.T) {
	var text strings.Builder
	kinds := map[stream.Kind]int{}
	var s *Session
	s = newSession(t, Config{OnEvent: func(e stream.Event) {
		kinds[e.Kind]++
		if e.Kind == stream.KindText {
			text.WriteString(e.Text)
			require.Equal(t, kinds[stream.KindText], s.Metrics().Tokens, "the session counts a token before OnEvent sees it")
		}
	}})
	require.NoError(t, s.Write([]byte("data: {\"delta\":\"Hello, \"}\n\ndata: {\"delta\":\"world.\"}\n\ndata: [DONE]\n\n")))
	require.Equal(t, "Hello, world.", text.String())
	require.Equal(t, s.Text(), text.String())
	require.Equal(t, 1, kinds[stream.KindEnd])
	require.Equal(t, stream.DialectPlain, s.Dialect())
	require.Equal(t, stream.Complete, s.Answer().Status())
}

func TestATextResponseIsTheAnswerAndItsLengthCountsOnlyOnTheSameOrigin(t *testing.T) {
	headers := map[string]string{"Content-Type": "text/plain; charset=utf-8", "Content-Length": "40"}
	get := func(name string) string { return headers[name] }
	require.Equal(t, int64(40), ResponseHead("basic", get).ContentLength)
	for _, typ := range []string{"cors", "opaque", ""} {
		require.Equal(t, int64(-1), ResponseHead(typ, get).ContentLength, "%q: its Content-Encoding may be hidden", typ)
	}

	body := "## Tea\n\nGreen, at **80 °C**."
	s := newSession(t, Config{})
	s.Respond(ResponseHead("cors", get))
	require.NoError(t, s.Write([]byte(body)))
	s.End(nil)
	p := s.Frame()
	require.True(t, p.Final)
	require.Equal(t, stream.DialectText, s.Dialect())
	require.Equal(t, stream.Complete, s.Status())
	require.Equal(t, convert(t, body, RenderOptions(render.Policy{})...), p.Append+p.Tail)

	// Same origin, the body shorter than its Content-Length: cut.
	s = newSession(t, Config{})
	s.Respond(ResponseHead("basic", get))
	require.NoError(t, s.Write([]byte(body)))
	s.End(nil)
	require.Equal(t, stream.Incomplete, s.Status())
	require.Equal(t, body, s.Text())
}

func TestABodyTheWidgetCannotReadFailsSayingWhatArrivedNeverIncomplete(t *testing.T) {
	s := newSession(t, Config{})
	s.Respond(ResponseHead("basic", func(name string) string {
		return map[string]string{"Content-Type": "text/html"}[name]
	}))
	require.NoError(t, s.Write([]byte("<html><body><h1>Welcome</h1></body></html>")))
	s.End(nil)
	s.Frame()
	require.Equal(t, stream.Failed, s.Status())
	o := s.Outcome()
	require.Equal(t, ReasonUnreadable, o.Reason)
	require.Equal(t, "The server's answer is in a form this page cannot read.", o.Notice(), "the reader's words, never Incomplete")
	require.Contains(t, o.Detail(), `"text/html"`, "the developer's detail says what arrived")
	require.Contains(t, o.Detail(), `"<html><body><h1>Welcome</h1></body></html>"`)
}

// A stopped answer is heard up to its last whole sentence, then the
// status: the sentence the stop cut (mid-word, here) is not read out, as
// Orca was heard reading "… how to reverse a string in G." after Escape.
func TestAStoppedAnswerIsNotHeardPastItsLastWholeSentence(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newSession(t, Config{Now: clock.Now})
	s.Begin()
	s.Frame()
	require.NoError(t, s.Write([]byte("data: {\"delta\":\"It streams. It is read as it comes.\\n\\n\"}\n\ndata: {\"delta\":\"- a code question, such as how to reverse a string in G\"}\n\n")))
	s.Frame()
	s.End(ErrStoppedByUser)
	var heard, statuses []string
	collect := func(p protocol.Patch) {
		heard = append(heard, p.Announce...)
		if p.StatusChanged {
			statuses = append(statuses, p.Status)
		}
	}
	collect(s.Frame())
	for {
		due, ok := s.NextAnnouncement()
		if !ok {
			break
		}
		clock.now = due
		collect(s.Frame())
	}
	require.NotEmpty(t, heard)
	all := strings.Join(heard, " ")
	require.Contains(t, all, "It is read as it comes.")
	require.NotContains(t, all, "reverse", "the cut-off item is not read out: %q", heard)
	require.Equal(t, a11y.StatusStopped, statuses[len(statuses)-1])
}
