package a11y

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/stream"
)

// harness drives an Announcer the way the widget does: one frame per
// render tick, Poll after each, the fake clock in between.
type harness struct {
	t     *testing.T
	clock *fakeClock
	a     *Announcer
	heard []Announcement
}

func newHarness(t *testing.T, opts ...Option) *harness {
	c := newClock()
	return &harness{t: t, clock: c, a: newAnnouncer(t, append([]Option{WithClock(c.now)}, opts...)...)}
}

func (h *harness) poll() []Announcement {
	got := h.a.Poll()
	for _, a := range got {
		require.Equal(h.t, h.clock.now(), a.At, "announcements are stamped with the clock")
	}
	h.heard = append(h.heard, got...)
	return got
}

// tail feeds the text so far as a live tail (nothing settled yet).
func (h *harness) tail(text string) { h.a.Frame(nil, parse(text), false) }

// finish feeds the final frame: everything settled.
func (h *harness) finish(text string) { h.a.Frame(parse(text), nil, true) }

// wait advances the clock by d, polling at every due time on the way.
func (h *harness) wait(d time.Duration) {
	end := h.clock.now().Add(d)
	for {
		due, ok := h.a.NextDue()
		if !ok || due.After(end) {
			break
		}
		if due.After(h.clock.now()) {
			h.clock.t = due
		}
		if len(h.poll()) == 0 && !due.After(h.clock.now()) {
			// Due now but nothing came out: NextDue must not lie.
			h.t.Fatalf("NextDue said %v but Poll returned nothing", due)
		}
	}
	h.clock.t = end
	h.poll()
}

// drain polls until nothing is waiting.
func (h *harness) drain() { h.wait(time.Minute) }

func contentOf(as []Announcement) []string {
	var out []string
	for _, a := range as {
		if !a.Status {
			out = append(out, a.Text)
		}
	}
	return out
}

func statusesOf(as []Announcement) []string {
	var out []string
	for _, a := range as {
		if a.Status {
			out = append(out, a.Text)
		}
	}
	return out
}

func TestStartAnnouncesRespondingAsAStatusOnce(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.a.Start() // a reconnect calls Start again: nothing new
	got := h.poll()
	require.Equal(t, []Announcement{{At: h.clock.now(), Text: StatusResponding, Status: true}}, got)
	require.Empty(t, h.poll())
}

func TestASentenceIsAnnouncedOnlyOnceTheTextAfterItArrives(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("The answer is 42.")
	h.wait(time.Second)
	require.Empty(t, contentOf(h.heard), "nothing after the stop yet: not confirmed")
	h.tail("The answer is 42. I")
	h.wait(time.Second)
	require.Equal(t, []string{"The answer is 42."}, contentOf(h.heard))
}

func TestUnitsConfirmedWithinTheMergeWindowAreOneAnnouncement(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("One. T")
	h.poll()
	h.clock.advance(100 * time.Millisecond)
	h.tail("One. Two. T")
	require.Empty(t, contentOf(h.poll()), "the first unit waits for the merge window")
	h.clock.advance(MergeWindow - 100*time.Millisecond - time.Millisecond)
	require.Empty(t, contentOf(h.poll()))
	h.clock.advance(time.Millisecond)
	require.Equal(t, []string{"One. Two."}, contentOf(h.poll()))
}

func TestUnitsFurtherApartThanTheMergeWindowAreSeparate(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("One. T")
	h.wait(MergeWindow)
	h.tail("One. Two. T")
	h.wait(2 * time.Second)
	require.Equal(t, []string{"One.", "Two."}, contentOf(h.heard))
}

func TestAnnouncementsAreAtLeastMinGapApart(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("One. T")
	h.wait(MergeWindow) // "One." at +250ms
	h.clock.advance(10 * time.Millisecond)
	h.tail("One. Two. T")
	due, ok := h.a.NextDue()
	require.True(t, ok)
	first := h.heard[len(h.heard)-1].At
	require.Equal(t, first.Add(MinGap), due, "merge window ends before the gap: the gap wins")
	h.wait(time.Second)
	require.Equal(t, []string{"One.", "Two."}, contentOf(h.heard))
}

func TestAtMostTwoAnnouncementsInAnySecond(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	text := ""
	for i := range 40 {
		text += fmt.Sprintf("Sentence %d. ", i)
		h.tail(text + "N")
		h.wait(60 * time.Millisecond)
	}
	h.finish(text)
	h.a.End(stream.Complete, nil)
	h.drain()
	var times []time.Time
	for _, a := range h.heard {
		if !a.Status {
			times = append(times, a.At)
		}
	}
	require.Greater(t, len(times), 3)
	for i := 1; i < len(times); i++ {
		require.GreaterOrEqual(t, times[i].Sub(times[i-1]), MinGap)
	}
	for i := 2; i < len(times); i++ {
		require.GreaterOrEqual(t, times[i].Sub(times[i-2]), time.Second, "three announcements within one second")
	}
	joined := strings.Join(contentOf(h.heard), " ")
	require.Equal(t, strings.TrimSpace(text), joined, "merging loses and repeats nothing")
}

func TestAStalledFinishedSentenceIsFlushedWithinTwoSeconds(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("Let me check that for you.")
	start := h.clock.now()
	h.wait(2 * time.Second)
	require.Equal(t, []string{"Let me check that for you."}, contentOf(h.heard))
	said := h.heard[len(h.heard)-1].At
	require.LessOrEqual(t, said.Sub(start), 2*time.Second)
	require.GreaterOrEqual(t, said.Sub(start), StallAfter)

	// The text resumes: what was flushed is not said again.
	h.tail("Let me check that for you. Done checking. N")
	h.drain()
	require.Equal(t, []string{"Let me check that for you.", "Done checking."}, contentOf(h.heard))
}

func TestAStalledUnfinishedSentenceWaitsForTheEndOfTheStream(t *testing.T) {
	for _, tt := range []struct {
		status stream.Status
		heard  []string
		final  string
	}{
		{stream.Incomplete, []string{"The fix is to."}, StatusIncomplete},
		// The reader stopped it: the fragment is cut off, often mid-word,
		// and not read out (seen with Orca: "… how to r.").
		{stream.Stopped, nil, StatusStopped},
	} {
		t.Run(tt.status.String(), func(t *testing.T) {
			h := newHarness(t)
			h.a.Start()
			h.tail("The fix is to")
			h.wait(10 * time.Second)
			require.Empty(t, contentOf(h.heard), "a fragment is never flushed by a stall")
			h.a.End(tt.status, nil)
			h.drain()
			require.Equal(t, tt.heard, contentOf(h.heard))
			require.Equal(t, []string{StatusResponding, tt.final}, statusesOf(h.heard))
		})
	}
}

// A stopped answer's whole sentences are said, its cut-off one is not.
func TestAStoppedAnswerSaysWhatWasWholeAndNotTheCutOffSentence(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("First, whole. Second, cut off mid-wo")
	h.a.StopWith("Stopped by you.")
	h.drain()
	require.Equal(t, []string{"First, whole."}, contentOf(h.heard))
	require.Equal(t, []string{StatusResponding, "Stopped by you."}, statusesOf(h.heard))
}

func TestAStallDoesNotFlushOpenMarkdown(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("This is *very important.")
	h.wait(5 * time.Second)
	require.Empty(t, contentOf(h.heard))
	h.tail("This is *very important.* Yes. N")
	h.drain()
	require.Equal(t, []string{"This is very important. Yes."}, contentOf(h.heard))
}

func TestEndAnnouncesExactlyOneStatusAfterTheLastContent(t *testing.T) {
	tests := []struct {
		name   string
		status stream.Status
		err    error
		want   string
	}{
		{"a complete answer says complete", stream.Complete, nil, StatusComplete},
		{"a stopped answer says stopped", stream.Stopped, nil, StatusStopped},
		{"an incomplete answer says the connection was lost", stream.Incomplete, nil, StatusIncomplete},
		{"a failure says its error in words", stream.Failed, errors.New("relay: upstream returned 429 Too Many Requests"), "Answer failed: relay: upstream returned 429 Too Many Requests."},
		{"a failure without an error still says failed", stream.Failed, nil, StatusFailed},
		{"a status that is not an end is a failure", stream.Streaming, errors.New("boom"), "Answer failed: boom."},
		{"a long error is cut on a character boundary", stream.Failed, errors.New(strings.Repeat("é", 300)), "Answer failed: " + strings.Repeat("é", maxErrorRunes) + "…"},
		{"markup in an error is not read out", stream.Failed, errors.New("bad `token` <b>*x*</b> [DONE]"), "Answer failed: bad token b x /b DONE."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.a.Start()
			h.tail("First. Second")
			h.a.End(tt.status, tt.err)
			h.a.End(stream.Complete, nil) // later ends change nothing
			h.drain()
			require.Equal(t, []string{StatusResponding, tt.want}, statusesOf(h.heard))
			want := []string{"First. Second."}
			if tt.status == stream.Stopped {
				want = []string{"First."} // the cut-off sentence is not read out
			}
			require.Equal(t, want, contentOf(h.heard))
			last := h.heard[len(h.heard)-1]
			require.True(t, last.Status, "the final status comes after the content")
			require.Zero(t, MarkdownChars(last.Text))
			endFollowsTheLastWordsByMinGap(t, h.heard)
		})
	}
}

func TestARepeatedFrameSaysNothingTwice(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	blocks := parse("One. Two. Three")
	for range 5 {
		h.a.Frame(nil, blocks, false)
		h.wait(400 * time.Millisecond)
	}
	settled := parse("One. Two. Three.")
	h.a.Frame(settled, nil, true)
	h.a.Frame(settled, nil, true)
	h.a.End(stream.Complete, nil)
	h.drain()
	require.Equal(t, []string{"One. Two.", "Three."}, contentOf(h.heard))
	require.Zero(t, Measure(h.a.Transcript()).Duplicates)
}

func TestAReconnectThatReplaysTheAnswerSaysNothingTwice(t *testing.T) {
	text := "First sentence. Second sentence.\n\n- Item one\n- Item two\n\nLast words."
	h := newHarness(t)
	h.a.Start()
	for i := 1; i < 45; i++ {
		h.tail(text[:i])
		h.wait(50 * time.Millisecond)
	}
	// The connection drops; the widget reconnects, calls Start again and
	// the re-rendered document replays from the first byte.
	h.a.Start()
	for i := 1; i <= len(text); i++ {
		h.tail(text[:i])
		h.wait(50 * time.Millisecond)
	}
	h.finish(text)
	h.a.End(stream.Complete, nil)
	h.drain()
	tr := h.a.Transcript()
	require.Equal(t, texts(Units(parse(text))), texts(tr.Units))
	m := Measure(tr)
	require.Zero(t, m.Duplicates)
	require.Equal(t, []string{StatusResponding, StatusComplete}, statusesOf(h.heard))
}

func TestStartAfterEndBeginsAFreshAnswer(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.finish("Hello.")
	h.a.End(stream.Complete, nil)
	h.drain()
	h.a.Start()
	h.finish("Hello.")
	h.a.End(stream.Complete, nil)
	h.drain()
	require.Equal(t, []string{"Hello.", "Hello."}, contentOf(h.heard))
	require.Equal(t, []string{"Hello."}, texts(h.a.Transcript().Units), "the transcript is per answer")
}

func TestFramesAfterEndAreIgnored(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.finish("Hello.")
	h.a.End(stream.Complete, nil)
	h.finish("Hello. More text.")
	h.drain()
	require.Equal(t, []string{"Hello."}, contentOf(h.heard))
}

func TestCompleteModeSaysTheWholeAnswerOnceAtTheEnd(t *testing.T) {
	text := "# Setup\n\nInstall it. Then run it.\n\n- One\n- Two\n"
	h := newHarness(t, WithMode(ModeComplete))
	require.Equal(t, ModeComplete, h.a.Mode())
	h.a.Start()
	for i := 1; i <= len(text); i++ {
		h.tail(text[:i])
		h.wait(100 * time.Millisecond)
	}
	require.Empty(t, contentOf(h.heard), "nothing before the end")
	h.finish(text)
	h.a.End(stream.Complete, nil)
	h.drain()
	require.Equal(t, []string{"Heading: Setup. Install it. Then run it. Bullet: One. Bullet: Two."}, contentOf(h.heard))
	require.Equal(t, []string{StatusResponding, StatusComplete}, statusesOf(h.heard))
}

// Whatever the mode and however the answer ends, the final status never
// shares an instant with the answer's last words, and nothing is said after
// it.
func TestTheEndStatusFollowsTheLastWordsByMinGapInEveryMode(t *testing.T) {
	for _, mode := range Modes() {
		for _, status := range []stream.Status{stream.Complete, stream.Stopped, stream.Incomplete, stream.Failed} {
			t.Run(string(mode)+"/"+status.String(), func(t *testing.T) {
				h := newHarness(t, WithMode(mode))
				h.a.Start()
				h.tail("One. Two. Three")
				h.wait(40 * time.Millisecond)
				h.a.End(status, nil)
				h.drain()
				endFollowsTheLastWordsByMinGap(t, h.heard)
				require.Len(t, statusesOf(h.heard), 2, "one start and one end status")
				switch {
				case mode == ModeOff:
				case status == stream.Stopped: // the cut-off sentence is not read out
					require.NotContains(t, strings.Join(contentOf(h.heard), " "), "Three")
					require.Contains(t, strings.Join(contentOf(h.heard), " "), "Two.")
				default:
					require.Contains(t, strings.Join(contentOf(h.heard), " "), "Three.")
				}
			})
		}
	}
}

func TestOffModeSaysOnlyStatuses(t *testing.T) {
	h := newHarness(t, WithMode(ModeOff))
	h.a.Start()
	h.tail("One. Two. Three.")
	h.wait(5 * time.Second)
	h.finish("One. Two. Three.")
	h.a.End(stream.Incomplete, nil)
	h.drain()
	require.Empty(t, contentOf(h.heard))
	require.Equal(t, []string{StatusResponding, StatusIncomplete}, statusesOf(h.heard))
}

func TestTheCallersWordsAreTheStatusesSaidOnceEach(t *testing.T) {
	h := newHarness(t, WithStartStatus("Réponse en cours."))
	h.a.Start()
	h.tail("Un. Deux.")
	h.wait(time.Second)
	h.finish("Un. Deux.")
	h.a.EndWith("Réponse terminée.")
	h.a.End(stream.Complete, nil) // a second end says nothing
	h.drain()
	require.Equal(t, []string{"Réponse en cours.", "Réponse terminée."}, statusesOf(h.heard))
	require.Equal(t, "Un. Deux.", strings.Join(contentOf(h.heard), " "), "the content is all spoken")
	require.False(t, h.heard[len(h.heard)-1].At.Before(h.heard[len(h.heard)-2].At.Add(MinGap)), "the end status follows the last sentence by MinGap, as with End")

	h = newHarness(t, WithStartStatus(""))
	h.a.Start()
	h.a.EndWith("Fini.")
	h.drain()
	require.Equal(t, []string{StatusResponding, "Fini."}, statusesOf(h.heard), "no words: the built-in start status")
}

func TestNextDueIsFalseWhenNothingWaits(t *testing.T) {
	h := newHarness(t)
	_, ok := h.a.NextDue()
	require.False(t, ok)
	h.a.Start()
	_, ok = h.a.NextDue()
	require.True(t, ok, "the start status waits for Poll")
	h.poll()
	_, ok = h.a.NextDue()
	require.False(t, ok)
}

func TestCodeAndTablesAreAnnouncedWhenTheirBlockCloses(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	code := "Intro.\n\n```go\nfunc main() {\n}\n"
	h.tail(code)
	h.wait(3 * time.Second)
	require.Equal(t, []string{"Intro."}, contentOf(h.heard), "an open fence is not summarised")
	code += "```\n\nAfter"
	h.tail(code)
	h.wait(time.Second)
	require.Equal(t, []string{"Intro.", "Code block, Go, 2 lines."}, contentOf(h.heard))
}

func TestASentenceWithOpenMarkdownInTheTailWaitsUntilItCloses(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("This is *very. Important")
	h.wait(time.Second)
	require.Empty(t, contentOf(h.heard), "the star may still open emphasis: not said as a star")
	h.tail("This is *very. Important* stuff. N")
	h.wait(time.Second)
	require.Equal(t, []string{"This is very. Important stuff."}, contentOf(h.heard))
}

func TestAFormulaInTheTailIsSaidOnceItsCloserArrivesNeverAsDollars(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("The area is $r^2. So")
	h.wait(time.Second)
	require.Empty(t, contentOf(h.heard), "the dollar may still open a formula: not said as a dollar")
	h.tail("The area is $r^2. So$ here. N")
	h.wait(time.Second)
	require.Equal(t, []string{"The area is (formula: r^2. So) here."}, contentOf(h.heard))
}

func TestATailListItemIsSaidOnceTheNextItemStarts(t *testing.T) {
	h := newHarness(t)
	h.a.Start()
	h.tail("- Install Go")
	h.wait(3 * time.Second)
	require.Empty(t, contentOf(h.heard), "the item may still grow")
	h.tail("- Install Go\n- Run")
	h.wait(time.Second)
	require.Equal(t, []string{"Bullet: Install Go."}, contentOf(h.heard))
}

func TestEndWithoutStartStillSaysTheStatus(t *testing.T) {
	h := newHarness(t)
	h.a.End(stream.Incomplete, nil)
	h.drain()
	require.Equal(t, []string{StatusIncomplete}, statusesOf(h.heard))
}

func TestWithClockNilKeepsTheRealClock(t *testing.T) {
	a := newAnnouncer(t, WithClock(nil))
	before := time.Now()
	a.Start()
	got := a.Poll()
	require.Len(t, got, 1)
	require.False(t, got[0].At.Before(before))
}

func TestAParagraphThatBecomesASetextHeadingLosesNothingAndRepeatsNothing(t *testing.T) {
	// Models write ATX headings; a setext underline arriving after a
	// sentence was said cannot take the sentence back, but the rest of
	// the heading is still said, once.
	h := newHarness(t)
	h.a.Start()
	h.tail("Hello there. World")
	h.wait(time.Second)
	h.tail("Hello there. World\n===\n\nNext")
	h.wait(time.Second)
	h.finish("Hello there. World\n===\n\nNext.")
	h.a.End(stream.Complete, nil)
	h.drain()
	require.Equal(t, []string{"Hello there.", "World.", "Next."}, contentOf(h.heard))
	require.Zero(t, Measure(h.a.Transcript()).Duplicates)
}

func TestParseModeNamesTheModes(t *testing.T) {
	for _, m := range Modes() {
		got, err := ParseMode(string(m))
		require.NoError(t, err)
		require.Equal(t, m, got)
	}
	got, err := ParseMode("")
	require.NoError(t, err)
	require.Equal(t, ModeSentences, got, "no name is the default")
	_, err = ParseMode("loud")
	require.EqualError(t, err, `a11y: "loud" is not an announcement mode (sentences, complete or off)`)
}
