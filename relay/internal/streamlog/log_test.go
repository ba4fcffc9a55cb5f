package streamlog

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// The log's fast path for tokens writes exactly what the sse encoder
// writes, for any data and any stream id, including ids and data the fast
// path must leave to the encoder.
func TestTheLogEncodesEveryEventAsTheSSEEncoderDoes(t *testing.T) {
	events := []struct{ event, data string }{
		{"", `{"delta":"# De"}`},
		{"", "plain words"},
		{"", ""},
		{"", "two\nlines"},
		{"", "cr\rline"},
		{"", "crlf\r\nline"},
		{"", " leading space"},
		{stream.StatusEventType, `{"status":"failed"}`},
		{"ping", "x"},
		{"", "[DONE]"},
	}
	for _, id := range []string{"abcdefghijklmnop", "with\nnewline", "nul\x00id", "co:lon", ""} {
		l := New(nil, nil, id, "plain")
		var want []byte
		for i, ev := range events {
			l.appendLocked(ev.event, ev.data)
			want = sse.AppendMessage(want, sse.Message{ID: id + ":" + strconv.Itoa(i+1), Event: ev.event, Data: ev.data})
			require.Equal(t, len(want), l.ends[i], "id %q, event %d ends where the encoder's does", id, i+1)
		}
		require.Equal(t, string(want), string(l.buf), "id %q", id)
	}
}

// BenchmarkAppendToken is the log's append of one token event, by the fast
// path (an id without bytes to clean) and through the sse encoder.
func BenchmarkAppendToken(b *testing.B) {
	for _, c := range []struct{ name, id string }{{"fast", "abcdefghijklmnop"}, {"encoder", "co:lon"}} {
		b.Run(c.name, func(b *testing.B) {
			l := New(nil, nil, c.id, "plain")
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%4096 == 0 {
					l.buf, l.ends = l.buf[:0], l.ends[:0]
				}
				l.appendLocked("", `{"choices":[{"delta":{"content":"word "}}]}`)
			}
		})
	}
}
