package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// orcaSample is what Orca 43's debug log looks like around utterances:
// other entries between them, the voice after the text, a text with
// quotes and one over two lines, a key echo and an interruption.
const orcaSample = `18:40:50.929778 - SPEECH OUTPUT: 'Screen reader on.'{'established': False}
18:40:50.930001 - SPEECH DISPATCHER: Speaking '<speak>Screen reader on.</speak>'
                  ORCA rate 5.0, pitch 5.0
18:40:53.017208 - SPEECH OUTPUT: '127.0.0.1:42105/examples/answer/'[{'established': False}]
18:40:53.018078 - SPEECH DISPATCHER: Speaking '<speak>127.0.0.1:42105/examples/answer/</speak>'
18:40:57.200910 - SPEECH OUTPUT: 'I am Trickle's simulated model: it's 'quoted'.'{'established': False}
18:40:58.000000 - SPEECH OUTPUT: 'two
lines.' voice=uppercase{'established': False}
18:40:58.100000 - SPEECH OUTPUT: 'Return' {'established': False}
18:40:58.200000 - DEFAULT: Interrupting presentation
18:40:58.300000 - EVENT MANAGER: object:text-changed:insert (0, 38, SPEECH OUTPUT: 'not this')
`

func TestParseOrcaLogFindsEveryUtteranceAndInterruption(t *testing.T) {
	day := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	got := ParseOrcaLog(orcaSample, day, time.UTC)
	var texts []string
	for _, u := range got {
		if u.Interrupt {
			texts = append(texts, "<interrupt>")
			continue
		}
		texts = append(texts, u.Text)
	}
	require.Equal(t, []string{
		"Screen reader on.",
		"127.0.0.1:42105/examples/answer/",
		"I am Trickle's simulated model: it's 'quoted'.",
		"two\nlines.",
		"Return",
		"<interrupt>",
	}, texts)
	require.Equal(t, time.Date(2026, 12, 4, 18, 40, 50, 929778000, time.UTC), got[0].At)
}

func TestClassifyChecksTheSpokenAnswer(t *testing.T) {
	w := Want{Start: "Assistant is responding.", Units: []string{"Hello!", "I am a model.", "Bullet: one;", "What next?"}, End: "Answer complete.", Own: []string{"My parrot Zephyr wonders", "Tell Zephyr a joke"}}
	t0 := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	said := func(texts ...string) []Utterance {
		var out []Utterance
		for i, s := range texts {
			u := Utterance{At: t0.Add(time.Duration(i) * time.Second), Text: s}
			if s == "<interrupt>" {
				u = Utterance{At: u.At, Interrupt: true}
			}
			out = append(out, u)
		}
		return out
	}
	failed := func(exp []Expectation) []string {
		var names []string
		for _, e := range exp {
			if !e.OK {
				names = append(names, e.Name)
			}
		}
		return names
	}
	const (
		start    = "one start status"
		once     = "every sentence once, whole, in order"
		end      = "the end status after the last sentence"
		cut      = "nothing cut short"
		readBack = "the reader's own message is not read back"
	)
	for _, tc := range []struct {
		name   string
		heard  []Utterance
		failed []string
		key    int // the reader pressed a key at this utterance (from 1; 0: none)
	}{
		{"sentences merged by the widget, page words around them", said("Focus mode", "Assistant is responding.", "Hello! I am a model.", "Bullet: one;", "What next?", "Answer complete."), nil, 0},
		{"the end status before the last sentence", said("Assistant is responding.", "Hello! I am a model.", "Bullet: one;", "Answer complete.", "What next?"), []string{end}, 0},
		{"no end status", said("Assistant is responding.", "Hello! I am a model. Bullet: one; What next?"), []string{end}, 0},
		{"a wrong end status", said("Assistant is responding.", "Hello! I am a model. Bullet: one; What next?", "Answer incomplete."), []string{end}, 0},
		{"two start statuses", said("Assistant is responding.", "Hello! I am a model.", "Assistant is responding.", "Bullet: one; What next?", "Answer complete."), []string{start}, 0},
		{"a token fragment", said("Assistant is responding.", "Hello! I am a", "model.", "Bullet: one; What next?", "Answer complete."), []string{once}, 0},
		{"a sentence twice", said("Assistant is responding.", "Hello! I am a model.", "I am a model.", "Bullet: one; What next?", "Answer complete."), []string{once}, 0},
		{"a sentence missing", said("Assistant is responding.", "Hello!", "Bullet: one; What next?", "Answer complete."), []string{once}, 0},
		{"the answer read again at the end", said("Assistant is responding.", "Hello! I am a model. Bullet: one; What next?", "Answer complete.", "Hello! I am a model. Bullet: one; What next?"), []string{once}, 0},
		{"the reader's key interrupts before the answer speaks", said("<interrupt>", "Return", "Assistant is responding.", "Hello! I am a model. Bullet: one; What next?", "Answer complete."), nil, 0},
		{"the answer as rendered, bullets and all", said("Assistant is responding.", "Hello! I am a model. Bullet: one; What next?", "• one; What next", "Answer complete."), []string{once}, 0},
		{"the reader's key interrupts while the answer speaks", said("Assistant is responding.", "Hello! I am a model.", "<interrupt>", "Bullet: one; What next?", "Answer complete."), nil, 3},
		{"speech interrupted", said("Assistant is responding.", "Hello! I am a model.", "<interrupt>", "Bullet: one; What next?", "Answer complete."), []string{cut}, 0},
		{"part of the reader's message read back", said("Assistant is responding.", "You said: my parrot, Zephyr.", "Hello! I am a model. Bullet: one; What next?", "Answer complete."), []string{readBack}, 0},
		{"the first message read back in the second turn", said("Assistant is responding.", "Hello! I am a model. Bullet: one; What next?", "You said: tell Zephyr a joke", "Answer complete."), []string{readBack}, 0},
		{"the reader's message read back", said("My parrot Zephyr wonders how you work.", "Assistant is responding.", "Hello! I am a model. Bullet: one; What next?", "Answer complete."), []string{readBack}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := w
			if tc.key > 0 {
				w.Keys = []time.Time{tc.heard[tc.key-1].At}
			}
			_, exp := Classify(tc.heard, w)
			require.Equal(t, tc.failed, failed(exp))
		})
	}
}
