package main

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// An Utterance is one thing Orca sent to its speech server, as its debug
// log records it ("SPEECH OUTPUT: '…'"), or an interruption of what it was
// saying ("DEFAULT: Interrupting presentation").
type Utterance struct {
	At        time.Time
	Text      string
	Interrupt bool
}

// orcaLine matches what Orca's debug log (orca --debug-file) writes for
// each utterance and each interruption: a timestamp (HH:MM:SS.micro, the
// clock of Orca's process), then the text in quotes, then the voice (ACSS)
// it used. An utterance may span lines when its text holds a newline.
var orcaLine = regexp.MustCompile(`(?ms)^(\d\d:\d\d:\d\d\.\d{6}) - (?:SPEECH OUTPUT: '(.*?)'(?: voice=\S+)? ?(?:\{[^\n]*\}|\[[^\n]*\]|None)?$|(DEFAULT: Interrupting presentation))`)

// ParseOrcaLog returns the utterances and interruptions in Orca's debug
// log, in order. Orca's timestamps carry no date: day gives it (in loc,
// the time zone Orca ran in).
func ParseOrcaLog(log string, day time.Time, loc *time.Location) []Utterance {
	var out []Utterance
	y, m, d := day.In(loc).Date()
	for _, g := range orcaLine.FindAllStringSubmatch(log, -1) {
		clock, err := time.ParseInLocation("15:04:05.000000", g[1], loc)
		if err != nil {
			continue
		}
		at := time.Date(y, m, d, clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), loc)
		if g[3] != "" {
			out = append(out, Utterance{At: at, Interrupt: true})
			continue
		}
		out = append(out, Utterance{At: at, Text: g[2]})
	}
	return out
}

// A Kind is what an utterance is to the check.
type Kind string

const (
	KindStart     Kind = "start status"
	KindSentence  Kind = "sentence"
	KindEnd       Kind = "end status"
	KindStray     Kind = "STRAY"     // the answer's words, outside the expected sentences
	KindOwn       Kind = "OWN"       // the reader's own message read back
	KindOther     Kind = "other"     // the page, focus, Orca itself
	KindInterrupt Kind = "interrupt" // Orca cut short what it was saying
)

// A Heard utterance, classified.
type Heard struct {
	Utterance
	Kind Kind
	// Units is how many of the answer's sentences a KindSentence
	// utterance holds (the widget merges sentences that are ready
	// together into one announcement).
	Units int
}

// An Expectation is one line of the verdict.
type Expectation struct {
	Name string
	OK   bool
	Why  string
}

// Want is what the check expects Orca to say for one answer.
type Want struct {
	Start string   // the start status: "Assistant is responding."
	Units []string // the answer's sentences as the widget announces them, in order
	End   string   // the end status: "Answer complete."
	// Keys are when the reader pressed a key: Orca interrupts itself on
	// each, within keyWindow.
	Keys []time.Time
	// Own are the reader's messages, never to be heard after they were
	// sent, whole or any three words of one in a row (none: not checked).
	Own []string
}

// The names of the expectations the control must see fail.
const (
	expSentences = "every sentence once, whole, in order"
	expOwn       = "the reader's own message is not read back"
)

// endStatuses are every end status the widget may say; only Want.End
// passes, the others are counted so a wrong ending is named.
var endStatuses = []string{"Answer complete.", "Answer stopped.", "Answer incomplete.", "Answer failed.", "Answer withheld."}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// Classify labels each utterance heard during the answer and checks them
// against w: one start status before anything of the answer; the answer's
// sentences each exactly once, whole and in order (one utterance may hold
// several consecutive sentences, never part of one); the end status once,
// after the last sentence; nothing of the answer anywhere else; no
// interruption of Orca's speech (what is cut short is not heard); the
// reader's own message never.
func Classify(heard []Utterance, w Want) ([]Heard, []Expectation) {
	answer := wordRuns(strings.Join(w.Units, " "))
	own := map[string]bool{}
	for _, m := range w.Own {
		maps.Copy(own, wordRuns(m))
	}
	out := make([]Heard, 0, len(heard))
	next := 0 // the next unit expected
	var starts, ends, strays, owns, sentences, interrupts int
	var wrongEnds []string
	startBeforeSentence, endAfterLast := true, true
	var lastSentence, endAt time.Time
	for _, u := range heard {
		h := Heard{Utterance: u}
		t := norm(u.Text)
		switch {
		case u.Interrupt:
			// A key the reader presses interrupts Orca (that is how a
			// reader silences it); once the answer speaks, nothing else
			// may.
			h.Kind = KindInterrupt
			if starts+sentences > 0 && !byKey(u.At, w.Keys) {
				interrupts++
			}
		case t == w.Start:
			h.Kind = KindStart
			starts++
			if sentences > 0 {
				startBeforeSentence = false
			}
		case isEnd(t):
			h.Kind = KindEnd
			if t != w.End {
				wrongEnds = append(wrongEnds, t)
			}
			ends++
			endAt = u.At
		default:
			if n := matchUnits(t, w.Units[next:]); n > 0 {
				h.Kind, h.Units = KindSentence, n
				next += n
				sentences++
				lastSentence = u.At
				if ends > 0 {
					endAfterLast = false
				}
			} else if shares(t, own) {
				h.Kind = KindOwn
				owns++
			} else if shares(t, answer) {
				h.Kind = KindStray
				strays++
			} else {
				h.Kind = KindOther
			}
		}
		out = append(out, h)
	}
	if ends > 0 && !lastSentence.IsZero() && endAt.Before(lastSentence) {
		endAfterLast = false
	}
	var exp []Expectation
	add := func(name string, ok bool, why string, args ...any) {
		exp = append(exp, Expectation{Name: name, OK: ok, Why: fmt.Sprintf(why, args...)})
	}
	add("one start status", starts == 1 && startBeforeSentence,
		"%q heard %d time(s)%s", w.Start, starts, map[bool]string{true: "", false: ", not before the first sentence"}[startBeforeSentence])
	add(expSentences, next == len(w.Units) && strays == 0,
		"%d of %d sentences heard in order, in %d utterance(s); %d stray utterance(s) of the answer's words", next, len(w.Units), sentences, strays)
	add("the end status after the last sentence", ends == 1 && len(wrongEnds) == 0 && endAfterLast,
		"%d end status(es)%s%s", ends, map[bool]string{true: "", false: fmt.Sprintf(", not %q: %q", w.End, wrongEnds)}[len(wrongEnds) == 0],
		map[bool]string{true: "", false: ", one before the last sentence"}[endAfterLast])
	add("nothing cut short", interrupts == 0, "Orca interrupted its speech %d time(s) once the answer spoke, other than at the reader's keys", interrupts)
	if len(w.Own) > 0 {
		add(expOwn, owns == 0, "heard %d time(s) after it was sent", owns)
	}
	return out, exp
}

// wordRuns are the runs of three words of s (all of it when shorter),
// in lower case without punctuation: what is heard of a text whatever
// the bullets, quotes and markup around it ("• a code question" and
// "Bullet: a code question, such" share "a code question").
func wordRuns(s string) map[string]bool {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	runs := map[string]bool{}
	if len(words) > 0 && len(words) < 3 {
		runs[strings.Join(words, " ")] = true
	}
	for i := 0; i+3 <= len(words); i++ {
		runs[strings.Join(words[i:i+3], " ")] = true
	}
	return runs
}

// shares reports whether t holds any of the runs (a run of three of its
// own words, or all of a shorter t, is one of them).
func shares(t string, runs map[string]bool) bool {
	for r := range wordRuns(t) {
		if runs[r] {
			return true
		}
	}
	return false
}

// keyWindow is how long after a key press Orca's interruption is still
// the key's: Orca handles a key as it gets it (milliseconds here), so a
// second is generous even on a loaded machine.
const keyWindow = time.Second

func byKey(at time.Time, keys []time.Time) bool {
	for _, k := range keys {
		if !at.Before(k) && at.Sub(k) < keyWindow {
			return true
		}
	}
	return false
}

func isEnd(t string) bool {
	for _, e := range endStatuses {
		if t == e || strings.HasPrefix(t, e+" ") {
			return true
		}
	}
	return false
}

// matchUnits returns how many of units, from the first, t is made of
// (joined by spaces), or 0 when t is not a whole run of them.
func matchUnits(t string, units []string) int {
	acc := ""
	for i, u := range units {
		if acc != "" {
			acc += " "
		}
		acc += norm(u)
		if acc == t {
			return i + 1
		}
		if len(acc) >= len(t) {
			return 0
		}
	}
	return 0
}
