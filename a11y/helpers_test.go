package a11y

import (
	"time"

	"github.com/trickle-dev/trickle/render"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// gfm parses with goldmark's GFM extensions only, without render's own
// (formulas): measure's tests compare with it.
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// document is render.NewDocument for options the test knows are good (a
// refused one panics, which fails the test).
func document(opts ...render.Option) *render.Document {
	d, err := render.NewDocument(opts...)
	if err != nil {
		panic(err)
	}
	return d
}

// parse returns the top-level blocks of text, as render hands them over
// at the end of a stream.
func parse(src string) []render.Block {
	d := document()
	blocks := d.Update(src).Settled
	return append(blocks, d.Finish().Settled...)
}

// texts returns the texts of units.
func texts(units []Unit) []string {
	out := make([]string, 0, len(units))
	for _, u := range units {
		out = append(out, u.Text)
	}
	return out
}

// fakeClock is a manual clock for the announcer.
type fakeClock struct{ t time.Time }

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func textReader(b []byte) text.Reader { return text.NewReader(b) }
