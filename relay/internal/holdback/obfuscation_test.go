package holdback

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

func TestNormalizeFoldsWhatRendersAlikeAndDropsWhatRendersAsNothing(t *testing.T) {
	for in, want := range map[string]string{
		"forbidden":             "forbidden",
		"f\u200borbidden":       "forbidden", // zero-width space
		"for\u00adbid\u200dden": "forbidden", // soft hyphen, zero-width joiner
		"\ufefffor\u2060bidden": "forbidden", // byte order mark, word joiner
		"ｆｏｒｂｉｄｄｅｎ":             "forbidden", // fullwidth letters
		"ﬁne":                   "fine",      // a ligature
		"for\u202ebidden":       "forbidden", // a bidi override
		"cafe\u0301":            "café",      // composed
		"Ｆｏｒ\u200bｂｉｄ\u00adｄｅｎ, 42!": "For, 42!"[:0] + "Forbidden, 42!",
	} {
		require.Equal(t, want, Normalize(in), "%q", in)
	}
}

// Issue 36: hold-back checked the markdown source, so a word list missed
// for**bid**den, entities, zero-width characters, soft hyphens and
// fullwidth letters. The checker now reads the rendered text, normalised.
func TestAnObfuscatedWordIsCaught(t *testing.T) {
	for _, word := range []string{
		"forbidden", "FORBIDDEN", "for**bid**den", "*for*_bidden_", "&#102;orbidden", "for&shy;bidden",
		"f\u200borbidden", "for\u00adbidden", "ｆｏｒｂｉｄｄｅｎ", "ｆｏｒ\u200bbidden",
	} {
		t.Run(word, func(t *testing.T) {
			g, err := New(Settings{Sim: "block=forbidden"}, nil, quiet())
			require.NoError(t, err)
			l, ended, _ := newLog(t, g, "openai")
			for _, tok := range []string{"All fine. ", "Then " + word, " words. More."} {
				l.Emit("", delta(tok), true)
			}
			l.End(streamlog.StateComplete, "")
			require.Equal(t, streamlog.StateWithheld, <-ended)
			texts, status := logged(t, l)
			require.Equal(t, []string{"All fine."}, texts)
			require.Equal(t, "withheld", status)
		})
	}
}

// The checker is asked with the rendered, normalised text and the
// source.
func TestTheCheckerGetsTheRenderedTextAndTheSource(t *testing.T) {
	c := &asked{verdict: func(Request) (bool, error) { return true, nil }}
	l, ended, _ := newLog(t, gatesWith(c, "", nil), "openai")
	l.Emit("", delta("It is **ｎｏｔ** f\u200bine."), true)
	l.End(streamlog.StateComplete, "")
	require.Equal(t, streamlog.StateComplete, <-ended)
	require.Len(t, c.requests, 1)
	require.Equal(t, "It is not fine.", c.requests[0].Text)
	require.Equal(t, "It is **ｎｏｔ** f\u200bine.", c.requests[0].Sentence)
}

// Issue 36: a checker answering {} counted as an error (so
// --hold-back-on-error allow let the text out); an answer without allow
// is a block.
func TestACheckerReplyWithoutAllowBlocksEvenWhenErrorsAllow(t *testing.T) {
	for _, answer := range []string{`{}`, `{"allowed":true}`, `{"allow":null}`} {
		t.Run(answer, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				io.WriteString(w, answer)
			}))
			defer srv.Close()
			var verdicts []string
			g, err := New(Settings{URL: srv.URL, Client: srv.Client(), OnError: OnErrorAllow},
				func(v string, _ time.Duration) { verdicts = append(verdicts, v) }, quiet())
			require.NoError(t, err)
			l, ended, _ := newLog(t, g, "openai")
			l.Emit("", delta("One. Two."), true)
			l.End(streamlog.StateComplete, "")
			require.Equal(t, streamlog.StateWithheld, <-ended)
			require.Equal(t, []string{string(VerdictBlock)}, verdicts, "counted as a block")
		})
	}
}

// Issue 36: withheld tokens were counted in /info's usage. A withheld
// answer's usage is what was released, not what the model reported.
func TestAWithheldAnswerCountsOnlyTheReleasedTokens(t *testing.T) {
	g, err := New(Settings{Sim: "block=secret"}, nil, quiet())
	require.NoError(t, err)
	l, ended, _ := newLog(t, g, "openai")
	l.EstimateTokens()
	l.Emit("", delta("Fine. "), true)
	l.Emit("", delta("The secret is 42. "), true)
	l.ReportTokens(50) // the model's usage: every token it generated
	l.End(streamlog.StateComplete, "")
	require.Equal(t, streamlog.StateWithheld, <-ended)
	require.Equal(t, 1, l.Info().Usage.CompletionTokens, "one event released")
}

// A table's cells and a code block are summarised in the rendered text a
// screen reader gets: the simulated checker reads their source too,
// without its emphasis markers and entities.
func TestAnObfuscatedWordInATableOrCodeIsCaught(t *testing.T) {
	for _, answer := range []string{
		"All fine.\n\n| a | b |\n|---|---|\n| x | for**bid**den |\n",
		"All fine.\n\n| a | b |\n|---|---|\n| x | &#102;or\u200bbidden |\n",
		"All fine.\n\n```\nｆｏｒｂｉｄｄｅｎ\n```\n",
	} {
		g, err := New(Settings{Sim: "block=forbidden"}, nil, quiet())
		require.NoError(t, err)
		l, ended, _ := newLog(t, g, "openai")
		l.Emit("", delta(answer), true)
		l.End(streamlog.StateComplete, "")
		require.Equal(t, streamlog.StateWithheld, <-ended, "%q", answer)
	}
}
