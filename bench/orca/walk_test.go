package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// walkSample is what Orca 43's debug log held for part of a walk in the
// lab (2026-12-06, sticky focus mode), the other entries between the
// utterances cut: Shift+Tab onto the newest turn, ArrowUp twice, Home,
// End, Escape back to the composer. Each key interrupts Orca first.
const walkSample = `06:43:28.950000 - DEFAULT: Interrupting presentation
06:43:28.951000 - SPEECH OUTPUT: 'left shift '{'established': False}
06:43:28.970000 - SPEECH OUTPUT: 'The assistant said, 6 of 6.'{'established': False}
06:43:28.970900 - SPEECH OUTPUT: 'Glad to help with your parrot questions.'{'established': False}
06:43:28.971000 - SPEECH DISPATCHER: Speaking '<speak>Glad to help with your parrot questions.</speak>'
06:43:32.780000 - DEFAULT: Interrupting presentation
06:43:32.826641 - SPEECH OUTPUT: 'You said, 5 of 6.'{'established': False}
06:43:32.827435 - SPEECH OUTPUT: 'Thanks, that helps.'{'established': False}
06:43:34.441996 - DEFAULT: Interrupting presentation
06:43:34.472967 - SPEECH OUTPUT: 'The assistant said, 4 of 6.'{'established': False}
06:43:34.473878 - SPEECH OUTPUT: 'A grey commonly lives forty to sixty years in captivity.'{'established': False}
06:43:36.101745 - DEFAULT: Interrupting presentation
06:43:36.135574 - SPEECH OUTPUT: 'You said, 1 of 6.'{'established': False}
06:43:36.136341 - SPEECH OUTPUT: 'Which parrots learn words fastest?'{'established': False}
06:43:37.760638 - DEFAULT: Interrupting presentation
06:43:37.788477 - SPEECH OUTPUT: 'The assistant said, 6 of 6.'{'established': False}
06:43:37.789607 - SPEECH OUTPUT: 'Glad to help with your parrot questions.'{'established': False}
06:43:39.420997 - DEFAULT: Interrupting presentation
06:43:39.421500 - SPEECH OUTPUT: 'escape '{'established': False}
06:43:39.453504 - SPEECH OUTPUT: 'leaving feed.'{'established': False}
06:43:39.454000 - SPEECH OUTPUT: 'form'{'established': False}
06:43:39.455000 - SPEECH OUTPUT: 'Message entry.'{'established': False}
`

func TestCheckWalkHearsEachTurnLabelThenText(t *testing.T) {
	day := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	at := func(clock string) time.Time {
		c, err := time.Parse("15:04:05.000", clock)
		require.NoError(t, err)
		return day.Add(time.Duration(c.Hour())*time.Hour + time.Duration(c.Minute())*time.Minute + time.Duration(c.Second())*time.Second + time.Duration(c.Nanosecond()))
	}
	var labels, texts []string
	for i, m := range walkMessages {
		who := "You said"
		if m.Role == "assistant" {
			who = "The assistant said"
		}
		labels = append(labels, who+", "+string(rune('1'+i))+" of 6")
		texts = append(texts, m.Content)
	}
	steps := []WalkStep{
		{Key: "Shift+Tab", At: at("06:43:28.949"), Name: labels[5], Text: texts[5]},
		{Key: "ArrowUp", At: at("06:43:32.779"), Name: labels[4], Text: texts[4]},
		{Key: "ArrowUp", At: at("06:43:34.440"), Name: labels[3], Text: texts[3]},
		{Key: "Home", At: at("06:43:36.100"), Name: labels[0], Text: texts[0]},
		{Key: "End", At: at("06:43:37.759"), Name: labels[5], Text: texts[5]},
		{Key: "Escape", At: at("06:43:39.419"), Name: "Message"},
	}
	failed := func(log string) []string {
		_, exp := CheckWalk(ParseOrcaLog(log, day, time.UTC), steps, labels, texts)
		require.Len(t, exp, len(steps))
		var names []string
		for _, e := range exp {
			if !e.OK {
				names = append(names, e.Name+": "+e.Why)
			}
		}
		return names
	}
	cut := func(line string) string {
		require.Contains(t, walkSample, line)
		return strings.Replace(walkSample, line, "", 1)
	}
	swap := func(from, to string) string {
		require.Contains(t, walkSample, from)
		return strings.Replace(walkSample, from, to, 1)
	}

	require.Empty(t, failed(walkSample), "the lab's own log passes")

	for _, tc := range []struct {
		name, log string
		failed    []string
	}{
		{"a turn's text never spoken",
			cut("06:43:34.473878 - SPEECH OUTPUT: 'A grey commonly lives forty to sixty years in captivity.'{'established': False}\n"),
			[]string{`ArrowUp: "The assistant said, 4 of 6": the label was heard, the text was not`}},
		{"a turn's label never spoken (browse mode's heading instead)",
			swap("'You said, 1 of 6.'", "'You said: heading level 3.'"),
			[]string{`Home: "You said, 1 of 6": its name was not heard`}},
		{"the text before the label",
			swap("06:43:32.826641 - SPEECH OUTPUT: 'You said, 5 of 6.'{'established': False}\n06:43:32.827435 - SPEECH OUTPUT: 'Thanks, that helps.'",
				"06:43:32.826641 - SPEECH OUTPUT: 'Thanks, that helps.'{'established': False}\n06:43:32.827435 - SPEECH OUTPUT: 'You said, 5 of 6.'"),
			[]string{`ArrowUp: "You said, 5 of 6": the text was heard, but not after the label`}},
		{"another turn read where the key went (Orca's caret, not the widget)",
			swap("'Which parrots learn words fastest?'", "'Which parrots learn words fastest? The assistant said, 2 of 6.'"),
			[]string{`Home: "You said, 1 of 6": the label, then the text; another turn was heard too: ["The assistant said, 2 of 6"]`}},
		{"nothing said after a key",
			cut("06:43:37.788477 - SPEECH OUTPUT: 'The assistant said, 6 of 6.'{'established': False}\n06:43:37.789607 - SPEECH OUTPUT: 'Glad to help with your parrot questions.'{'established': False}\n"),
			[]string{`End: "The assistant said, 6 of 6": Orca said nothing`}},
		{"Escape lands elsewhere",
			swap("'Message entry.'", "'Send push button.'"),
			[]string{`Escape: "Message": its name was not heard`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.failed, failed(tc.log))
		})
	}
}

// Only whole words count: "5 of 6" is not heard in "15 of 60", nor a
// text in a longer word.
func TestRunAtMatchesWholeWords(t *testing.T) {
	require.Equal(t, -1, runAt(wordsOf("You said, 15 of 60."), wordsOf("You said, 5 of 6"), 0))
	require.Equal(t, 1, runAt(wordsOf("Article: you SAID, 5 of 6!"), wordsOf("You said, 5 of 6"), 0))
	require.Equal(t, -1, runAt(wordsOf("you said 5 of 6"), wordsOf("you said 5 of 6"), 1))
	require.Equal(t, -1, runAt(wordsOf("anything"), nil, 0))
}

// The browse-mode walk must not pass by Orca having switched to focus
// mode: a "Focus mode" heard between the first key and the Escape fails
// it; the same words after the Escape (Orca entering the composer, an
// editable field) do not.
func TestCheckBrowseModeFailsWhenOrcaSwitchedToFocusMode(t *testing.T) {
	day := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return day.Add(time.Duration(s * float64(time.Second))) }
	steps := []WalkStep{
		{Key: "Shift+Tab", At: at(0)},
		{Key: "Page Up", At: at(2)},
		{Key: "Page Down", At: at(4)},
		{Key: "Escape", At: at(6)},
	}
	walked := []Utterance{
		{At: at(0.1), Text: "The assistant said, 6 of 6."},
		{At: at(2.0), Interrupt: true},
		{At: at(2.1), Text: "You said, 5 of 6."},
		{At: at(4.1), Text: "The assistant said, 6 of 6."},
		{At: at(6.1), Text: "Message entry."},
		{At: at(6.2), Text: "Focus mode"},
	}
	require.True(t, CheckBrowseMode(walked, steps).OK, "Focus mode after the Escape is Orca entering the composer")
	switched := append(slices.Clone(walked), Utterance{At: at(3), Text: "Focus mode"})
	e := CheckBrowseMode(switched, steps)
	require.False(t, e.OK)
	require.Equal(t, `Orca said "Focus mode" at 00:00:03.000`, e.Why)
	sticky := append(slices.Clone(walked), Utterance{At: at(1), Text: "Focus mode is sticky."})
	require.False(t, CheckBrowseMode(sticky, steps).OK, "sticky focus mode is focus mode")
	require.True(t, CheckBrowseMode(append(slices.Clone(walked), Utterance{At: at(-1), Text: "Focus mode"}), steps).OK, "before the walk (the composer focused by script) does not count")
	require.False(t, CheckBrowseMode(walked, nil).OK, "no walk, no pass")
}
