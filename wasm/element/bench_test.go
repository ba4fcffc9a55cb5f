package element

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/sse"
)

// BenchmarkSessionAnswer streams a whole canned answer through a Session
// (pipeline, render, a11y) at 4 characters per token, one frame every
// tokensPerFrame events — the widget's work per answer minus the DOM calls.
func BenchmarkSessionAnswer(b *testing.B) {
	for _, tc := range []struct {
		answer         string
		tokensPerFrame int
	}{{"sample-20k", 8}, {"sample-100k", 8}} {
		g, err := sim.New(sim.Params{Answer: tc.answer, TokenChars: 4})
		if err != nil {
			b.Fatal(err)
		}
		var events [][]byte
		total := 0
		for {
			m, ok := g.Next()
			if !ok {
				break
			}
			ev := sse.AppendMessage(nil, sse.Message{ID: "s:1", Event: m.Event, Data: m.Data})
			events = append(events, ev)
			total += len(ev)
		}
		b.Run(tc.answer, func(b *testing.B) {
			b.SetBytes(int64(total))
			var frames int
			var worst time.Duration
			for b.Loop() {
				s := newSession(b, Config{Policy: render.Policy{SameOrigin: "https://app.test"}})
				frames = 0
				for i, ev := range events {
					_ = s.Write(ev)
					if (i+1)%tc.tokensPerFrame == 0 {
						t0 := time.Now()
						s.Frame()
						worst = max(worst, time.Since(t0))
						frames++
					}
				}
				s.End(nil)
				s.Frame()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(frames+1)/1e3, "µs/frame")
			b.ReportMetric(float64(worst.Microseconds()), "worst-µs")
		})
	}
}

// BenchmarkRecorderSnapshotPerFrame: a page reads the element's metrics once
// per animation frame while 25,000 tokens arrive, 16 per frame. "merge" is
// the Recorder (sorted gaps kept, new ones merged in); "sort-all" is the
// previous way, every gap sorted afresh on each read, in the same run.
func BenchmarkRecorderSnapshotPerFrame(b *testing.B) {
	const tokens, perFrame = 25000, 16
	t0 := time.Unix(0, 0)
	at := func(i int) time.Time { return t0.Add(time.Duration(i*4+i%7) * time.Millisecond) }
	for _, way := range []struct {
		name string
		read func(r *Recorder)
	}{
		{"merge", func(r *Recorder) { r.Snapshot() }},
		{"sort-all", func(r *Recorder) { gapPercentilesBySorting(r.gaps) }},
	} {
		b.Run(way.name, func(b *testing.B) {
			var r Recorder
			for b.Loop() {
				r.Start(t0)
				for i := range tokens {
					r.Token(at(i))
					if i%perFrame == 0 {
						way.read(&r)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens/perFrame), "ns/read")
		})
	}
}

// openAIEvents cuts text into tokens of n runes and wraps each in an
// OpenAI chat-completion chunk, as the relay sends them, then [DONE].
func openAIEvents(text string, n int) [][]byte {
	var events [][]byte
	runes := []rune(text)
	for i := 0; i < len(runes); i += n {
		b := []byte(`data: {"choices":[{"index":0,"delta":{"content":`)
		b = jsonx.AppendString(b, string(runes[i:min(len(runes), i+n)]))
		events = append(events, append(b, "}}]}\n\n"...))
	}
	return append(events, []byte("data: [DONE]\n\n"))
}

// BenchmarkSessionTables streams table-heavy answers through a Session,
// 4 characters per token and one frame every 8 events, like
// BenchmarkSessionAnswer, and reports the frames while a table is the
// live block apart ("table-µs/frame", "table-worst-µs"): tables.md (four
// tables of 4 to 20 rows) and one table of 60 rows.
func BenchmarkSessionTables(b *testing.B) {
	raw, err := os.ReadFile("../render/testdata/answers/tables.md")
	if err != nil {
		b.Fatal(err)
	}
	sample := string(raw)
	var long strings.Builder
	long.WriteString("What each status means for a client that retries:\n\n| Code | Name | Retry? | Backoff | Notes |\n|---:|:---|:---:|---|:--|\n")
	var rows []string
	for _, l := range strings.Split(sample, "\n") {
		if strings.HasPrefix(l, "| 2") || strings.HasPrefix(l, "| 3") || strings.HasPrefix(l, "| 4") || strings.HasPrefix(l, "| 5") {
			rows = append(rows, l)
		}
	}
	for i := range 60 {
		long.WriteString(rows[i%len(rows)] + "\n")
	}
	long.WriteString("\nThat is the whole table.\n")
	for _, tc := range []struct{ name, text string }{{"tables.md", sample}, {"table-60-rows", long.String()}} {
		events := openAIEvents(tc.text, 4)
		b.Run(tc.name, func(b *testing.B) {
			var frames, tableFrames int
			var worst, tableWorst, tableTotal time.Duration
			for b.Loop() {
				s := newSession(b, Config{Policy: render.Policy{SameOrigin: "https://app.test"}})
				frames, tableFrames, tableTotal = 0, 0, 0
				for i, ev := range events {
					_ = s.Write(ev)
					if (i+1)%8 == 0 {
						t0 := time.Now()
						p := s.Frame()
						d := time.Since(t0)
						worst = max(worst, d)
						frames++
						if strings.Contains(p.Tail, "<table>") {
							tableFrames++
							tableTotal += d
							tableWorst = max(tableWorst, d)
						}
					}
				}
				s.End(nil)
				s.Frame()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(frames+1)/1e3, "µs/frame")
			b.ReportMetric(float64(worst.Microseconds()), "worst-µs")
			b.ReportMetric(float64(tableTotal.Nanoseconds())/float64(max(tableFrames, 1))/1e3, "table-µs/frame")
			b.ReportMetric(float64(tableWorst.Microseconds()), "table-worst-µs")
		})
	}
}
