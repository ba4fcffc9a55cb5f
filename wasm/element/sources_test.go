package element

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// citedEnd plays a recording through a session in one write and returns
// the final patch and what the status region ends up saying.
func citedEnd(t *testing.T, file string, policy render.Policy) (protocol.Patch, string, *Session) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "stream", "testdata", file))
	require.NoError(t, err)
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s := newSession(t, Config{Policy: policy, Now: clock.Now})
	s.Begin()
	require.NoError(t, s.Write(data))
	s.End(nil)
	var final protocol.Patch
	status := ""
	for i := 0; ; i++ {
		p := s.Frame()
		if p.Final {
			final = p
		} else {
			require.False(t, p.SourcesChanged || p.HasMarked, "the sources come once, in the final frame")
		}
		if p.StatusChanged {
			status = p.Status
		}
		due, ok := s.NextAnnouncement()
		if !ok && final.Final {
			break
		}
		if ok {
			clock.now = due
		}
		require.Less(t, i, 1000)
	}
	return final, status, s
}

func TestThreeProvidersShowTheSameNumberedSources(t *testing.T) {
	var want protocol.Patch
	for i, file := range []string{"responses-citations.sse", "anthropic-citations.sse", "gemini-citations.sse"} {
		p, status, s := citedEnd(t, file, render.Policy{})
		require.True(t, p.SourcesChanged, file)
		require.Equal(t, `<p data-trickle="sources-heading">Sources</p><ol data-trickle="sources-list">`+
			`<li data-trickle="source" data-n="1"><a href="https://tea.example.org/brewing-green-tea" rel="`+render.Rel+`" target="_blank">Brewing green tea</a> <span data-trickle="source-host">tea.example.org</span></li>`+
			`<li data-trickle="source" data-n="2"><a href="https://journal.example.com/catechins" rel="`+render.Rel+`" target="_blank">Catechins and bitterness</a> <span data-trickle="source-host">journal.example.com</span></li></ol>`,
			p.Sources, file)
		require.True(t, p.HasMarked, file)
		require.Equal(t, `<p dir="auto">Green tea tastes best brewed at 70–80 °C for two to three minutes.`+
			`<a href="https://tea.example.org/brewing-green-tea" rel="`+render.Rel+`">[1]</a> Boiling water draws out catechins, which make it bitter.`+
			`<a href="https://journal.example.com/catechins" rel="`+render.Rel+`">[2]</a></p>`+"\n", p.Marked, file)
		require.Equal(t, "Answer complete. Sources listed after the answer: 2.", status, file)
		require.Equal(t, s.Outcome().Spoken()+" Sources listed after the answer: 2.", status)
		if i == 0 {
			want = p
			continue
		}
		require.Equal(t, want.Sources, p.Sources)
		require.Equal(t, want.Marked, p.Marked)
	}
}

func TestAnAnswerWithoutSourcesHasNoSourcesPart(t *testing.T) {
	p, status, _ := citedEnd(t, "openai-text.sse", render.Policy{})
	require.False(t, p.SourcesChanged)
	require.False(t, p.HasMarked)
	require.Equal(t, "Answer complete.", status)
}

func TestSourceLinksFollowTheAnswersLinkPolicy(t *testing.T) {
	srcs := []stream.Source{
		{URL: "javascript:alert(1)", Title: "Click me"},
		{URL: "https://ok.example/a", Title: `<b>"quoted"</b>`},
		{Title: "The tea guide", Filename: "guide.pdf", MediaType: "application/pdf"},
		{URL: "ftp://files.example/x"},
	}
	html := SourcesHTML(srcs, render.Policy{}, nil)
	require.NotContains(t, html, "javascript:", "a refused URL is no link, and not written at all")
	require.Contains(t, html, `<span data-trickle="source-title">Click me</span>`)
	require.Contains(t, html, `<a href="https://ok.example/a" rel="noopener noreferrer nofollow ugc" target="_blank">&lt;b&gt;&#34;quoted&#34;&lt;/b&gt;</a>`)
	require.Contains(t, html, `<span data-trickle="source-title">The tea guide</span>`)
	require.Contains(t, html, `<span data-trickle="source-title">ftp://files.example/x</span>`, "ftp is not in the default schemes")
	require.Contains(t, SourcesHTML(srcs[3:], render.Policy{LinkSchemes: []string{"ftp"}}, nil), `<a href="ftp://files.example/x"`,
		"the page's schemes apply")
	require.Equal(t, 4, strings.Count(html, `data-trickle="source"`))
	french := English
	french.Sources = "Sources citées"
	require.Contains(t, SourcesHTML(srcs, render.Policy{}, &french), "Sources citées")
}

func TestAStoredAnswerShowsItsSourcesAgain(t *testing.T) {
	live, _, s := citedEnd(t, "anthropic-citations.sse", render.Policy{})
	msg := string(AppendMessage(nil, s.Answer()))
	require.Contains(t, msg, `"sources":[{"url":"https://tea.example.org/brewing-green-tea","title":"Brewing green tea"},`)
	require.Contains(t, msg, `"citations":[{"source":1,"end":69,"quote":"Brew green tea at 70 to 80 °C for 2–3 minutes."},`)
	m, err := ParseStored(msg)
	require.NoError(t, err)
	shown := newSession(t, Config{})
	shown.Show(m)
	var final protocol.Patch
	for i := 0; i < 100 && !final.Final; i++ {
		final = shown.Frame()
	}
	require.True(t, final.Final)
	require.Equal(t, live.Sources, final.Sources)
	require.Equal(t, live.Marked, final.Marked)
	require.Equal(t, msg, string(AppendMessage(nil, shown.Answer())), "the message survives the round trip")
}

func TestTheMessageCarriesWhatTheBackendWaitsOnTheReaderFor(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"ai-sdk7-approval.sse", `"approvals":[{"id":"approval_1","tool_call_id":"call_book_1","reason":"tool_approval","message":null}]`},
		{"ag-ui-interrupt.sse", `"approvals":[{"id":"int_1","tool_call_id":"call_book_1","reason":"tool_approval","message":"Book a table for 2 at Chez Nous?"}]`},
	} {
		_, _, s := citedEnd(t, tc.file, render.Policy{})
		require.Contains(t, string(AppendMessage(nil, s.Answer())), tc.want, tc.file)
	}
	_, _, s := citedEnd(t, "openai-text.sse", render.Policy{})
	require.NotContains(t, string(AppendMessage(nil, s.Answer())), "approvals", "none asked, none said")
}
