package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

// replayed is the JSON of a replay with the render and a11y fields.
type replayed struct {
	Status        string               `json:"status"`
	Text          string               `json:"text"`
	HTML          *string              `json:"html"`
	Announcements []replayAnnouncement `json:"announcements"`
	Frames        []replayFrame        `json:"frames"`
}

func replayJSON(t *testing.T, stdin string, args ...string) replayed {
	t.Helper()
	code, out, stderr := trickle(t, stdin, append([]string{"replay"}, args...)...)
	require.Equal(t, 0, code, stderr)
	var r replayed
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	return r
}

func TestReplayHTMLIsTheOneShotRenderOfTheText(t *testing.T) {
	for _, f := range recordingFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := replayJSON(t, "", f)
			require.NotNil(t, r.HTML)
			require.Equal(t, oracle(t, r.Text), *r.HTML)
		})
	}
}

func TestReplayFramesAddUpToTheHTMLAndDoNotDependOnTheCut(t *testing.T) {
	for _, f := range recordingFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := replayJSON(t, "", "--frames", "--pace", "30", f)
			require.NotEmpty(t, r.Frames, "at least the final frame")
			var appended strings.Builder
			last := -1.0
			for i, fr := range r.Frames {
				appended.WriteString(fr.Append)
				require.GreaterOrEqual(t, fr.AtMS, last, "frame %d goes back in time", i)
				last = fr.AtMS
				require.Equal(t, i == len(r.Frames)-1, fr.Final, "only the last frame is final")
				if !fr.Final {
					// What is on screen mid-stream is the settled HTML plus the tail.
					require.NotEqual(t, "", appended.String()+fr.Tail)
				}
			}
			require.Equal(t, "", r.Frames[len(r.Frames)-1].Tail)
			require.Equal(t, *r.HTML, appended.String())
			for _, n := range []string{"1", "7"} {
				require.Equal(t, r, replayJSON(t, "", "--frames", "--pace", "30", "--chunk", n, f), "--chunk %s", n)
			}
		})
	}
}

func TestReplayPaceSpreadsTheAnswerOverSimulatedTime(t *testing.T) {
	f := filepath.Join(recordingsDir, "openai-text.sse")
	fast := replayJSON(t, "", f)
	slow := replayJSON(t, "", "--pace", "10", "--frames", f)
	require.Equal(t, replayJSON(t, "", "--pace", "10", "--frames", f), slow, "deterministic")

	lastWords := func(r replayed) float64 {
		for i := len(r.Announcements) - 1; i >= 0; i-- {
			if !r.Announcements[i].Status {
				return r.Announcements[i].AtMS
			}
		}
		t.Fatal("no content announced")
		return 0
	}
	// 11 text deltas at 10 per second: the last arrives after 1 s.
	require.GreaterOrEqual(t, lastWords(slow), 1000.0)
	require.Less(t, lastWords(fast), 100.0)
	require.Greater(t, len(slow.Frames), len(fast.Frames), "a slow stream is seen in more frames")
	for i := 1; i < len(slow.Announcements); i++ {
		require.GreaterOrEqual(t, slow.Announcements[i].AtMS, slow.Announcements[i-1].AtMS)
	}
}

func TestReplayAnnouncementsBeginAndEndWithTheStatus(t *testing.T) {
	cases := []struct {
		file, final string
	}{
		{"anthropic-text.sse", a11y.StatusComplete},
		{"openai-truncated.sse", a11y.StatusIncomplete},
		{"relay-stopped.sse", a11y.StatusStopped},
		{"anthropic-overloaded.sse", "Answer failed"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			r := replayJSON(t, "", "--pace", "50", filepath.Join(recordingsDir, c.file))
			require.GreaterOrEqual(t, len(r.Announcements), 2)
			first, last := r.Announcements[0], r.Announcements[len(r.Announcements)-1]
			require.Equal(t, a11y.StatusResponding, first.Text)
			require.True(t, first.Status)
			require.True(t, last.Status)
			require.Contains(t, last.Text, c.final)
			for _, a := range r.Announcements {
				require.Zero(t, a11y.MarkdownChars(a.Text), "markdown read out: %q", a.Text)
			}
		})
	}
}

// `trickle replay --pace 20` once gave the last sentence and "Answer
// complete." the same at_ms; a screen reader then sometimes spoke the
// status first. The status follows the last words by the announcer's
// spacing, whatever the pace, the cut and the mode.
func TestReplayEndStatusFollowsTheLastSentenceByTheAnnouncersSpacing(t *testing.T) {
	for _, f := range recordingFiles(t) {
		for _, args := range [][]string{{"--pace", "20"}, {}, {"--pace", "200", "--chunk", "3"}, {"--announce", "complete"}} {
			t.Run(filepath.Base(f)+" "+strings.Join(args, " "), func(t *testing.T) {
				r := replayJSON(t, "", append(args, f)...)
				as := r.Announcements
				require.NotEmpty(t, as)
				end := as[len(as)-1]
				require.True(t, end.Status, "the end status is said last")
				ends := 0
				for _, a := range as {
					if a.Status && a.Text != a11y.StatusResponding {
						ends++
					}
				}
				require.Equal(t, 1, ends, "one end status")
				for i := len(as) - 2; i >= 0; i-- {
					if !as[i].Status {
						require.GreaterOrEqual(t, end.AtMS-as[i].AtMS, float64(a11y.MinGap/time.Millisecond),
							"%q at %v ms, then %q at %v ms", as[i].Text, as[i].AtMS, end.Text, end.AtMS)
						break
					}
				}
			})
		}
	}
}

func TestReplayAnnounceOffSaysOnlyTheStatus(t *testing.T) {
	r := replayJSON(t, "", "--announce", "off", filepath.Join(recordingsDir, "anthropic-text.sse"))
	require.NotEmpty(t, r.Announcements)
	for _, a := range r.Announcements {
		require.True(t, a.Status, "content announced in off mode: %q", a.Text)
	}
}

func TestReplayOfALongAnswerRendersAndAnnouncesIt(t *testing.T) {
	md, err := os.ReadFile("../../relay/sim/answers/sample-20k.md")
	require.NoError(t, err, "the relay's canned answer is part of the repository")
	// A plain stream of ~4-byte tokens, as a model would send it.
	var b strings.Builder
	text := string(md)
	for i := 0; i < len(text); {
		j := min(i+4, len(text))
		for j < len(text) && !isRuneStart(text[j]) {
			j++
		}
		tok, _ := json.Marshal(text[i:j])
		fmt.Fprintf(&b, "data: {\"delta\":%s}\n\n", tok)
		i = j
	}
	b.WriteString("data: [DONE]\n\n")
	r := replayJSON(t, b.String(), "--pace", "200", "--frames", "-")
	require.Equal(t, "complete", r.Status)
	require.Equal(t, text, r.Text)
	require.Equal(t, oracle(t, text), *r.HTML)
	require.Greater(t, len(r.Frames), 10)
	// Announcements go out in time order, many of them, and the last one
	// says the answer is complete.
	var content []string
	for i, a := range r.Announcements {
		if i > 0 {
			require.GreaterOrEqual(t, a.AtMS, r.Announcements[i-1].AtMS)
		}
		if !a.Status {
			content = append(content, a.Text)
		}
	}
	require.Greater(t, len(content), 5)
	require.Equal(t, a11y.StatusComplete, r.Announcements[len(r.Announcements)-1].Text)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func TestReplayRejectsABadPaceOrMode(t *testing.T) {
	f := filepath.Join(recordingsDir, "plain.sse")
	for _, args := range [][]string{{"--pace", "0", f}, {"--pace", "-3", f}, {"--pace", "NaN", f}, {"--announce", "loud", f}} {
		code, _, stderr := trickle(t, "", append([]string{"replay"}, args...)...)
		require.Equal(t, 2, code, "%v", args)
		require.NotEmpty(t, stderr)
	}
}

// oracle is render.Convert with the widget's options: what replay's html
// must be.
func oracle(t testing.TB, text string) string {
	t.Helper()
	html, err := render.Convert(text, element.RenderOptions(render.Policy{})...)
	require.NoError(t, err)
	return html
}
