package render

import (
	"fmt"
	"strings"
	"testing"
)

// streamingTable is an answer that is mostly one growing table of the
// given number of body rows (taken in turn from the first table of
// testdata/answers/tables.md: code spans, links, an escaped pipe,
// alignment), after an introduction that settles before the table starts.
func streamingTable(b testing.TB, rows int) string {
	sample := loadSample(b, "answers/tables.md")
	lines := strings.Split(sample, "\n")
	var head, body []string
	for i, l := range lines {
		if strings.HasPrefix(l, "| Code |") {
			head = lines[i : i+2]
			for _, r := range lines[i+2:] {
				if !strings.HasPrefix(r, "|") {
					break
				}
				body = append(body, r)
			}
			break
		}
	}
	var t strings.Builder
	t.WriteString("## Status codes\n\nWhat each status means for a client that retries:\n\n")
	t.WriteString(strings.Join(head, "\n") + "\n")
	for i := range rows {
		t.WriteString(body[i%len(body)] + "\n")
	}
	t.WriteString("\nThat is the whole table.\n")
	return t.String()
}

// BenchmarkTableFrames streams an answer that is mostly one table, 16 bytes
// (4 tokens) per frame, and measures the render side of every frame: the
// Document's Update and the TailDiffer's patch. Tables of 10 and 40 rows:
// a frame's cost should follow the row being written, not the table.
// "whole-table" is the same Document told to parse the table whole every
// frame, as it did before it kept finished rows, in the same run.
func BenchmarkTableFrames(b *testing.B) {
	for _, rows := range []int{10, 40} {
		text := streamingTable(b, rows)
		const step = 16
		frames := (len(text) + step - 1) / step
		for _, mode := range []string{"kept-rows", "whole-table"} {
			b.Run(fmt.Sprintf("%s/rows=%d", mode, rows), func(b *testing.B) {
				b.ReportAllocs()
				loopCPU(b, func() {
					d := newDocument(b)
					d.noRowCache = mode == "whole-table"
					var td TailDiffer
					for n := step; n < len(text)+step; n += step {
						f := d.Update(text[:min(n, len(text))])
						td.Diff(f.Tail)
					}
					d.Finish()
				})
				b.ReportMetric(float64(frames), "frames")
			})
		}
	}
}
