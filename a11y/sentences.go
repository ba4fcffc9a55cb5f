package a11y

import "github.com/trickle-dev/trickle/render"

// Sentences confirms the speech units of a streaming answer frame by
// frame, as the Announcer does, without its pacing, merging or stall
// release: each unit once, in order, as soon as the text after it decides
// it. The relay's hold-back (relay/internal/holdback) checks each one
// before the text it covers is sent. It is not safe for concurrent use.
type Sentences struct {
	frontier int
}

// Frame feeds what render produced this frame (the newly settled blocks,
// the current live tail, whether the text is final) and returns the units
// it confirms. Unit.End is where the unit ends in the answer's source.
func (s *Sentences) Frame(settled, tail []render.Block, final bool) []Unit {
	var out []Unit
	add := func(units []Unit) {
		for _, u := range units {
			if u.End <= s.frontier || u.Pos < s.frontier {
				continue
			}
			s.frontier = u.End
			out = append(out, u)
		}
	}
	for _, b := range settled {
		for _, r := range project(b) {
			add(r.units(true, s.frontier))
		}
	}
	var runs []run
	for _, b := range tail {
		runs = append(runs, project(b)...)
	}
	// A tail run followed by another one has ended (see Announcer.Frame).
	for i := range runs {
		add(runs[i].units(final || i < len(runs)-1, s.frontier))
	}
	return out
}
