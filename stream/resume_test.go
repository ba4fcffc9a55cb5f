package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/sse"
)

// withIDs re-encodes an SSE recording the way the relay sends it: every
// event gets "id: s:<seq>". It returns the bytes and, for each event, the
// offset where the event after it begins (what a resume replays from).
func withIDs(t *testing.T, data []byte) ([]byte, map[string]int) {
	t.Helper()
	dec, err := sse.NewDecoder(bytes.NewReader(data))
	require.NoError(t, err)
	var out []byte
	after := map[string]int{"": 0}
	for seq := 1; ; seq++ {
		ev, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		id := fmt.Sprintf("s:%d", seq)
		typ := ev.Type
		if typ == "message" {
			typ = ""
		}
		out = sse.AppendMessage(out, sse.Message{ID: id, Event: typ, Data: ev.Data})
		after[id] = len(out)
	}
	return out, after
}

func TestADroppedConnectionResumedFromTheLastEventIDLosesNothing(t *testing.T) {
	for _, rec := range recordings {
		if rec.status != Complete || !strings.HasSuffix(rec.file, ".sse") {
			continue
		}
		t.Run(rec.file, func(t *testing.T) {
			data, after := withIDs(t, readRecording(t, rec.file))
			want := run(t, data, nil)
			require.Equal(t, "complete", want.Status)
			// Every fifth byte offset (every 41st under -short): each event
			// boundary and many mid-event and mid-line drops.
			step := 5
			if testing.Short() {
				step = 41
			}
			for drop := 0; drop < len(data); drop += step {
				for _, howDropped := range []string{"close", "fail"} {
					var evs []Event
					p := newPipeline(t, WithEventHandler(func(e Event) { evs = append(evs, e) }))
					p.Write(data[:drop])
					if howDropped == "close" {
						// The body ended early; a caller that closes first sees
						// incomplete, then reconnects.
						if p.Close() == nil {
							continue // the end marker had already arrived
						}
					} else {
						p.Fail(io.ErrUnexpectedEOF)
					}
					p.Reconnect()
					from, ok := after[p.LastEventID()]
					require.True(t, ok, "unknown last event id %q", p.LastEventID())
					p.Write(data[from:])
					require.NoError(t, p.Close(), "dropped at %d (%s)", drop, howDropped)
					a := p.Answer()
					require.Equal(t, want.Text, a.Text(), "dropped at %d (%s)", drop, howDropped)
					require.Equal(t, want.Thinking, a.Thinking())
					require.Equal(t, want.Tools, a.ToolCalls())
					require.Equal(t, want.Usage, a.Usage())
					require.Equal(t, want.Finish, a.FinishReason())
					require.Equal(t, Complete, a.Status())
					require.Equal(t, want.Events, evs, "no event twice, none missing")
				}
			}
		})
	}
}
