package element

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

func TestEveryStringHasOneKeyAndEnglishForIt(t *testing.T) {
	keys := StringKeys()
	require.Len(t, keys, 13+int(reasonCount-1)+len(metricKeys))
	for i, k := range keys {
		require.False(t, slices.Contains(keys[:i], k), "%s twice", k)
		v, ok := English.Get(k)
		require.True(t, ok, k)
		require.NotEmpty(t, v, "%s has English", k)
	}
	_, ok := English.Get("copy")
	require.False(t, ok, "the page's own words are not Go's")
}

// french replaces every key: nothing English may be left.
func french() map[string]string {
	m := map[string]string{"copy": "Copier", "no such key": "ignored"}
	for _, k := range StringKeys() {
		m[k] = "«" + k + "»"
	}
	m["calling"] = "Appel de {name}"
	m["refused"] = "Le serveur a refusé la requête ({status})."
	return m
}

func TestThePagesStringsReplaceEachKeyAndOnlyThose(t *testing.T) {
	w := English.With(map[string]string{"complete": "Réponse terminée.", "refused": "Refusé ({status}).", "metricBytes": "Octets", "failed": "  ", "copy": "Copier"})
	require.Equal(t, "Réponse terminée.", w.Complete)
	require.Equal(t, "Refusé (403).", w.Reason(ReasonRefused, 403))
	require.Equal(t, "Octets", w.Metrics[5])
	require.Equal(t, English.Failed, w.Failed, "an empty word keeps the built-in one: a status is never silence")
	require.Equal(t, English.Responding, w.Responding, "a key the page did not give stays English")
	require.Equal(t, "Answer complete.", English.Complete, "English itself is untouched")

	all := English.With(french())
	for _, k := range StringKeys() {
		v, _ := all.Get(k)
		require.NotEqual(t, func() string { e, _ := English.Get(k); return e }(), v, "%s replaced", k)
	}
}

func TestTheAskCommandCarriesThePagesStringsToTheSession(t *testing.T) {
	c, err := ParseCommand(`{"t":"ask","id":1,"n":1,"url":"http://x/v1/chat/completions","prompt":"hi","strings":{"complete":"Fertig.","stalled":"Warte…","bad":1,"copy":"Kopieren"}}`)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"complete": "Fertig.", "stalled": "Warte…", "copy": "Kopieren"}, c.Strings, "a value that is no string is skipped")
	cfg := c.Config()
	require.Equal(t, "Fertig.", cfg.Words.Complete)
	require.Equal(t, "Warte…", cfg.Words.Stalled)

	c, err = ParseCommand(`{"t":"ask","id":1,"prompt":"hi"}`)
	require.NoError(t, err)
	require.Nil(t, c.Config().Words, "no strings: the session's English")
}

// Every word a Session shows or speaks comes from its strings: the start
// and end statuses, the stall notice, the tool call, the notice and the
// metrics' names.
func TestASessionShowsAndSpeaksOnlyThePagesWords(t *testing.T) {
	w := English.With(french())
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newSession(t, Config{Words: &w, Now: clock.Now})
	sc := &screen{words: &w}
	var said []string
	frame := func() {
		p := s.Frame()
		sc.apply(t, p)
		if p.StatusChanged && p.Status != "" {
			said = append(said, p.Status)
		}
	}
	require.NoError(t, s.Write([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"","arguments":"{"}}]}}]}`+"\n\n")))
	require.NoError(t, s.Write([]byte(text("Hello."))))
	frame()
	require.Equal(t, "«responding»", sc.shown)
	require.Contains(t, sc.tools, "Appel de <code>«aTool»</code>…")
	clock.now = clock.now.Add(time.Minute) // silence: the stall notice
	frame()
	s.End(nil) // no end marker: incomplete
	frame()
	for {
		due, ok := s.NextAnnouncement()
		if !ok {
			break
		}
		clock.now = due
		frame()
	}
	require.Equal(t, []string{"«responding»", "«stalled»", "«incomplete» «cutOff»"}, said)
	require.Equal(t, "«incomplete»", sc.shown)
	var u protocol.Update
	Finish(&u, s.Outcome(), s.Metrics(), true, string(AppendMessage(nil, s.Answer())))
	require.Equal(t, "«cutOff»", u.End.Notice)
	for i, row := range u.End.Rows {
		require.Equal(t, "«"+metricKeys[i]+"»", row[0])
	}

	// And the HTTP sentence fills in its status.
	s = newSession(t, Config{Words: &w})
	s.End(HTTPError(401, []byte(htmlBody)))
	s.Frame()
	require.Equal(t, "Le serveur a refusé la requête (401).", s.Outcome().Notice())
	require.True(t, strings.HasPrefix(s.Outcome().Spoken(), "«failed» "))
	require.Equal(t, stream.Failed, s.Status())
}

func TestAToolCallSaysItsNameInThePagesWords(t *testing.T) {
	w := English.With(map[string]string{"calling": "<Calling> {name}!"})
	got := ToolsHTML([]stream.ToolCall{{Name: "get_weather"}}, &w)
	require.Equal(t, `<div data-trickle="tool"><p>&lt;Calling&gt; <code>get_weather</code>!…</p></div>`, got, "the page's words are text, escaped")
	w = English.With(map[string]string{"calling": "Aufruf"})
	require.Equal(t, `<div data-trickle="tool"><p>Aufruf <code>x</code>…</p></div>`, ToolsHTML([]stream.ToolCall{{Name: "x"}}, &w), "without {name} the name follows")
}
