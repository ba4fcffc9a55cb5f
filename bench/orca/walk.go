package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// walkMessages is the walk scenario's stored thread: six turns, each
// text its own words (none of them "said", "of" or "message", which the
// labels and the composer's name are made of, so no text can pass for a
// label).
var walkMessages = []struct{ Role, Content string }{
	{"user", "Which parrots learn words fastest?"},
	{"assistant", "African greys pick up new words quickest, often within days."},
	{"user", "How long do they live?"},
	{"assistant", "A grey commonly lives forty to sixty years in captivity."},
	{"user", "Thanks, that helps."},
	{"assistant", "Glad to help with your parrot questions."},
}

// A WalkStep is one key the reader pressed while walking the thread, and
// what Orca should then say: the focused turn's label and its text, the
// label first (Name and Text set); or, back in the composer, its name
// (Text empty).
type WalkStep struct {
	Key  string    // what the reader pressed ("ArrowUp")
	At   time.Time // when
	Name string    // the focused element's accessible name ("You said, 5 of 6", "Message")
	Text string    // the turn's text ("" for the composer)
}

// Kinds of what is heard during a walk.
const (
	KindTurn      Kind = "turn"       // the focused turn's label or text
	KindWrongTurn Kind = "WRONG TURN" // another turn's label or text
	KindComposer  Kind = "composer"   // the composer's name, after Escape
)

// CheckWalk checks what Orca said while the reader walked the thread:
// after each key that focused a turn, before the next key, the turn's
// label and then its text (each a run of words, whatever the punctuation
// and the role words Orca puts around them), and no other turn's label
// or text; after Escape, the composer's name and no turn. labels and
// texts are every turn's, to name a wrong one.
func CheckWalk(heard []Utterance, steps []WalkStep, labels, texts []string) ([]Heard, []Expectation) {
	out := make([]Heard, 0, len(heard))
	for _, u := range heard {
		if len(steps) > 0 && u.At.Before(steps[0].At) {
			k := KindOther
			if u.Interrupt {
				k = KindInterrupt
			}
			out = append(out, Heard{Utterance: u, Kind: k})
		}
	}
	var exp []Expectation
	for i, s := range steps {
		var end time.Time
		if i+1 < len(steps) {
			end = steps[i+1].At
		}
		var window []Utterance
		for _, u := range heard {
			if !u.At.Before(s.At) && (end.IsZero() || u.At.Before(end)) {
				window = append(window, u)
			}
		}
		words := []string{}
		var others []string
		for _, u := range window {
			h := Heard{Utterance: u, Kind: KindOther}
			w := wordsOf(u.Text)
			switch {
			case u.Interrupt:
				h.Kind = KindInterrupt
			case s.Text == "" && hasRun(w, wordsOf(s.Name)):
				h.Kind = KindComposer
			case hasRun(w, wordsOf(s.Name)) || (s.Text != "" && hasRun(w, wordsOf(s.Text))):
				h.Kind = KindTurn
			}
			for j, l := range labels {
				if l == s.Name {
					continue
				}
				if hasRun(w, wordsOf(l)) || (texts[j] != s.Text && hasRun(w, wordsOf(texts[j]))) {
					h.Kind = KindWrongTurn
					others = append(others, l)
				}
			}
			out = append(out, h)
			if !u.Interrupt {
				words = append(words, w...)
			}
		}
		name := fmt.Sprintf("%s: %q", s.Key, s.Name)
		label := runAt(words, wordsOf(s.Name), 0)
		var ok bool
		var why string
		switch {
		case label < 0:
			why = "its name was not heard"
		case s.Text == "":
			ok, why = true, "its name was heard"
		default:
			if at := runAt(words, wordsOf(s.Text), label+len(wordsOf(s.Name))); at >= 0 {
				ok, why = true, "the label, then the text"
			} else if runAt(words, wordsOf(s.Text), 0) >= 0 {
				why = "the text was heard, but not after the label"
			} else {
				why = "the label was heard, the text was not"
			}
		}
		if len(others) > 0 {
			ok = false
			why += fmt.Sprintf("; another turn was heard too: %q", others)
		}
		if len(words) == 0 {
			why = "Orca said nothing"
		}
		exp = append(exp, Expectation{Name: name, OK: ok, Why: why})
	}
	return out, exp
}

// CheckBrowseMode checks that Orca stayed in browse mode while the reader
// walked the thread, from the first key of steps until the last (the
// Escape back to the composer, an editable field where Orca switches to
// focus mode by itself): Orca says "Focus mode" whenever it switches, so
// the walk must not hear it. A walk that passed in focus mode would not
// show that the keys reach the page in browse mode.
func CheckBrowseMode(heard []Utterance, steps []WalkStep) Expectation {
	e := Expectation{Name: "Orca stayed in browse mode until Escape (it never said \"Focus mode\")", OK: true, Why: "no switch was heard"}
	if len(steps) == 0 {
		return Expectation{Name: e.Name, Why: "no key was pressed"}
	}
	from, until := steps[0].At, steps[len(steps)-1].At
	for _, u := range heard {
		if u.Interrupt || u.At.Before(from) || !u.At.Before(until) {
			continue
		}
		if hasRun(wordsOf(u.Text), []string{"focus", "mode"}) {
			e.OK, e.Why = false, fmt.Sprintf("Orca said %q at %s", norm(u.Text), u.At.Format("15:04:05.000"))
			break
		}
	}
	return e
}

// wordsOf is s in lower-case words, without punctuation.
func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func hasRun(words, run []string) bool { return runAt(words, run, 0) >= 0 }

// runAt is where run starts in words, at from or later, or -1.
func runAt(words, run []string, from int) int {
	if len(run) == 0 {
		return -1
	}
	for i := max(from, 0); i+len(run) <= len(words); i++ {
		if slices.Equal(words[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}

// walkPress is one key of the walk: its xdotool names (a key pressed
// twice is two) and its DevTools one.
type walkPress struct {
	name     string
	x        []string
	devtools string
	shift    bool
}

var (
	keyShiftTab  = walkPress{"Shift+Tab", []string{"shift+Tab"}, kb.Tab, true}
	keyArrowUp   = walkPress{"ArrowUp", []string{"Up"}, kb.ArrowUp, false}
	keyArrowDown = walkPress{"ArrowDown", []string{"Down"}, kb.ArrowDown, false}
	keyHome      = walkPress{"Home", []string{"Home"}, kb.Home, false}
	keyEnd       = walkPress{"End", []string{"End"}, kb.End, false}
	keyEscape    = walkPress{"Escape", []string{"Escape"}, kb.Escape, false}
	// Page Up and Page Down (X's Prior and Next) are the feed pattern's
	// keys, which Orca leaves to the page in browse mode.
	keyPageUp   = walkPress{"Page Up", []string{"Prior"}, kb.PageUp, false}
	keyPageDown = walkPress{"Page Down", []string{"Next"}, kb.PageDown, false}
	// keyStickyFocus is Orca+A pressed twice (Insert is Orca's key in its
	// desktop layout): focus mode, sticky, so that Orca leaves every key
	// to the page whatever takes the focus (once, it toggles focus mode
	// until the focus moves to something that is not a form control: the
	// next turn). Over DevTools it would reach the page only, so it needs
	// xdotool.
	keyStickyFocus = walkPress{"Orca+A twice", []string{"Insert+a", "Insert+a"}, "", false}
)

func (k walkPress) press(tab context.Context, lab *Lab) error {
	if lab.HasXKeys() {
		return lab.PressX(k.x...)
	}
	if k.devtools == "" {
		return fmt.Errorf("%s needs xdotool: Orca must hear it", k.name)
	}
	var opts []chromedp.KeyOption
	if k.shift {
		opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
	}
	return do(tab, 10*time.Second, chromedp.KeyEvent(k.devtools, opts...))
}

// focused says what has the focus: a turn's label, "input" for the
// composer, else what the element is.
const focused = `(() => { const e = document.activeElement; return e.dataset?.trickleChat === "turn" ? e.getAttribute("aria-label") : e.dataset?.trickleChat ?? e.dataset?.trickle ?? e.tagName; })()`

// walkScenario: a <trickle-chat> showing a stored six-turn thread (set
// as chat.messages: no request, nothing announced), the composer
// focused; Shift+Tab until the newest turn has the focus (through its
// actions), then ArrowUp to the first turn, ArrowDown to the last, Home,
// End and Escape, each a real key press, waiting after each for Orca to
// fall quiet. Orca must say each focused turn's label, then its text, and
// after Escape the composer's name, with the focus there.
//
// In browse mode, where Orca is on a turn it reached by Tab, the arrows,
// Home and End are Orca's own (its caret moves line by line and takes
// the focus along): focusMode presses Orca+A twice on the newest turn
// first, as a reader does to use a web application's own keys, and
// checks that Orca said "Focus mode is sticky". Without it (the
// walk-browse scenario) the reader stays in browse mode and walks with
// the keys Orca leaves to the page there, the feed pattern's: Page Up
// five times to the first turn, Page Down five times to the last, then
// Escape; the checks are the same.
func walkScenario(tab context.Context, lab *Lab, url string, focusMode bool) (*result, error) {
	if focusMode && !lab.HasXKeys() {
		return nil, fmt.Errorf("the walk needs xdotool: Orca must hear Orca+A")
	}
	if err := open(tab, url); err != nil {
		return nil, err
	}
	if err := waitJS(tab, 60*time.Second, `customElements.get("trickle-chat") && document.querySelector("[data-trickle-chat=input]")`); err != nil {
		return nil, err
	}
	var list strings.Builder
	list.WriteByte('[')
	for i, m := range walkMessages {
		if i > 0 {
			list.WriteByte(',')
		}
		fmt.Fprintf(&list, `{role:%s,content:%s}`, jsString(m.Role), jsString(m.Content))
	}
	list.WriteByte(']')
	if err := do(tab, 10*time.Second, js(`document.querySelector("trickle-chat").messages = `+list.String())); err != nil {
		return nil, err
	}
	n := len(walkMessages)
	if err := waitJS(tab, 30*time.Second, fmt.Sprintf(`document.querySelectorAll('[data-trickle-chat="turn"][aria-label]').length === %d`, n)); err != nil {
		return nil, err
	}
	labels, err := evalJS[[]string](tab, 10*time.Second, `[...document.querySelectorAll('[data-trickle-chat="turn"]')].map((t) => t.getAttribute("aria-label"))`)
	if err != nil {
		return nil, err
	}
	composer, err := evalJS[string](tab, 10*time.Second, `(() => { const i = document.querySelector("[data-trickle-chat=input]"); return (i.getAttribute("aria-label") ?? i.labels?.[0]?.textContent ?? "").trim(); })()`)
	if err != nil {
		return nil, err
	}
	texts := make([]string, n)
	for i, m := range walkMessages {
		texts[i] = m.Content
	}
	if err := do(tab, 10*time.Second, js(`document.querySelector("[data-trickle-chat=input]").focus()`)); err != nil {
		return nil, err
	}
	lab.WaitQuiet(tab, 2*time.Second, 30*time.Second)
	r := &result{name: "walk-browse", action: "a stored six-turn thread walked from the composer in Orca's browse mode: Shift+Tab into it, Page Up, Page Down, Escape" + keysVia(lab), before: lab.OrcaSaid()}
	if focusMode {
		r.name, r.action = "walk", "a stored six-turn thread walked from the composer: Shift+Tab into it, Orca+A twice (sticky focus mode), ArrowUp, ArrowDown, Home, End, Escape"+keysVia(lab)
	}
	r.t0 = time.Now()

	var steps []WalkStep
	var wrong []string // where the focus was not where the key should have put it
	settle := func() { lab.WaitQuiet(tab, 1500*time.Millisecond, 20*time.Second) }
	// Shift+Tab from the composer: the newest turn's actions, then the
	// turn (the thread is one stop).
	var passed []string
	for try := 0; ; try++ {
		at := time.Now()
		if err := keyShiftTab.press(tab, lab); err != nil {
			return nil, err
		}
		settle()
		where, err := evalJS[string](tab, 10*time.Second, focused)
		if err != nil {
			return nil, err
		}
		if where == labels[n-1] {
			steps = append(steps, WalkStep{Key: keyShiftTab.name, At: at, Name: labels[n-1], Text: texts[n-1]})
			break
		}
		r.marks = append(r.marks, mark{at, keyShiftTab.name})
		passed = append(passed, where)
		if try == 6 {
			return nil, fmt.Errorf("Shift+Tab from the composer did not reach the newest turn (%q): it went through %q", labels[n-1], passed)
		}
	}
	r.notes = append(r.notes, fmt.Sprintf("Shift+Tab from the composer went through %q before the newest turn", passed))
	var toggled *Expectation
	if focusMode {
		at := time.Now()
		if err := keyStickyFocus.press(tab, lab); err != nil {
			return nil, err
		}
		settle()
		r.marks = append(r.marks, mark{at, keyStickyFocus.name})
		said := ""
		for _, u := range lab.OrcaSaid() {
			if !u.At.Before(at) && !u.Interrupt {
				said += norm(u.Text) + " "
			}
		}
		ok := strings.Contains(said, "Focus mode is sticky")
		toggled = &Expectation{Name: "Orca+A twice: Orca's focus mode is sticky", OK: ok, Why: fmt.Sprintf("Orca said %q", strings.TrimSpace(said))}
	}
	// The walk: to the first turn, back to the last, Home, End.
	type move struct {
		key walkPress
		to  int
	}
	// In browse mode the walk's keys are Page Up and Page Down, the ones
	// Orca leaves to the page there (Home and End are its own).
	up, down := keyArrowUp, keyArrowDown
	if !focusMode {
		up, down = keyPageUp, keyPageDown
	}
	var moves []move
	for i := n - 2; i >= 0; i-- {
		moves = append(moves, move{up, i})
	}
	for i := 1; i < n; i++ {
		moves = append(moves, move{down, i})
	}
	if focusMode {
		moves = append(moves, move{keyHome, 0}, move{keyEnd, n - 1})
	}
	moves = append(moves, move{keyEscape, -1})
	for _, m := range moves {
		at := time.Now()
		if err := m.key.press(tab, lab); err != nil {
			return nil, err
		}
		settle()
		where, err := evalJS[string](tab, 10*time.Second, focused)
		if err != nil {
			return nil, err
		}
		s := WalkStep{Key: m.key.name, At: at, Name: composer}
		want := "input"
		if m.to >= 0 {
			s.Name, s.Text, want = labels[m.to], texts[m.to], labels[m.to]
		}
		if where != want {
			wrong = append(wrong, fmt.Sprintf("%s: %q, not %q", m.key.name, where, want))
		}
		steps = append(steps, s)
	}
	for _, s := range steps {
		r.marks = append(r.marks, mark{s.At, s.Key})
	}
	done := time.Now()
	// Sticky focus mode would outlast the page: one more Orca+A toggles
	// it off, to what Orca chooses by itself, for the scenarios after.
	if focusMode {
		if err := lab.PressX("Insert+a"); err != nil {
			return nil, err
		}
		settle()
	}
	// What Orca said from the first key to the Escape's echo.
	var after []Utterance
	for _, u := range lab.OrcaSaid() {
		if !u.At.Before(r.t0) && u.At.Before(done) {
			after = append(after, u)
		}
	}
	r.before = r.before[len(r.before)-min(len(r.before), 6):]
	r.heard, r.exp = CheckWalk(after, steps, labels, texts)
	if toggled != nil {
		r.exp = append([]Expectation{*toggled}, r.exp...)
	} else {
		r.exp = append(r.exp, CheckBrowseMode(after, steps))
	}
	r.exp = append(r.exp, Expectation{Name: "the focus followed the keys (document.activeElement)", OK: len(wrong) == 0,
		Why: map[bool]string{true: fmt.Sprintf("%d keys, each put the focus on the turn it should, Escape on the composer", len(steps)-1), false: strings.Join(wrong, "; ")}[len(wrong) == 0]})
	return r, nil
}

// A mark is a key the reader pressed, for the printed timeline.
type mark struct {
	at   time.Time
	name string
}
