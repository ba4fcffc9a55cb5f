package element

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// nastyAnswer is an answer whose every field holds text that breaks naive
// JSON or HTML writers, with a complete tool call whose arguments are not
// JSON and one still streaming.
func nastyAnswer(t *testing.T, nasty string) *stream.Answer {
	a := stream.NewAnswer()
	for _, ev := range []stream.Event{
		{Kind: stream.KindThinking, Text: nasty},
		{Kind: stream.KindText, Text: nasty},
		{Kind: stream.KindToolCallDelta, Index: 0, ID: "call_" + nasty, Name: nasty, Text: `{"a":`},
		{Kind: stream.KindToolCallDone, Index: 0, Text: `{"a": not json`},
		{Kind: stream.KindToolCallDelta, Index: 1, ID: "call_2", Name: "get_weather", Text: `{"city":"Par`},
		{Kind: stream.KindUsage, Usage: stream.Usage{InputTokens: 3, OutputTokens: 4}},
		{Kind: stream.KindFinish, Reason: nasty},
	} {
		a.Apply(ev)
	}
	return a
}

type message struct {
	Role         string        `json:"role"`
	Content      string        `json:"content"`
	Status       string        `json:"status"`
	Incomplete   bool          `json:"incomplete"`
	FinishReason *string       `json:"finish_reason"`
	Usage        *stream.Usage `json:"usage"`
	ToolCalls    []struct {
		ID, Name, Raw string
		Arguments     json.RawMessage
		Complete      bool
	} `json:"tool_calls"`
	Thinking string `json:"thinking"`
}

func TestTheMessageIsJSONWhateverTheModelSent(t *testing.T) {
	nasty := "a\"b\\c\u2028d</script>\xff<img onerror=x>"
	var m message
	require.NoError(t, json.Unmarshal(AppendMessage(nil, nastyAnswer(t, nasty)), &m))
	want := "a\"b\\c\u2028d</script>\uFFFD<img onerror=x>"
	require.Equal(t, "assistant", m.Role)
	require.Equal(t, want, m.Content)
	require.Equal(t, want, m.Thinking)
	require.Equal(t, "streaming", m.Status)
	require.False(t, m.Incomplete, "not ended")
	require.Equal(t, &stream.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7}, m.Usage)
	require.Len(t, m.ToolCalls, 2)
	require.Equal(t, want, m.ToolCalls[0].Name)
	require.True(t, m.ToolCalls[0].Complete)
	require.Equal(t, "null", string(m.ToolCalls[0].Arguments), "arguments that are not JSON are null; raw keeps them")
	require.Equal(t, `{"a": not json`, m.ToolCalls[0].Raw)
	require.False(t, m.ToolCalls[1].Complete)
	require.Equal(t, "null", string(m.ToolCalls[1].Arguments), "null until complete")
	require.Equal(t, `{"city":"Par`, m.ToolCalls[1].Raw)
}

func TestAMessageSaysWhetherItWasCutOff(t *testing.T) {
	for _, tc := range []struct {
		end        func(a *stream.Answer)
		text       string
		status     string
		incomplete bool
	}{
		{func(a *stream.Answer) { a.Apply(stream.Event{Kind: stream.KindEnd}) }, "Hi.", "complete", false},
		{func(a *stream.Answer) { a.Apply(stream.Event{Kind: stream.KindStatus, Reason: "stopped"}) }, "Hi", "stopped", true},
		{func(a *stream.Answer) { a.Apply(stream.Event{Kind: stream.KindStatus, Reason: "stopped"}) }, "", "stopped", false},
		{func(a *stream.Answer) {
			a.Apply(stream.Event{Kind: stream.KindError, Err: &stream.ProviderError{Message: "x"}})
		}, "Hi", "failed", true},
	} {
		a := stream.NewAnswer()
		if tc.text != "" {
			a.Apply(stream.Event{Kind: stream.KindText, Text: tc.text})
		}
		tc.end(a)
		var m message
		require.NoError(t, json.Unmarshal(AppendMessage(nil, a), &m))
		require.Equal(t, tc.status, m.Status)
		require.Equal(t, tc.incomplete, m.Incomplete, "%s with %q", tc.status, tc.text)
		require.Nil(t, m.FinishReason)
		require.Nil(t, m.Usage)
		require.NotNil(t, m.ToolCalls, "tool_calls is a list, empty when none")
	}
}

// An element's end carries the message, and each tool call is told once,
// when its arguments complete.
func TestTheEndCarriesTheMessageAndEachToolCallIsToldOnce(t *testing.T) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 1, ""), env.now, nil)
	gen := env.conn().Gen
	e.Response(gen, Response{OK: true})
	chunk := func(s string) []byte { return []byte("data: " + s + "\n\n") }
	env.arrive(gen, chunk(`{"choices":[{"index":0,"delta":{"content":"Checking."}}]}`))
	env.arrive(gen, chunk(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}]}`))
	p.frame(e)
	env.arrive(gen, chunk(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}`))
	env.arrive(gen, chunk(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`))
	p.frame(e)
	env.arrive(gen, []byte("data: [DONE]\n\n"))
	p.frame(e)
	require.Equal(t, "complete", p.state)
	var tool, end string
	n := 0
	for _, d := range p.details {
		if name, detail, _ := strings.Cut(d, " "); name == "trickle-tool-call" {
			tool, n = detail, n+1
		} else if name == "trickle-end" {
			end = detail
		}
	}
	require.Equal(t, 1, n, "one trickle-tool-call for one call")
	require.JSONEq(t, `{"id":"call_1","name":"get_weather","arguments":{"city":"Paris"},"raw":"{\"city\":\"Paris\"}","complete":true}`, tool)
	var ended struct{ Message message }
	require.NoError(t, json.Unmarshal([]byte(end), &ended))
	require.Equal(t, "Checking.", ended.Message.Content)
	require.Equal(t, "tool_calls", *ended.Message.FinishReason)
	require.Len(t, ended.Message.ToolCalls, 1)
	require.JSONEq(t, `{"city":"Paris"}`, string(ended.Message.ToolCalls[0].Arguments))
}

// streamed streams data through a new element and returns what its page
// shows and its message.
func streamed(t *testing.T, data []byte) (*page, string) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 1, ""), env.now, nil)
	gen := env.conn().Gen
	e.Response(gen, Response{OK: true})
	env.arrive(gen, data)
	p.frame(e)
	if p.end == nil { // the body ends without the end marker
		e.Ended(gen, End{Kind: EndDone})
		p.frame(e)
	}
	require.NotNil(t, p.end)
	return p, p.end.Message
}

// shown shows message m on a new element.
func shown(t *testing.T, m string) (*page, *fakeEnv) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(command(t, `{"t":"show","id":1,"url":"`+origin+`/v1/chat/completions","origin":"`+origin+`","body":`+m+`}`), time.Time{}, nil)
	p.take(e)
	return p, env
}

// A message taken from an answer and shown again gives the same HTML,
// tools, status and message, with no request, no event and nothing said.
func TestAMessageRoundTripsIntoAnElementWithTheSameHTML(t *testing.T) {
	chunk := func(s string) string { return "data: " + s + "\n\n" }
	answers := map[string]string{
		"complete with a tool call": chunk(`{"choices":[{"index":0,"delta":{"content":"# Weather\n\n- *sunny*\n- 24 °C\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"}}]}`) +
			chunk(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lyon\"}"}}]}}]}`) +
			chunk(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`) + "data: [DONE]\n\n",
		"cut off": chunk(`{"choices":[{"index":0,"delta":{"content":"It was going"}}]}`),
	}
	for name, data := range answers {
		t.Run(name, func(t *testing.T) {
			live, msg := streamed(t, []byte(data))
			again, env := shown(t, msg)
			require.Empty(t, env.opened, "no request")
			require.Equal(t, live.screen.settled, again.screen.settled, "the same HTML as streamed")
			require.Equal(t, live.screen.tools, again.screen.tools)
			require.Equal(t, live.text, again.text)
			require.Equal(t, live.state, again.state)
			require.Equal(t, live.end.Notice, again.end.Notice, "a cut-off answer keeps its notice")
			require.False(t, again.end.Retry, "nothing to retry: there is no request")
			require.Empty(t, again.events, "no event")
			require.Empty(t, again.screen.announced, "nothing said")
			require.Empty(t, again.screen.status)
			require.JSONEq(t, msg, again.end.Message, "the message round-trips")
		})
	}
}

func TestShowTakesEachStoredStatus(t *testing.T) {
	for _, tc := range []struct{ status, notice string }{
		{"complete", ""}, {"stopped", "Stopped."}, {"incomplete", "The answer ended before the model finished."}, {"failed", "Something went wrong."},
	} {
		p, _ := shown(t, `{"role":"assistant","content":"Some *text*","status":"`+tc.status+`"}`)
		require.Equal(t, tc.status, p.state)
		require.Equal(t, "Some *text*", p.text)
		if tc.notice == "" {
			require.Empty(t, p.end.Notice)
		} else {
			require.Contains(t, p.end.Notice, tc.notice)
		}
		var m message
		require.NoError(t, json.Unmarshal([]byte(p.end.Message), &m))
		require.Equal(t, tc.status != "complete", m.Incomplete, tc.status)
	}
	p, _ := shown(t, `{"content":"just markdown"}`)
	require.Equal(t, "complete", p.state, "no status is a complete answer")

	for _, bad := range []string{`{"role":"assistant"}`, `{"content":5}`, `"text"`, `[]`} {
		p, env := shown(t, bad)
		require.Equal(t, []string{"trickle-error"}, p.events, bad)
		require.Empty(t, env.opened)
	}
}

// Go leaves an ended answer's content out of its message only where the
// page's text, the sum of the text updates as JSON.parse reads each, is
// that content (AppendEndMessage). A plain-text body full of multibyte
// characters is cut at every byte, a frame taken at the cut: the message
// the page puts together (element_test's page, as answer.js) always holds
// the answer's text, and the content is left out wherever the text
// updates were whole.
func TestTheEndedMessagesContentIsThePagesTextAtEveryCut(t *testing.T) {
	body := "Grüße — 日本語 🙂 naïve café.\n\n" + strings.Repeat("é🙂ß", 4) + "\n"
	head := ResponseHead("basic", func(name string) string {
		if strings.EqualFold(name, "Content-Type") {
			return "text/plain; charset=utf-8"
		}
		return ""
	})
	left, kept := 0, 0
	for cut := 1; cut < len(body); cut++ {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "worker")
		e.Do(askCmd(t, 1, ""), env.now, nil)
		gen := env.conn().Gen
		e.Response(gen, Response{OK: true, Head: head})
		env.arrive(gen, []byte(body[:cut]))
		p.frame(e)
		env.arrive(gen, []byte(body[cut:]))
		e.Ended(gen, End{Kind: EndDone})
		p.frame(e)
		require.NotNil(t, p.end, "cut at %d", cut)
		var m message
		require.NoError(t, json.Unmarshal([]byte(p.end.Message), &m))
		require.Equal(t, jsonRoundTrip(t, e.sess.Text()), m.Content, "cut at %d: the message's content is the answer's text", cut)
		require.Equal(t, body, m.Content, "cut at %d", cut)
		if e.textSplit {
			kept++
		} else {
			left++
		}
	}
	t.Logf("content left out at %d cuts, sent at %d", left, kept)
	require.Positive(t, left, "whole text updates leave the content out")
}

// A model that cuts a character between two chunks (raw bytes in its
// JSON strings): the decoder makes each piece valid (replacement
// characters) before it reaches the answer's text, so the page's text,
// the sum of the text updates, is still the content the message stands
// for, left out or not. The guard for a text update that is not valid
// UTF-8 by itself (Element.textSplit) is for any path that would let such
// a piece through.
func TestAModelThatCutsACharacterStillGetsThePagesTextAsItsContent(t *testing.T) {
	for _, ch := range []string{"é", "日", "🙂"} {
		for cut := 1; cut < len(ch); cut++ {
			env, p := newFakeEnv(t), newPage(t)
			e := NewElement(1, env, env.clock(), nil, "worker")
			e.Do(askCmd(t, 1, ""), env.now, nil)
			gen := env.conn().Gen
			e.Response(gen, Response{OK: true})
			chunk := func(content string) []byte {
				return []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + content + `"}}]}` + "\n\n")
			}
			env.arrive(gen, chunk("caf"+ch[:cut]))
			p.frame(e)
			env.arrive(gen, append(chunk(ch[cut:]+" ok"), "data: [DONE]\n\n"...))
			p.frame(e)
			require.NotNil(t, p.end)
			var m message
			require.NoError(t, json.Unmarshal([]byte(p.end.Message), &m))
			require.Equal(t, jsonRoundTrip(t, e.sess.Text()), m.Content, "%q cut at %d: the message is the answer's text", ch, cut)
			require.Equal(t, p.text, m.Content, "%q cut at %d: and the page's", ch, cut)
			require.True(t, strings.HasPrefix(m.Content, "caf") && strings.HasSuffix(m.Content, " ok"), "%q", m.Content)
		}
	}
}

// The guard itself: a text update that cuts a character (here made so by
// hand, as a path that let a raw piece through would) marks the text
// split, and the message then carries its content.
func TestATextUpdateThatCutsACharacterPutsTheContentBackInTheMessage(t *testing.T) {
	env, p := newFakeEnv(t), newPage(t)
	e := NewElement(1, env, env.clock(), nil, "worker")
	e.Do(askCmd(t, 1, ""), env.now, nil)
	gen := env.conn().Gen
	e.Response(gen, Response{OK: true})
	env.arrive(gen, []byte(`data: {"choices":[{"index":0,"delta":{"content":"café"}}]}`+"\n\n"))
	p.frame(e)
	require.False(t, e.textSplit)
	e.textSent-- // the next text update starts inside é
	env.arrive(gen, []byte(`data: {"choices":[{"index":0,"delta":{"content":" ok"}}]}`+"\n\ndata: [DONE]\n\n"))
	e.Frame()
	var end *protocol.Ending
	for _, u := range e.TakeUpdates(nil) {
		if u.End != nil {
			end = u.End
		}
	}
	require.True(t, e.textSplit)
	require.NotNil(t, end)
	require.Contains(t, end.Message, `"content":"café ok"`, "Go sends the content it cannot vouch the page has")
}
