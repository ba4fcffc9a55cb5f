package a11y

import (
	"os"
	"testing"
	"time"

	"github.com/clipperhouse/uax29/v2/sentences"
	"github.com/trickle-dev/trickle/stream"
)

// BenchmarkSegment compares Trickle's layered segmenter with the plain
// uax29 iterator (the peer) on the speech text of the 20 KB sample.
func BenchmarkSegment(b *testing.B) {
	src, err := os.ReadFile(sample20k)
	if err != nil {
		b.Fatal(err)
	}
	var text []byte
	for _, blk := range parse(string(src)) {
		for _, r := range project(blk) {
			text = append(text, r.text...)
			text = append(text, ' ')
		}
	}
	flags := make([]uint8, len(text))
	b.Run("peer=uax29", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			it := sentences.FromBytes(text)
			for it.Next() {
			}
		}
	})
	b.Run("trickle", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			sentenceEnds(text, flags, true)
		}
	})
}

// BenchmarkStream streams the 20 KB sample in 8-byte tokens through
// render.Document alone (the peer) and through Document plus the
// Announcer, one frame per token: the difference is what announcing costs.
func BenchmarkStream(b *testing.B) {
	src, err := os.ReadFile(sample20k)
	if err != nil {
		b.Fatal(err)
	}
	text := string(src)
	run := func(b *testing.B, announce bool) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			clock := newClock()
			a := newAnnouncer(b, WithClock(clock.now))
			d := document()
			a.Start()
			for i := 8; i < len(text)+8; i += 8 {
				f := d.Update(text[:min(i, len(text))])
				if announce {
					a.Frame(f.Settled, f.TailBlocks, f.Final)
					a.Poll()
				}
				clock.advance(16 * time.Millisecond)
			}
			f := d.Finish()
			if announce {
				a.Frame(f.Settled, f.TailBlocks, f.Final)
				a.End(stream.Complete, nil)
				a.Poll()
			}
		}
	}
	b.Run("peer=render", func(b *testing.B) { run(b, false) })
	b.Run("render+a11y", func(b *testing.B) { run(b, true) })
}
