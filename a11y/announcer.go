package a11y

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/anyof"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// Pacing of content announcements. Screen readers queue polite live-region
// updates; a burst of tiny updates is spoken as fragments or dropped, so
// units are merged and spaced.
const (
	// MergeWindow: units confirmed within this time of the first waiting
	// one go out together as one announcement.
	MergeWindow = 250 * time.Millisecond
	// MinGap is the least time between two content announcements.
	MinGap = 300 * time.Millisecond
	// PerSecond is the most content announcements in any one second.
	PerSecond = 2
	// StallAfter: when no new text has arrived for this long, a trailing
	// sentence that already ends with a terminator is spoken rather than
	// kept waiting for the text that would confirm it.
	StallAfter = 1500 * time.Millisecond
)

// Status texts, announced in the widget's role="status" region.
const (
	StatusResponding = "Assistant is responding."
	StatusComplete   = "Answer complete."
	StatusStopped    = "Answer stopped."
	StatusIncomplete = "Answer incomplete."
	StatusFailed     = "Answer failed."
)

// Mode is what an Announcer says of the answer's content.
type Mode string

// Modes of an Announcer.
const (
	// ModeSentences announces each confirmed sentence, paced
	// (DefaultMode).
	ModeSentences Mode = "sentences"
	// ModeComplete announces the whole plain-text answer once, at the end.
	ModeComplete Mode = "complete"
	// ModeOff announces no content; the status announcements (responding,
	// complete, stopped, failed) still go out, since they are how a
	// listener knows the answer is there to be read.
	ModeOff Mode = "off"
)

// DefaultMode is the mode of an Announcer no WithMode sets, and what
// ParseMode reads "" as.
const DefaultMode = ModeSentences

// Modes lists the modes.
func Modes() []Mode { return []Mode{ModeSentences, ModeComplete, ModeOff} }

// ParseMode reads a mode's name; "" is DefaultMode. Any other name is an
// error that lists the modes.
func ParseMode(name string) (Mode, error) {
	if name == "" {
		return DefaultMode, nil
	}
	if m := Mode(name); m.known() {
		return m, nil
	}
	return DefaultMode, errors.New("a11y: " + strconv.Quote(name) + " is not an announcement mode (sentences, complete or off)")
}

// Announcement is one thing for a screen reader to say.
type Announcement struct {
	// At is when it was released.
	At time.Time
	// Text is plain text: never markdown syntax.
	Text string
	// Units are the texts of the units Text joins, in order (read-aloud
	// speaks one at a time); nil for a status.
	Units []string
	// Status announcements go to the role="status" region; the others to
	// the polite live region for content.
	Status bool
}

// Unit is one speech unit of the answer: a sentence, a block's summary
// ("Code block, Go, 12 lines."), or a clause of an over-long sentence.
type Unit struct {
	// Pos and End are the source span in the answer, in bytes; a unit is
	// keyed by it, so no span is ever announced twice.
	Pos, End int
	// Text is what is said.
	Text string
	// Ready is when the unit was confirmed; Said when it was announced.
	// Both are zero in Units' one-shot result.
	Ready, Said time.Time
}

// Option configures an Announcer.
type Option func(*Announcer)

// WithMode selects ModeSentences, ModeComplete or ModeOff (ParseMode reads
// one from its name); "" is DefaultMode. New refuses any other value.
func WithMode(mode Mode) Option {
	return func(a *Announcer) {
		if mode == "" {
			mode = DefaultMode
		}
		a.mode = mode
	}
}

// WithClock injects the clock, so pacing is deterministic in tests and in
// replays with recorded timing. The default (and nil) is time.Now.
func WithClock(now func() time.Time) Option {
	return func(a *Announcer) {
		if now != nil {
			a.now = now
		}
	}
}

// WithStartStatus replaces StatusResponding as what Start says (a page's
// own words for it); an empty text keeps it.
func WithStartStatus(text string) Option {
	return func(a *Announcer) {
		if text != "" {
			a.startText = text
		}
	}
}

// Announcer turns the frames of a streaming render into announcements.
// It is not safe for concurrent use; the widget drives it from its frame
// loop.
type Announcer struct {
	mode      Mode
	now       func() time.Time
	startText string // what Start says

	started, ended bool
	// frontier is the answer offset up to which everything has been
	// spoken (or queued): the key that makes re-renders, replays and
	// repeated frames harmless.
	frontier int

	// tail is the projection of the last frame's live tail.
	tail       []run
	tailSig    string
	lastChange time.Time
	// stall is the tail's trailing sentence a stall would release,
	// computed once per frame rather than on every Poll.
	stall    Unit
	hasStall bool

	queue   []Unit // confirmed, not yet announced
	flush   bool   // the queue goes out without waiting for the merge window
	recent  [PerSecond]time.Time
	out     []Announcement // released statuses waiting for Poll
	endText string         // the final status, once the queue is empty
	all     []string       // ModeComplete: every unit's text

	transcript Transcript
}

// New returns an Announcer in DefaultMode on the real clock unless told
// otherwise. An option value that cannot work is an *OptionError
// (matching ErrBadOption) naming it.
func New(opts ...Option) (*Announcer, error) {
	a := &Announcer{mode: DefaultMode, now: time.Now, startText: StatusResponding}
	for _, o := range opts {
		if o != nil {
			o(a)
		}
	}
	if !a.mode.known() {
		return nil, &OptionError{Option: "WithMode", Value: string(a.mode), Reason: "want sentences, complete or off"}
	}
	return a, nil
}

// Mode returns the announcer's mode.
func (a *Announcer) Mode() Mode { return a.mode }

// Start begins an answer and queues "Assistant is responding." (or
// WithStartStatus's words). Calling it
// again while the answer is still running (a reconnect) does nothing; after
// End it starts a fresh answer.
func (a *Announcer) Start() {
	if a.started && !a.ended {
		return
	}
	if a.ended {
		*a = Announcer{mode: a.mode, now: a.now, startText: a.startText}
	}
	a.started = true
	a.lastChange = a.now()
	a.status(a.startText)
}

func (a *Announcer) status(text string) {
	ann := Announcement{At: a.now(), Text: text, Status: true}
	a.out = append(a.out, ann)
	a.transcript.Announcements = append(a.transcript.Announcements, ann)
}

// Frame feeds what render produced this frame: the newly settled blocks,
// the current live tail and whether the text is final. Feeding the same
// frame twice, or re-rendering from the start after a reconnect, announces
// nothing new: units are keyed by their position in the answer.
func (a *Announcer) Frame(settled, tail []render.Block, final bool) {
	if a.ended {
		return
	}
	now := a.now()
	for _, b := range settled {
		for _, r := range project(b) {
			a.enqueue(r.units(true, a.frontier), now)
		}
	}
	var runs []run
	for _, b := range tail {
		runs = append(runs, project(b)...)
	}
	// A tail run followed by another one has ended: the text after it
	// started a new block.
	for i := range runs {
		a.enqueue(runs[i].units(final || i < len(runs)-1, a.frontier), now)
	}
	if final {
		runs = nil
		a.flush = true
	}
	sig := signature(runs)
	if sig != a.tailSig {
		a.lastChange = now
	}
	a.tail, a.tailSig = runs, sig
	a.stall, a.hasStall = a.stallUnit()
}

func signature(runs []run) string {
	var b strings.Builder
	for _, r := range runs {
		b.Write(r.text)
		b.WriteByte(0)
	}
	return b.String()
}

// enqueue queues the units not yet spoken; units already start at the
// frontier (run.units trims what was said), this guards the order.
func (a *Announcer) enqueue(units []Unit, now time.Time) {
	for _, u := range units {
		if u.End <= a.frontier || u.Pos < a.frontier {
			continue
		}
		a.frontier = u.End
		u.Ready = now
		a.queue = append(a.queue, u)
		if a.mode == ModeComplete {
			a.all = append(a.all, u.Text)
		}
	}
	if a.mode != ModeSentences {
		a.queue = a.queue[:0]
	}
}

// End finishes the answer with its terminal status (stream.Complete,
// Stopped, Incomplete or Failed); err gives a failure's reason in words.
// Whatever the tail still holds is spoken first (the end of the stream is a
// hard boundary), then exactly one final status; of a stopped answer, only
// what the tail holds whole (StopWith). Later calls do nothing.
func (a *Announcer) End(status stream.Status, err error) {
	a.end(StatusText(status, err), status != stream.Stopped)
}

// EndWith is End with the final status's words given: a caller that says
// how the answer ended in its own words (the widget: the page's strings,
// a reason in a sentence a listener understands, never an error chain).
func (a *Announcer) EndWith(text string) { a.end(text, true) }

// StopWith is EndWith for an answer the reader stopped: what the tail held
// whole is spoken, not the sentence the stop cut (often mid-word).
func (a *Announcer) StopWith(text string) { a.end(text, false) }

func (a *Announcer) end(text string, flush bool) {
	if a.ended {
		return
	}
	now := a.now()
	for i := range a.tail {
		// A run followed by another has ended whatever the end is.
		a.enqueue(a.tail[i].units(flush || i < len(a.tail)-1, a.frontier), now)
	}
	a.tail, a.tailSig = nil, ""
	a.hasStall = false
	a.ended = true
	a.flush = true
	if a.mode == ModeComplete && len(a.all) > 0 {
		text := strings.Join(a.all, " ")
		a.out = append(a.out, Announcement{At: now, Text: text})
		a.transcript.Announcements = append(a.transcript.Announcements, a.out[len(a.out)-1])
		a.transcript.Units = append(a.transcript.Units, Unit{Pos: 0, End: a.frontier, Text: text, Ready: now, Said: now})
		a.said(now)
	}
	a.endText = text
}

// said records a content announcement released at now, for the pacing.
func (a *Announcer) said(now time.Time) {
	copy(a.recent[:], a.recent[1:])
	a.recent[len(a.recent)-1] = now
}

// endDue is when the final status may go out: MinGap after the last content
// announcement. Released in the same instant, a screen reader may speak
// the status before the sentence it queued just before (seen with Orca and
// Chromium: the two regions are separate queues), so "Answer complete."
// follows the answer's last words by the same spacing as two sentences.
func (a *Announcer) endDue() time.Time {
	last := a.recent[len(a.recent)-1]
	if last.IsZero() {
		return time.Time{}
	}
	return last.Add(MinGap)
}

// due returns when the waiting content units may go out.
func (a *Announcer) due() time.Time {
	t := a.queue[0].Ready
	if !a.flush {
		t = t.Add(MergeWindow)
	}
	last := a.recent[len(a.recent)-1]
	if !last.IsZero() && last.Add(MinGap).After(t) {
		t = last.Add(MinGap)
	}
	if first := a.recent[0]; !first.IsZero() && first.Add(time.Second).After(t) {
		t = first.Add(time.Second)
	}
	return t
}

// stallUnit returns the trailing sentence of the live tail when it waits
// only for the text that would confirm it; a stall of StallAfter after the
// last change of the tail releases it.
// Only a sentence that already reads as finished qualifies: it ends with a
// terminator that cannot be a decimal point ("3."), an abbreviation ("Dr.",
// "e.") or part of a URL or code, and holds no open markdown. A fragment
// ("The fix is to") is never flushed by a stall; it waits for more text or
// the end of the stream.
func (a *Announcer) stallUnit() (Unit, bool) {
	if a.mode != ModeSentences || len(a.tail) == 0 {
		return Unit{}, false
	}
	r := &a.tail[len(a.tail)-1]
	if r.whole || len(r.units(false, a.frontier)) > 0 {
		return Unit{}, false
	}
	s := len(r.text)
	for i, p := range r.pos {
		if p >= a.frontier {
			s = i
			break
		}
	}
	e := len(r.text)
	for e > s && r.text[e-1] == ' ' {
		e--
	}
	if e == s || held(r, s, e) || !finished(r, s, e) {
		return Unit{}, false
	}
	u := r.unit(s, e, false)
	if u.Text == "" || u.End <= a.frontier {
		return Unit{}, false
	}
	return u, true
}

// finished reports whether text[s:e] of r ends like a whole sentence
// that more text is unlikely to extend.
func finished(r *run, s, e int) bool {
	for e > s && strings.IndexByte(closers, r.text[e-1]) >= 0 {
		e--
	}
	if e == s || r.flags[e-1]&flagKeep != 0 {
		return false
	}
	last, size := utf8.DecodeLastRune(r.text[s:e])
	if !strings.ContainsRune(".!?…。！？", last) {
		return false
	}
	if last == '.' {
		body := r.text[s : e-size]
		word := body
		if i := anyof.LastIndex(body, " (\"'“‘"); i >= 0 {
			word = body[i+1:]
		}
		w := string(word) + "."
		if titles[w] || beforeNumber[w] || utf8.RuneCount(word) < 2 || strings.Contains(string(word), ".") {
			return false
		}
		if c := body[len(body)-1]; c >= '0' && c <= '9' {
			return false
		}
	}
	return true
}

// Poll returns the announcements due now. Call it once per frame and, while
// NextDue reports a time, on a timer.
func (a *Announcer) Poll() []Announcement {
	now := a.now()
	if a.hasStall && !now.Before(a.lastChange.Add(StallAfter)) {
		// The unit has been waiting since its text arrived: that is its
		// ready time, so Measure's longest wait includes the stall.
		a.enqueue([]Unit{a.stall}, a.lastChange)
		a.hasStall = false
		a.flush = true
	}
	if len(a.queue) > 0 && !now.Before(a.due()) {
		texts := make([]string, len(a.queue))
		for i := range a.queue {
			a.queue[i].Said = now
			texts[i] = a.queue[i].Text
		}
		ann := Announcement{At: now, Text: strings.Join(texts, " "), Units: texts}
		a.out = append(a.out, ann)
		a.transcript.Announcements = append(a.transcript.Announcements, ann)
		a.transcript.Units = append(a.transcript.Units, a.queue...)
		a.queue = a.queue[:0]
		a.said(now)
		a.flush = a.ended
	}
	if a.endText != "" && len(a.queue) == 0 && !now.Before(a.endDue()) {
		a.status(a.endText)
		a.endText = ""
	}
	out := a.out
	a.out = nil
	return out
}

// NextDue returns when Poll will next have something to say, if anything
// is waiting.
func (a *Announcer) NextDue() (time.Time, bool) {
	if len(a.out) > 0 {
		return a.now(), true
	}
	if len(a.queue) > 0 {
		return a.due(), true
	}
	if a.endText != "" {
		if t := a.endDue(); t.After(a.now()) {
			return t, true
		}
		return a.now(), true
	}
	if a.hasStall {
		return a.lastChange.Add(StallAfter), true
	}
	return time.Time{}, false
}

// Transcript returns everything announced so far in this answer.
func (a *Announcer) Transcript() Transcript {
	t := Transcript{
		Announcements: append([]Announcement(nil), a.transcript.Announcements...),
		Units:         append([]Unit(nil), a.transcript.Units...),
	}
	return t
}

// Units returns the speech units of a whole answer at once: the one-shot
// projection a streamed announcement must reproduce, whatever the chunking.
func Units(blocks []render.Block) []Unit {
	var out []Unit
	frontier := 0
	for _, b := range blocks {
		for _, r := range project(b) {
			for _, u := range r.units(true, frontier) {
				if u.End <= frontier || u.Pos < frontier {
					continue
				}
				frontier = u.End
				out = append(out, u)
			}
		}
	}
	return out
}
