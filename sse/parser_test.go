package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestAnOversizeEventIsReportedDroppedAndTheStreamGoesOn(t *testing.T) {
	big := strings.Repeat("x", 100)
	cases := []struct {
		name, input string
		want        []string
	}{
		{"one long data line",
			"data: a\n\ndata: " + big + "\n\ndata: b\n\n",
			[]string{`event "message" "a" ""`, "too large", `event "message" "b" ""`}},
		{"many short data lines adding up",
			"data: a\n\n" + strings.Repeat("data: 0123456789\n", 10) + "\ndata: b\n\n",
			[]string{`event "message" "a" ""`, "too large", `event "message" "b" ""`}},
		{"a long event type",
			"event: " + big + "\ndata: x\n\ndata: b\n\n",
			[]string{"too large", `event "message" "b" ""`}},
		{"a long unknown field",
			"foo: " + big + "\ndata: x\n\ndata: b\n\n",
			[]string{"too large", `event "message" "b" ""`}},
		{"an oversize event at the end of the stream",
			"data: a\n\ndata: " + big,
			[]string{`event "message" "a" ""`, "too large"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i <= len(tc.input); i++ {
				o := parseCut(t, tc.input, []int{i}, WithMaxEventSize(64))
				require.Equal(t, tc.want, o.Log, "cut at %d", i)
			}
			o := decodeAll(t, iotest.OneByteReader(strings.NewReader(tc.input)), WithMaxEventSize(64))
			require.Equal(t, tc.want, o.Log, "pull decoder")
		})
	}
}

func TestTheEventSizeBoundIsInclusive(t *testing.T) {
	// "data:" + 59 bytes = a 64-byte line: fits; one more byte does not.
	fits := "data:" + strings.Repeat("y", 59) + "\n\n"
	o := parseCut(t, fits, nil, WithMaxEventSize(64))
	require.Equal(t, []string{fmt.Sprintf("event %q %q %q", "message", strings.Repeat("y", 59), "")}, o.Log)
	o = parseCut(t, "data:"+strings.Repeat("y", 60)+"\n\n", nil, WithMaxEventSize(64))
	require.Equal(t, []string{"too large"}, o.Log)
}

func TestCommentsOfAnyLengthNeverCountAgainstTheBound(t *testing.T) {
	input := ":" + strings.Repeat("p", 10_000) + "\ndata: ok\n\n"
	for _, cuts := range [][]int{nil, {1}, {500, 5000}} {
		o := parseCut(t, input, cuts, WithMaxEventSize(64))
		require.Equal(t, []string{`event "message" "ok" ""`}, o.Log)
	}
}

func TestTheDefaultBoundIsOneMebibyte(t *testing.T) {
	data := strings.Repeat("z", DefaultMaxEventSize-len("data:"))
	o := parseCut(t, "data:"+data+"\n\n", []int{1000})
	require.Len(t, o.Log, 1)
	o = parseCut(t, "data:"+data+"z\n\n", []int{1000})
	require.Equal(t, []string{"too large"}, o.Log)
}

func TestTheTooLargeErrorSaysWhatAndWhere(t *testing.T) {
	p := newParser(t, HandlerFunc(func(Event) {}), WithMaxEventSize(16))
	input := []byte("data: ok\n\ndata: 0123456789abcdef\n\ndata: b\n\n")
	n, err := p.Write(input)
	require.Equal(t, len(input), n, "the whole chunk is consumed")
	require.ErrorIs(t, err, ErrEventTooLarge)
	require.Contains(t, err.Error(), "more than 16 bytes")
	require.Contains(t, err.Error(), "stream byte")
}

// dropLog records events and drops in the order a DropHandler hears them.
type dropLog struct{ log []string }

func (d *dropLog) Event(e Event)     { d.log = append(d.log, "event "+e.Data) }
func (d *dropLog) Retry(int)         {}
func (d *dropLog) Dropped(err error) { d.log = append(d.log, "dropped: "+err.Error()) }

func TestADropHandlerHearsEveryDropInItsPlaceWhateverTheCut(t *testing.T) {
	big := strings.Repeat("x", 40)
	input := "data: a\n\ndata: " + big + "\n\ndata: b\n\ndata: " + big + "\n\n" +
		"data: " + big + "\n\ndata: c\n\n"
	want := []string{"event a", "dropped", "event b", "dropped", "dropped", "event c"}
	shape := func(log []string) []string {
		out := make([]string, len(log))
		for i, l := range log {
			out[i], _, _ = strings.Cut(l, ":")
		}
		return out
	}
	for i := 0; i <= len(input); i++ {
		for _, j := range []int{i, (i + len(input)) / 2, len(input)} {
			d := &dropLog{}
			p := newParser(t, d, WithMaxEventSize(32))
			var errs []error
			for _, piece := range []string{input[:i], input[i:j], input[j:]} {
				if _, err := p.Write([]byte(piece)); err != nil {
					errs = append(errs, err)
				}
			}
			require.Equal(t, want, shape(d.log), "cuts at %d and %d", i, j)
			// Write's errors, unjoined, are the same three drops.
			var n int
			for _, err := range errs {
				require.ErrorIs(t, err, ErrEventTooLarge)
				if j, ok := err.(interface{ Unwrap() []error }); ok {
					n += len(j.Unwrap())
				} else {
					n++
				}
			}
			require.Equal(t, 3, n, "cuts at %d and %d: one error per dropped event", i, j)
		}
	}
}

func TestWriteConsumesEverythingAndReportsNoErrorForGoodInput(t *testing.T) {
	var got []Event
	p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
	for _, piece := range []string{"da", "ta: he", "llo\r", "\n\r", "\n"} {
		n, err := p.Write([]byte(piece))
		require.NoError(t, err)
		require.Equal(t, len(piece), n)
	}
	require.Equal(t, []Event{msg("hello", "")}, got)
	require.NoError(t, p.Close())
}

func TestEventsAreDispatchedAsSoonAsTheirBlankLineArrives(t *testing.T) {
	var got []Event
	p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
	_, _ = p.Write([]byte("data: a\n"))
	require.Empty(t, got)
	_, _ = p.Write([]byte("\r"))
	require.Len(t, got, 1, "a CR ends the line at once, without waiting for a possible LF")
	_, _ = p.Write([]byte("\n"))
	require.Len(t, got, 1, "the LF after it belongs to the same line end")
}

func TestCloseReportsTheDiscardedEvent(t *testing.T) {
	var got []Event
	p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
	_, _ = p.Write([]byte("id: 1\ndata: a\n\nid: 2\ndata: partial"))
	err := p.Close()
	require.ErrorIs(t, err, ErrIncomplete)
	require.Contains(t, err.Error(), "discarded")
	require.Equal(t, []Event{msg("a", "1")}, got)
	require.Equal(t, "1", p.LastEventID(), "the discarded block's id is never exposed")
}

func TestResetStartsANewConnectionKeepingTheLastEventID(t *testing.T) {
	var got []Event
	p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
	_, _ = p.Write([]byte("id: 7\ndata: a\n\ndata: cut sho"))
	p.Reset()
	require.Equal(t, "7", p.LastEventID())
	_, _ = p.Write([]byte("\uFEFFdata: b\n\n"))
	require.NoError(t, p.Close())
	require.Equal(t, []Event{msg("a", "7"), msg("b", "7")}, got,
		"the partial line is gone, a BOM is allowed again, and the id carries over")
}

func TestAParserIsReusableAfterClose(t *testing.T) {
	var got []Event
	p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
	_, _ = p.Write([]byte("data: a\n\ndata: b"))
	require.ErrorIs(t, p.Close(), ErrIncomplete)
	_, _ = p.Write([]byte("data: c\n\n"))
	require.NoError(t, p.Close())
	require.Equal(t, []Event{msg("a", ""), msg("c", "")}, got)
}

func TestHandlerFuncIgnoresRetry(t *testing.T) {
	var got []Event
	p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
	_, err := p.Write([]byte("retry: 10\ndata: x\n\n"))
	require.NoError(t, err)
	require.Equal(t, []Event{msg("x", "")}, got)
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestTheDecoderWrapsReadErrorsAndKeepsReturningThem(t *testing.T) {
	boom := errors.New("connection reset")
	d := newDecoder(t, io.MultiReader(strings.NewReader("data: a\n\n"), failingReader{boom}))
	e, err := d.Next()
	require.NoError(t, err)
	require.Equal(t, msg("a", ""), e)
	_, err = d.Next()
	require.ErrorIs(t, err, boom)
	require.Contains(t, err.Error(), "sse: reading the stream")
	_, err = d.Next()
	require.ErrorIs(t, err, boom, "the error is sticky")
}

func TestTheDecoderEndsWithEOFOrIncomplete(t *testing.T) {
	d := newDecoder(t, strings.NewReader("data: a\n\n"))
	_, err := d.Next()
	require.NoError(t, err)
	_, err = d.Next()
	require.Equal(t, io.EOF, err)
	_, err = d.Next()
	require.Equal(t, io.EOF, err)

	d = newDecoder(t, strings.NewReader("data: a\n\ndata: b\n"))
	_, err = d.Next()
	require.NoError(t, err)
	_, err = d.Next()
	require.ErrorIs(t, err, ErrIncomplete)
}

func TestTheDecoderReportsTheRetryValue(t *testing.T) {
	d := newDecoder(t, strings.NewReader("retry: 1500\ndata: a\n\n"))
	_, ok := d.Retry()
	require.False(t, ok)
	_, err := d.Next()
	require.NoError(t, err)
	rt, ok := d.Retry()
	require.True(t, ok)
	require.Equal(t, "1.5s", rt.String())
}

func TestADispatchedEventNoLongerCountsAgainstTheBound(t *testing.T) {
	// Regression: the data of an event that was dispatched at a lone CR was
	// still counted when the next (8-byte) line was measured.
	input := "data:event:\n\rx€data\ndata:012345\n\n"
	want := []string{`event "message" "event:" ""`, `event "message" "012345" ""`}
	for i := 0; i <= len(input); i++ {
		require.Equal(t, want, parseCut(t, input, []int{i}, WithMaxEventSize(12)).Log, "cut at %d", i)
	}
}

func TestANilHandlerStillTracksTheLastEventID(t *testing.T) {
	p := newParser(t, nil)
	_, err := p.Write([]byte("id: 3\nretry: 5\ndata: x\n\n"))
	require.NoError(t, err)
	require.Equal(t, "3", p.LastEventID())
}

func TestTheDecoderResumesOnANewConnectionWithTheLastEventID(t *testing.T) {
	d := newDecoder(t, strings.NewReader("retry: 500\nid: 41\ndata: a\n\ndata: cut"))
	e, err := d.Next()
	require.NoError(t, err)
	require.Equal(t, msg("a", "41"), e)
	_, err = d.Next()
	require.ErrorIs(t, err, ErrIncomplete)
	require.Equal(t, "41", d.LastEventID(), "what the reconnection sends")

	d.Reset(strings.NewReader("data: b\n\nid: 43\ndata: c\n\n"))
	e, err = d.Next()
	require.NoError(t, err)
	require.Equal(t, msg("b", "41"), e, "an event without id keeps the id resumed from")
	e, err = d.Next()
	require.NoError(t, err)
	require.Equal(t, msg("c", "43"), e)
	_, err = d.Next()
	require.Equal(t, io.EOF, err)
	rt, ok := d.Retry()
	require.True(t, ok)
	require.Equal(t, "500ms", rt.String())
}
