package sse

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// openAIStream returns n events of the OpenAI Chat Completions streaming
// shape, the workload of bench/sse.
func openAIStream(n int) []byte {
	return bytes.Repeat([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n"), n)
}

type countHandler struct{ events, bytes int }

func (c *countHandler) Event(e Event) { c.events++; c.bytes += len(e.Data) }
func (c *countHandler) Retry(int)     {}

// The only allocation per event is the event's Data string: the line is
// parsed in place, "message" is a constant and the last event ID is reused.
func TestParsingAllocatesOnlyEachEventsData(t *testing.T) {
	const events = 200
	stream := openAIStream(events)
	h := &countHandler{}
	p := newParser(t, h)
	_, _ = p.Write(stream) // grow the parser's buffers once
	for _, chunk := range []int{7, 1024, len(stream)} {
		allocs := testing.AllocsPerRun(5, func() {
			for i := 0; i < len(stream); i += chunk {
				_, _ = p.Write(stream[i:min(i+chunk, len(stream))])
			}
		})
		require.LessOrEqual(t, allocs, float64(events), "chunk %d: allocations for %d events", chunk, events)
	}
	// Ids change with every event in a relayed stream; they are cut from
	// the same blocks as the data.
	var withIDs []byte
	for i := range events {
		withIDs = fmt.Appendf(withIDs, "id: stream-1:%d\ndata: {\"choices\":[]}\n\n", i)
	}
	allocs := testing.AllocsPerRun(5, func() { _, _ = p.Write(withIDs) })
	require.LessOrEqual(t, allocs, float64(events), "events with ids: allocations for %d events", events)
	require.Equal(t, fmt.Sprintf("stream-1:%d", events-1), p.LastEventID())

	// Custom event types are interned: a repeated type is not a new string.
	typed := bytes.Repeat([]byte("event: delta\ndata: x\n\n"), events)
	allocs = testing.AllocsPerRun(5, func() { _, _ = p.Write(typed) })
	require.LessOrEqual(t, allocs, float64(events), "typed events: allocations for %d events", events)
}

// BenchmarkParseOpenAI is the Go side of bench/sse: the same OpenAI-style
// stream, cut into 1 KiB and 16 KiB chunks.
func BenchmarkParseOpenAI(b *testing.B) {
	stream := openAIStream(20_000) // ~1 MiB
	for _, chunk := range []int{1 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("chunk=%dKiB", chunk>>10), func(b *testing.B) {
			h := &countHandler{}
			p := newParser(b, h)
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				for i := 0; i < len(stream); i += chunk {
					_, _ = p.Write(stream[i:min(i+chunk, len(stream))])
				}
			}
			b.ReportMetric(float64(h.events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkParseRelayed is the relay's shape: every event has an id.
func BenchmarkParseRelayed(b *testing.B) {
	var stream []byte
	for i := range 20_000 {
		stream = fmt.Appendf(stream, "id: 7f3a9c:%d\ndata: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n", i)
	}
	h := &countHandler{}
	p := newParser(b, h)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < len(stream); i += 16 << 10 {
			_, _ = p.Write(stream[i:min(i+16<<10, len(stream))])
		}
	}
	b.ReportMetric(float64(h.events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLongLine proves linear time whatever the cut: one data line of
// 64 KiB, 256 KiB and 1 MiB, fed whole and in 1–7 byte pieces. Linear means
// MB/s stays flat as the line grows (pieces cost a constant per call more
// than one whole write); a parser that rescanned its buffer on every write
// would lose a factor of four in MB/s at each step.
func BenchmarkLongLine(b *testing.B) {
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
		line := []byte("data: " + strings.Repeat("abcdefghij", size/10) + "\n\n")
		var pieces []int
		for i, n := 0, 0; n < len(line); i++ {
			pieces = append(pieces, 1+i%7)
			n += 1 + i%7
		}
		for _, cut := range []string{"whole", "pieces=1-7"} {
			b.Run(fmt.Sprintf("line=%dKiB/%s", size>>10, cut), func(b *testing.B) {
				h := &countHandler{}
				p := newParser(b, h, WithMaxEventSize(4<<20))
				b.SetBytes(int64(len(line)))
				b.ReportAllocs()
				for b.Loop() {
					if cut == "whole" {
						_, _ = p.Write(line)
						continue
					}
					rest := line
					for _, n := range pieces {
						n = min(n, len(rest))
						_, _ = p.Write(rest[:n])
						rest = rest[n:]
					}
				}
				if h.events == 0 {
					b.Fatal("no event dispatched")
				}
			})
		}
	}
}

func BenchmarkAppendMessage(b *testing.B) {
	m := Message{ID: "stream:42", Data: `{"choices":[{"delta":{"content":"tok"}}]}`}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendMessage(buf[:0], m)
	}
}
