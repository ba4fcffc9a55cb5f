package render

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// benchTail is the unsettled end of the answer in the per-frame benchmark:
// an open list with inline markup, the usual shape of a live tail.
const benchTail = "Next steps:\n\n" +
	"1. Profile the **hot path** with `pprof` and look at the flame graph;\n" +
	"2. Replace the map lookup with a [slice index](https://go.dev/ref/spec#Index_expressions)\n" +
	"   when keys are dense, and measure again;\n" +
	"3. Batch the writes: one `Flush` per frame, *not* per token, which also\n" +
	"   keeps the syscall count down and the latency"

func benchSample(b *testing.B) string {
	t, err := os.ReadFile(sample("sample-100k"))
	if err != nil {
		b.Fatal(err)
	}
	warmUp.Do(func() {
		// On Node, wasm code starts in a baseline compiler and is
		// optimized once hot: without a warm-up the first benchmark of
		// the process measures the compiler, not the renderer.
		text := string(t[:20000])
		for range 3 {
			d := newDocument(b)
			for n := 160; n < len(text); n += 160 {
				d.Update(text[:n])
				if n%3200 == 0 {
					convert(b, text[:n])
				}
			}
			d.Finish()
		}
	})
	return string(t)
}

var warmUp sync.Once

// loopCPU runs body in a b.Loop and reports CPU nanoseconds per op.
func loopCPU(b *testing.B, body func()) {
	start, ok := cpuNow()
	for b.Loop() {
		body()
	}
	if end, ok2 := cpuNow(); ok && ok2 && b.N > 0 {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// settledPrefix returns the start of text up to the last blank line before
// a heading within n bytes, so that everything in it settles.
func settledPrefix(text string, n int) string {
	i := strings.LastIndex(text[:n], "\n\n#")
	if i < 0 {
		return ""
	}
	// The caller checks that it did settle (an open fence would not).
	return text[:i+2]
}

// BenchmarkFrame measures one frame (Update with 160 more bytes of tail)
// when the answer so far is 2 KB and 100 KB, with the same tail. Ours should
// not care about the settled part; goldmark re-rendering everything does.
func BenchmarkFrame(b *testing.B) {
	text := benchSample(b)
	for _, size := range []int{2 << 10, 100 << 10} {
		prefix := settledPrefix(text, min(size, len(text)))
		full := prefix + benchTail
		before := prefix + benchTail[:len(benchTail)-160]
		primed := newDocument(b)
		primed.Update(before)
		if primed.settled < len(prefix)-2 {
			b.Fatalf("prefix of %d bytes did not settle (settled %d)", len(prefix), primed.settled)
		}
		b.Run(fmt.Sprintf("ours/answer=%dKB", len(full)>>10), func(b *testing.B) {
			b.ReportAllocs()
			loopCPU(b, func() {
				d := *primed // the same state every frame: the tail before the frame
				d.Update(full)
			})
		})
		b.Run(fmt.Sprintf("goldmark/answer=%dKB", len(full)>>10), func(b *testing.B) {
			b.ReportAllocs()
			md := markdownFor(config{})
			src := []byte(full)
			var buf bytes.Buffer
			loopCPU(b, func() {
				buf.Reset()
				_ = md.Convert(src, &buf)
			})
		})
	}
}

// BenchmarkStream streams the whole 100 KB sample at 4 characters per
// token, one frame per 40 tokens: ours (settled blocks once, the tail per
// frame) against goldmark re-rendering the whole answer every frame.
func BenchmarkStream(b *testing.B) {
	text := benchSample(b)
	const frame = 4 * 40
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		loopCPU(b, func() {
			d := newDocument(b)
			for n := frame; n < len(text); n += frame {
				d.Update(text[:n])
			}
			d.Update(text)
			d.Finish()
		})
	})
	// The same answer opening with a citation "[1]" whose definition only
	// comes at the end: nothing settles before it, closed blocks wait as
	// pending HTML and are re-parsed only when definitions change.
	cited := "Sleep matters [1].\n\n" + text + "\n\n[1]: https://ok.example/paper\n"
	b.Run("ours-citation-pending", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(cited)))
		loopCPU(b, func() {
			d := newDocument(b)
			for n := frame; n < len(cited); n += frame {
				d.Update(cited[:n])
			}
			d.Update(cited)
			d.Finish()
		})
	})
	b.Run("goldmark", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		md := markdownFor(config{})
		var buf bytes.Buffer
		loopCPU(b, func() {
			for n := frame; n < len(text); n += frame {
				buf.Reset()
				_ = md.Convert([]byte(text[:n]), &buf)
			}
			buf.Reset()
			_ = md.Convert([]byte(text), &buf)
		})
	})
}
