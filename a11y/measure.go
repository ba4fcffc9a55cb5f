package a11y

import (
	"strings"
	"time"
)

// Transcript is what an Announcer said during one answer: every
// announcement in order, and the content units they carried.
type Transcript struct {
	Announcements []Announcement
	Units         []Unit
}

// Metrics are the counters the screen-reader lab shows, measured on a
// transcript by rules that do not trust the announcer's own bookkeeping.
type Metrics struct {
	// Announcements counts content announcements; Statuses the others.
	Announcements, Statuses int
	// Units counts content units.
	Units int
	// Duplicates counts units whose source span overlaps one said before:
	// something heard twice.
	Duplicates int
	// Fragments counts units that do not end the way a sentence or clause
	// ends (".", "!", "?", "…", ":", ";", possibly before a closing quote
	// or bracket).
	Fragments int
	// MarkdownChars counts markdown syntax heard: '*', '#', '`', '|' and
	// "](" in any announcement.
	MarkdownChars int
	// LongestWait is the longest time a unit waited between being
	// confirmed and being said.
	LongestWait time.Duration
}

// Measure computes the lab's counters for a transcript.
func Measure(t Transcript) Metrics {
	var m Metrics
	for _, a := range t.Announcements {
		if a.Status {
			m.Statuses++
		} else {
			m.Announcements++
		}
		m.MarkdownChars += MarkdownChars(a.Text)
	}
	type span struct{ pos, end int }
	var said []span
	for _, u := range t.Units {
		m.Units++
		for _, s := range said {
			if u.Pos < s.end && s.pos < u.End {
				m.Duplicates++
				break
			}
		}
		said = append(said, span{u.Pos, u.End})
		if !endsSentence(u.Text) {
			m.Fragments++
		}
		if !u.Said.IsZero() && !u.Ready.IsZero() {
			m.LongestWait = max(m.LongestWait, u.Said.Sub(u.Ready))
		}
	}
	return m
}

// MarkdownChars counts the markdown syntax characters in s that a screen
// reader would read out: '*', '#', '`', '|' and the link seam "](".
func MarkdownChars(s string) int {
	n := strings.Count(s, "](")
	for _, r := range s {
		switch r {
		case '*', '#', '`', '|':
			n++
		}
	}
	return n
}
