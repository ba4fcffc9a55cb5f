package a11y_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// The widget's frame loop: render each text update, feed the frame to the
// announcer, and put what Poll returns into the live regions.
func Example() {
	clock := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ann, err := a11y.New(a11y.WithClock(func() time.Time { return clock }))
	if err != nil {
		fmt.Println(err)
		return
	}
	doc, err := render.NewDocument()
	if err != nil {
		fmt.Println(err)
		return
	}

	say := func() {
		for _, a := range ann.Poll() {
			region := "live"
			if a.Status {
				region = "status"
			}
			fmt.Printf("%-6s %s\n", region, a.Text)
		}
	}

	ann.Start()
	say()
	answer := "## Install\n\nRun the installer. Then restart your shell.\n\n```sh\nexport PATH=$PATH:/usr/local/go/bin\n```\n"
	for i := 0; i < len(answer); i += 8 { // tokens arrive
		f := doc.Update(answer[:min(i+8, len(answer))])
		ann.Frame(f.Settled, f.TailBlocks, f.Final)
		clock = clock.Add(100 * time.Millisecond)
		say()
	}
	f := doc.Finish()
	ann.Frame(f.Settled, f.TailBlocks, f.Final)
	ann.End(stream.Complete, nil)
	for {
		due, ok := ann.NextDue()
		if !ok {
			break
		}
		if due.After(clock) {
			clock = due // the widget sets a timer instead
		}
		say()
	}
	// Output:
	// status Assistant is responding.
	// live   Heading: Install. Run the installer.
	// live   Then restart your shell.
	// live   Code block, Shell, 1 line.
	// status Answer complete.
}

// Units is the one-shot speech of a whole answer.
func ExampleUnits() {
	answer := "| Name | Price |\n|---|---|\n| Tea | 3.50 |\n\n- [x] Dr. Who said *hi*. See <https://example.com/a?b=1>.\n"
	for _, u := range a11y.Units(blocks(answer)) {
		fmt.Println(u.Text)
	}
	// Output:
	// Table, 1 row, 2 columns: Name, Price.
	// Done: Dr. Who said hi.
	// See https://example.com/a?b=1.
}

// Measure gives the screen-reader lab's counters for a transcript.
func ExampleMeasure() {
	clock := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ann, err := a11y.New(a11y.WithClock(func() time.Time { return clock }))
	if err != nil {
		fmt.Println(err)
		return
	}
	ann.Start()
	text := "First point. Second point. Third point."
	for i := 1; i <= len(text); i++ {
		ann.Frame(nil, blocks(text[:i]), false)
		clock = clock.Add(40 * time.Millisecond)
		ann.Poll()
	}
	ann.Frame(blocks(text), nil, true)
	ann.End(stream.Complete, nil)
	clock = clock.Add(time.Second)
	ann.Poll() // the last sentence
	clock = clock.Add(a11y.MinGap)
	ann.Poll() // "Answer complete.", MinGap after it
	m := a11y.Measure(ann.Transcript())
	fmt.Printf("units %d, duplicates %d, fragments %d, markdown %d, statuses %d\n",
		m.Units, m.Duplicates, m.Fragments, m.MarkdownChars, m.Statuses)
	// Output:
	// units 3, duplicates 0, fragments 0, markdown 0, statuses 2
}

// blocks renders text in one go and returns all its blocks.
func blocks(text string) []render.Block {
	d, _ := render.NewDocument() // no option, nothing to refuse
	settled := d.Update(text).Settled
	return append(settled, d.Finish().Settled...)
}

// In ModeComplete the answer is said once, at the end, like an editor's
// chat panel does.
func ExampleWithMode() {
	clock := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ann, err := a11y.New(a11y.WithMode(a11y.ModeComplete), a11y.WithClock(func() time.Time { return clock }))
	if err != nil {
		fmt.Println(err)
		return
	}
	ann.Start()
	ann.Frame(blocks("# Result\n\nIt worked. All **42** tests pass."), nil, true)
	ann.End(stream.Complete, nil)
	start := clock
	for range 2 {
		for _, a := range ann.Poll() {
			fmt.Printf("%v %s\n", a.At.Sub(start), a.Text)
		}
		// The final status follows the answer by the announcer's spacing.
		due, _ := ann.NextDue()
		clock = due
	}
	// Output:
	// 0s Assistant is responding.
	// 0s Heading: Result. It worked. All 42 tests pass.
	// 300ms Answer complete.
}

// A mode read from user input goes through ParseMode; New refuses a value
// that is none of Modes by name.
func ExampleNew_badOption() {
	_, err := a11y.New(a11y.WithMode("loud"))
	fmt.Println(err)
	fmt.Println(errors.Is(err, a11y.ErrBadOption))
	// Output:
	// a11y: bad option: WithMode("loud"): want sentences, complete or off
	// true
}
