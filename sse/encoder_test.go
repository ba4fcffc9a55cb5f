package sse

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestAppendMessageWritesTheExactBytesOfOneEvent(t *testing.T) {
	cases := []struct {
		name string
		m    Message
		want string
	}{
		{"data only", Message{Data: "hello"}, "data: hello\n\n"},
		{"every field", Message{ID: "s1:7", Event: "delta", Data: "x", Retry: 2500 * time.Millisecond},
			"event: delta\nid: s1:7\nretry: 2500\ndata: x\n\n"},
		{"multi-line data split at LF, CRLF and CR", Message{Data: "a\nb\r\nc\rd"},
			"data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"a trailing line end gives an empty last data line", Message{Data: "a\n"}, "data: a\ndata: \n\n"},
		{"empty data is still one event", Message{}, "data: \n\n"},
		{"leading spaces survive because one space is always written", Message{Data: " x"}, "data:  x\n\n"},
		{"CR and LF are stripped from ids and names", Message{ID: "a\r\nb", Event: "e\nv", Data: "x"},
			"event: ev\nid: ab\ndata: x\n\n"},
		{"NUL is stripped from ids", Message{ID: "a\x00b", Data: "x"}, "id: ab\ndata: x\n\n"},
		{"an id that strips to nothing is left out rather than resetting", Message{ID: "\r\n\x00", Data: "x"}, "data: x\n\n"},
		{"sub-millisecond retry rounds down", Message{Data: "x", Retry: time.Microsecond}, "retry: 0\ndata: x\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, string(AppendMessage([]byte("prefix|"), tc.m))[len("prefix|"):])
		})
	}
}

func TestAppendCommentWritesOneCommentLinePerLine(t *testing.T) {
	require.Equal(t, ":\n", string(AppendComment(nil, "")))
	require.Equal(t, ": ping\n", string(AppendComment(nil, "ping")))
	require.Equal(t, ": a\n: b\n:\n: c\n", string(AppendComment(nil, "a\r\nb\n\rc")))
}

func TestEncodeRefusesFieldsThatWouldBreakTheStream(t *testing.T) {
	for _, m := range []Message{
		{ID: "a\nb"}, {ID: "a\rb"}, {ID: "a\x00b"}, {Event: "a\nb"}, {Event: "x\r"},
	} {
		var buf bytes.Buffer
		err := NewEncoder(&buf).Encode(m)
		require.ErrorIs(t, err, ErrInvalidMessage, "%+v", m)
		require.Empty(t, buf.String(), "nothing is written for %+v", m)
	}
	require.NoError(t, Message{ID: "ok", Event: "ok", Data: "multi\nline\r\n"}.Validate())
}

type flushCounter struct {
	bytes.Buffer
	flushes []int // buffer length at each flush
	err     error
}

func (f *flushCounter) Flush() error {
	f.flushes = append(f.flushes, f.Len())
	return f.err
}

type httpStyleFlusher struct {
	bytes.Buffer
	flushes int
}

func (f *httpStyleFlusher) Flush() { f.flushes++ }

func TestTheEncoderFlushesAfterEveryEventAndComment(t *testing.T) {
	w := &flushCounter{}
	e := NewEncoder(w)
	require.NoError(t, e.Encode(Message{Data: "a"}))
	require.NoError(t, e.Comment("keep-alive"))
	require.NoError(t, e.Encode(Message{Data: "b"}))
	require.Equal(t, "data: a\n\n: keep-alive\ndata: b\n\n", w.String())
	require.Equal(t, []int{9, 22, 31}, w.flushes)

	h := &httpStyleFlusher{}
	require.NoError(t, NewEncoder(h).Encode(Message{Data: "a"}))
	require.Equal(t, 1, h.flushes, "an http.Flusher-shaped writer is flushed too")
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestTheEncoderReportsWriteAndFlushErrors(t *testing.T) {
	err := NewEncoder(failingWriter{}).Encode(Message{Data: "a"})
	require.ErrorContains(t, err, "sse: writing event: broken pipe")
	err = NewEncoder(&flushCounter{err: errors.New("gone")}).Encode(Message{Data: "a"})
	require.ErrorContains(t, err, "sse: flushing event: gone")
}

// expectedEvent is what a receiver makes of m after prev's last event ID.
func expectedEvent(m Message, prevID string) Event {
	e := Event{Type: "message", Data: m.Data, LastEventID: prevID}
	if ev := strings.NewReplacer("\r", "", "\n", "").Replace(m.Event); ev != "" {
		e.Type = ev
	}
	if id := strings.NewReplacer("\r", "", "\n", "", "\x00", "").Replace(m.ID); id != "" {
		e.LastEventID = id
	}
	e.Data = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(m.Data)
	return e
}

var messageRunes = []rune("ab :\r\n\x00\t\uFEFF€😀")

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteRune(messageRunes[r.IntN(len(messageRunes))])
	}
	return b.String()
}

// Round trip: random messages, encoded back to back and decoded in random
// pieces, come back as the same events with the same retry values.
func TestEncodeThenDecodeGivesTheSameEvents(t *testing.T) {
	runs := 500
	if testing.Short() {
		runs = 100
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range runs {
		var (
			stream  []byte
			want    []Event
			retries []int
			id      string
		)
		for range 1 + r.IntN(6) {
			m := Message{ID: randomText(r), Event: randomText(r), Data: randomText(r)}
			if r.IntN(3) == 0 {
				m.Retry = time.Duration(r.IntN(10000)) * time.Millisecond
				if m.Retry > 0 {
					retries = append(retries, int(m.Retry.Milliseconds()))
				}
			}
			stream = AppendMessage(stream, m)
			if r.IntN(4) == 0 {
				stream = AppendComment(stream, randomText(r))
			}
			e := expectedEvent(m, id)
			id = e.LastEventID
			want = append(want, e)
		}
		var got []Event
		var gotRetries []int
		p := newParser(t, sliceHandler{&got, &gotRetries})
		cuts := randomCuts(r, len(stream))
		prev := 0
		for _, c := range append(cuts, len(stream)) {
			_, err := p.Write(stream[prev:c])
			require.NoError(t, err)
			prev = c
		}
		require.NoError(t, p.Close(), "stream %q", stream)
		require.Equal(t, want, got, "stream %q", stream)
		require.Equal(t, retries, gotRetries)
	}
}

func FuzzEncoderRoundTrip(f *testing.F) {
	f.Add("1", "delta", "hello\nworld", uint32(0))
	f.Add("a\r\nb", "e\rv", "x\r\ny\rz", uint32(3000))
	f.Add("", "", "", uint32(1))
	f.Add("\x00", " ", " lead", uint32(0))
	f.Fuzz(func(t *testing.T, id, event, data string, retry uint32) {
		if !utf8.ValidString(id) || !utf8.ValidString(event) || !utf8.ValidString(data) {
			t.Skip("the round trip holds for UTF-8 text; other bytes become U+FFFD by design")
		}
		m := Message{ID: id, Event: event, Data: data, Retry: time.Duration(retry) * time.Millisecond}
		var got []Event
		var retries []int
		p := newParser(t, sliceHandler{&got, &retries})
		_, err := p.Write(AppendMessage([]byte("id: prev\ndata: first\n\n"), m))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		want := []Event{msg("first", "prev"), expectedEvent(m, "prev")}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("message %+v came back as %+v, want %+v", m, got, want)
		}
		if (retry > 0) != (len(retries) == 1) || (retry > 0 && retries[0] != int(retry)) {
			t.Fatalf("retry %d came back as %v", retry, retries)
		}
		var buf bytes.Buffer
		if err := NewEncoder(&buf).Encode(m); (err == nil) != (m.Validate() == nil) {
			t.Fatalf("Encode error %v disagrees with Validate %v", err, m.Validate())
		}
	})
}
