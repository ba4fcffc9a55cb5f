package element

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func (f *fakeEnv) idleTimers() []armed {
	var ts []armed
	for _, a := range f.timers {
		if a.timer.Kind == TimerIdle {
			ts = append(ts, a)
		}
	}
	return ts
}

// The idle-timeout bounds a silent connection: the bound counts from the
// last byte, an answer that got nothing for it ends incomplete with its
// text kept and says why (the notice, the status a screen reader hears),
// and its call settles; 0 turns the bound off, the default is 60 s, and a
// value that is not a number of seconds fails the call naming the
// attribute.
func TestAnAnswerWhoseConnectionGoesSilentEndsIncompleteAfterTheIdleTimeout(t *testing.T) {
	ask := func(t *testing.T, idle string) (*fakeEnv, *page, *Element, int) {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "worker")
		extra := ""
		if idle != "" {
			extra = `,"idle":"` + idle + `"`
		}
		e.Do(askCmd(t, 1, extra), time.Time{}, nil)
		gen := env.conn().Gen
		require.True(t, e.Response(gen, Response{OK: true, StreamID: "s"}))
		return env, p, e, gen
	}

	t.Run("silence after some text", func(t *testing.T) {
		env, p, e, gen := ask(t, "2")
		require.Len(t, env.idleTimers(), 1)
		require.Equal(t, 2*time.Second, env.idleTimers()[0].after, "armed when the connection opened")

		env.now = env.now.Add(time.Second)
		env.arrive(gen, openAIChunks(t, "Half an answer")[:70])
		p.frame(e)
		require.Equal(t, "streaming", p.state)
		text := p.text
		require.NotEmpty(t, text)

		env.now = env.now.Add(time.Second)
		e.Timer(env.idleTimers()[0].timer, false)
		p.frame(e)
		require.Equal(t, "streaming", p.state, "a byte came a second ago: the bound counts from it")
		require.Len(t, env.idleTimers(), 2)
		require.Equal(t, time.Second, env.idleTimers()[1].after, "armed again for the rest of the bound")

		env.now = env.now.Add(time.Second)
		e.Timer(env.idleTimers()[1].timer, false)
		p.frame(e)
		require.Equal(t, "incomplete", p.state)
		require.Equal(t, text, p.text, "the text is kept")
		require.Equal(t, map[int]string{1: "incomplete"}, p.resolved, "ask() settles")
		require.Equal(t, English.Reasons[ReasonIdle], p.end.Notice)
		require.True(t, p.end.Retry)
		require.Contains(t, p.end.Detail, "idle-timeout")
		require.Contains(t, p.end.Detail, origin+"/v1/chat/completions")
		require.Contains(t, env.closed, "1", "the connection is closed")
		for _, tm := range env.retryTimers() {
			e.Timer(tm, false)
		}
		require.Len(t, env.opened, 1, "not resumed")
	})

	t.Run("silence before the first byte", func(t *testing.T) {
		env, p, e, _ := ask(t, "0.5")
		env.now = env.now.Add(500 * time.Millisecond)
		e.Timer(env.idleTimers()[0].timer, false)
		p.frame(e)
		require.Equal(t, "incomplete", p.state)
		require.Equal(t, map[int]string{1: "incomplete"}, p.resolved)
	})

	t.Run("a stale timer does nothing", func(t *testing.T) {
		env, p, e, gen := ask(t, "1")
		env.arrive(gen, openAIChunks(t, "Done."))
		p.frame(e)
		require.Equal(t, "complete", p.state)
		env.now = env.now.Add(time.Hour)
		e.Timer(env.idleTimers()[0].timer, false)
		p.frame(e)
		require.Equal(t, "complete", p.state)
	})

	t.Run("0 turns it off; the default is 60 s", func(t *testing.T) {
		env, _, _, _ := ask(t, "0")
		require.Empty(t, env.idleTimers())
		env, _, _, _ = ask(t, "")
		require.Equal(t, DefaultIdleTimeout, env.idleTimers()[0].after)
		require.Equal(t, 60*time.Second, DefaultIdleTimeout)
	})

	for _, bad := range []string{"soon", "-1", "1e400", "NaN"} {
		t.Run("a bad value fails the call: "+bad, func(t *testing.T) {
			env, p := newFakeEnv(t), newPage(t)
			e := NewElement(1, env, env.clock(), nil, "worker")
			e.Do(askCmd(t, 1, `,"idle":"`+bad+`"`), time.Time{}, nil)
			p.take(e)
			require.Empty(t, env.opened)
			require.Equal(t, map[int]string{1: "failed"}, p.resolved)
			require.True(t, strings.Contains(p.details[len(p.details)-1], "idle-timeout"), p.details)
		})
	}
}
