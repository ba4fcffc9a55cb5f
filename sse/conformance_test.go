package sse

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// outcome is everything a Parser reports for one byte stream, in order, so
// that two runs over different cuts of the same bytes can be compared whole.
type outcome struct {
	Log    []string // "event <type> <data> <lastEventID>", "retry <ms>", "too large"
	Close  string   // "", "incomplete"
	LastID string
}

type recorder struct{ log *[]string }

func (r recorder) Event(e Event) {
	*r.log = append(*r.log, fmt.Sprintf("event %q %q %q", e.Type, e.Data, e.LastEventID))
}
func (r recorder) Retry(ms int) { *r.log = append(*r.log, fmt.Sprintf("retry %d", ms)) }

func errKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrIncomplete):
		return "incomplete"
	case errors.Is(err, ErrEventTooLarge):
		return "too large"
	default:
		return "other: " + err.Error()
	}
}

// parseCut feeds input to a fresh Parser cut at the given offsets.
func parseCut(t testing.TB, input string, cuts []int, opts ...Option) outcome {
	var o outcome
	p := newParser(t, recorder{&o.Log}, opts...)
	// The white-box hook logs errors in stream order among the events; Write
	// must return an error exactly when the hook saw one during it.
	reported := 0
	p.onErr = func(err error) {
		reported++
		o.Log = append(o.Log, errKind(err))
	}
	prev := 0
	for _, c := range append(cuts, len(input)) {
		before := reported
		n, err := p.Write([]byte(input[prev:c]))
		if n != c-prev {
			t.Fatalf("Write consumed %d of %d bytes", n, c-prev)
		}
		if (err != nil) != (reported > before) {
			t.Fatalf("Write returned %v after %d errors were reported", err, reported-before)
		}
		prev = c
	}
	o.Close = errKind(p.Close())
	o.LastID = p.LastEventID()
	return o
}

// decodeAll runs the pull Decoder over r and renders the same outcome.
func decodeAll(t testing.TB, r io.Reader, opts ...Option) outcome {
	var o outcome
	d := newDecoder(t, r, opts...)
	rec := recorder{&o.Log}
	for {
		e, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil && errors.Is(err, ErrEventTooLarge) {
			o.Log = append(o.Log, errKind(err))
			continue
		}
		if err != nil {
			o.Close = errKind(err)
			break
		}
		rec.Event(e)
	}
	o.LastID = d.LastEventID()
	// The Decoder exposes only the latest retry value.
	if rt, ok := d.Retry(); ok {
		rec.Retry(int(rt / time.Millisecond))
	}
	return o
}

// pullView is what the pull Decoder can show of an outcome: the retry lines
// are replaced by the last one, at the end.
func pullView(o outcome) outcome {
	var v outcome
	last := ""
	for _, l := range o.Log {
		if strings.HasPrefix(l, "retry ") {
			last = l
			continue
		}
		v.Log = append(v.Log, l)
	}
	if last != "" {
		v.Log = append(v.Log, last)
	}
	v.Close, v.LastID = o.Close, o.LastID
	return v
}

func msg(data, id string) Event { return Event{Type: "message", Data: data, LastEventID: id} }

type conformanceCase struct {
	name       string
	input      string
	events     []Event
	retries    []int // in order; interleaving is checked by the cut tests
	incomplete bool
	lastID     string
}

// The conformance table. Cases named "wpt ..." are the web-platform-tests
// EventSource format-* streams (as their server scripts send them: the
// message.py resource appends "\n\n" unless newline=none); the others come
// from the text of "Interpreting an event stream" in the WHATWG HTML
// standard.
var conformance = []conformanceCase{
	{name: "wpt format-bom: a BOM at byte 0 is stripped, a later one is part of the field name",
		input:  "\uFEFFdata:1\n\n\uFEFFdata:2\n\ndata:3\n\n",
		events: []Event{msg("1", ""), msg("3", "")}},
	{name: "wpt format-bom-2: only one BOM is stripped",
		input:  "\uFEFF\uFEFFdata:1\n\ndata:2\n\ndata:3\n\n",
		events: []Event{msg("2", ""), msg("3", "")}},
	{name: "wpt format-comments: comments of any length between data lines, with every line end",
		input:  "data:1\r:\x00\n:\r\ndata:2\n:" + strings.Repeat("x", 2048) + "\rdata:3\n:data:fail\r:" + strings.Repeat("x", 2048) + "\ndata:4\n",
		events: nil, incomplete: true},
	{name: "wpt format-comments with its closing blank line dispatches all four data lines",
		input:  "data:1\r:\x00\n:\r\ndata:2\n:" + strings.Repeat("x", 2048) + "\rdata:3\n:data:fail\r:" + strings.Repeat("x", 2048) + "\ndata:4\n\n",
		events: []Event{msg("1\n2\n3\n4", "")}},
	{name: "wpt format-data-before-final-empty-line: an unterminated block is discarded with its id",
		input:   "retry:1000\ndata:test1\n\nid:test\ndata:test2",
		events:  []Event{msg("test1", "")},
		retries: []int{1000}, incomplete: true, lastID: ""},
	{name: "wpt format-field-data: empty data lines make empty and newline-only events",
		input:  "data:\n\ndata\ndata\n\ndata:test\n\n",
		events: []Event{msg("", ""), msg("\n", ""), msg("test", "")}},
	{name: "wpt format-field-event: a custom event type applies to its own block only",
		input:  "event:test\ndata:x\n\ndata:x\n\n",
		events: []Event{{Type: "test", Data: "x"}, msg("x", "")}},
	{name: "wpt format-field-event-empty: an empty event type means message",
		input:  "event: \ndata:data\n\n",
		events: []Event{msg("data", "")}},
	{name: "wpt format-field-id: a non-ASCII id is the event's lastEventId",
		input:   "id: …\nretry: 200\ndata: hello\n\n",
		events:  []Event{msg("hello", "…")},
		retries: []int{200}, lastID: "…"},
	{name: "wpt format-field-id-3 persists: the last event id persists across events",
		input:  "id: 1\ndata: 1\n\nid: 2\ndata:2\n\ndata:3\n\n",
		events: []Event{msg("1", "1"), msg("2", "2"), msg("3", "2")}, lastID: "2"},
	{name: "wpt format-field-id-3 resets: an empty id resets the last event id",
		input:  "id: 1\ndata: 1\n\nid:\ndata:2\n\ndata:3\n\n",
		events: []Event{msg("1", "1"), msg("2", ""), msg("3", "")}},
	{name: "wpt format-field-id-3 resets: an id line without colon resets the last event id",
		input:  "id: 1\ndata: 1\n\nid\ndata:2\n\ndata:3\n\n",
		events: []Event{msg("1", "1"), msg("2", ""), msg("3", "")}},
	{name: "wpt format-field-id-null: an id of two NULs is ignored",
		input: "id: \x00\x00\nretry: 200\ndata: hello\n\n", events: []Event{msg("hello", "")}, retries: []int{200}},
	{name: "wpt format-field-id-null: an id ending in NUL is ignored",
		input: "id: x\x00\ndata: hello\n\n", events: []Event{msg("hello", "")}},
	{name: "wpt format-field-id-null: an id starting with NUL is ignored",
		input: "id: \x00x\ndata: hello\n\n", events: []Event{msg("hello", "")}},
	{name: "wpt format-field-id-null: an id with NUL inside is ignored and the previous id stays",
		input: "id: a\ndata: 1\n\nid: x\x00x\ndata: hello\n\n", events: []Event{msg("1", "a"), msg("hello", "a")}, lastID: "a"},
	{name: "wpt format-field-id-null: an id of a space and NUL is ignored",
		input: "id:  \x00\ndata: hello\n\n", events: []Event{msg("hello", "")}},
	{name: "wpt format-field-parsing: field names are exact and case-sensitive",
		input:  "data:\x00\ndata:  2\rData:1\ndata\x00:2\ndata:1\r\x00data:4\nda-ta:3\rdata_5\ndata:3\rdata:\r\n data:32\ndata:4\n\n",
		events: []Event{msg("\x00\n 2\n1\n3\n\n4", "")}},
	{name: "wpt format-field-retry: retry is base ten, leading zeros allowed",
		input: "retry:03000\ndata:x\n\n", events: []Event{msg("x", "")}, retries: []int{3000}},
	{name: "wpt format-field-retry-bogus: a retry value with a non-digit is ignored",
		input: "retry:3000\nretry:1000x\ndata:x\n\n", events: []Event{msg("x", "")}, retries: []int{3000}},
	{name: "wpt format-field-retry-empty: an empty retry field is ignored",
		input: "retry\ndata:test\n\n", events: []Event{msg("test", "")}},
	{name: "wpt format-field-unknown: unknown fields and bare words are ignored",
		input:  "data:test\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:test\n\n",
		events: []Event{msg("test\n\ntest", "")}},
	{name: "wpt format-leading-space: only one leading space is removed, tabs stay",
		input:  "data:\ttest\rdata: \ndata:test\n\n",
		events: []Event{msg("\ttest\n\ntest", "")}},
	{name: "wpt format-newlines: CRLF, LF and a final CR all end lines",
		input:  "data:test\r\ndata\ndata:test\r\n\r",
		events: []Event{msg("test\n\ntest", "")}},
	{name: "wpt format-null-character: NUL in data is kept",
		input: "data:\x00\n\n", events: []Event{msg("\x00", "")}},
	{name: "wpt format-utf-8: the stream is UTF-8 whatever the charset says",
		input: "data:ok\xE2\x80\xA6\n\n", events: []Event{msg("ok…", "")}},

	// From the standard's text.
	{name: "an empty stream is a clean end", input: ""},
	{name: "a stream of comments only is a clean end", input: ": hi\n:\n: there"},
	{name: "an unterminated comment at the end is not an unfinished event",
		input: "data: a\n\n: keep-alive", events: []Event{msg("a", "")}},
	{name: "a BOM alone is a clean end", input: "\uFEFF"},
	{name: "two bytes of a BOM and nothing else are an unfinished line of U+FFFD",
		input: "\xEF\xBB", incomplete: true},
	{name: "a broken BOM becomes one U+FFFD and the line is still parsed",
		input: "\xEF\xBBdata: x\n\ndata: y\n\n", events: []Event{msg("y", "")}},
	{name: "the standard's first example: three data lines and an empty line",
		input: "data: YHOO\ndata: +2\ndata: 10\n\n", events: []Event{msg("YHOO\n+2\n10", "")}},
	{name: "the standard's second example: ids, and a block that is only an id sets it without an event",
		input:  ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
		events: []Event{msg("first event", "1"), msg("second event", "")}, incomplete: true},
	{name: "the standard's third example: the final block without a blank line is not dispatched",
		input: "data\n\ndata\ndata\n\ndata:", events: []Event{msg("", ""), msg("\n", "")}, incomplete: true},
	{name: "the standard's fourth example: a space after the colon is optional",
		input: "data:test\n\ndata: test\n\n", events: []Event{msg("test", ""), msg("test", "")}},
	{name: "a block with only an id moves the last event id without dispatching",
		input: "id: 7\n\ndata: x\n\n", events: []Event{msg("x", "7")}, lastID: "7"},
	{name: "an event type without data is forgotten at the blank line",
		input: "event: a\n\ndata: x\n\n", events: []Event{msg("x", "")}},
	{name: "the last event field wins",
		input: "event: a\nevent: b\ndata: x\n\n", events: []Event{{Type: "b", Data: "x"}}},
	{name: "event type is case-sensitive and kept as written",
		input: "event: Message\ndata: x\n\n", events: []Event{{Type: "Message", Data: "x"}}},
	{name: "the id line may come after the data line of its block",
		input: "data: x\nid: 5\n\n", events: []Event{msg("x", "5")}, lastID: "5"},
	{name: "only the first colon splits name and value",
		input: "data: a:b: c\n\n", events: []Event{msg("a:b: c", "")}},
	{name: "a field name with a space is unknown",
		input: "data : x\ndata: y\n\n", events: []Event{msg("y", "")}},
	{name: "a lone CR then LF later is two line ends when anything comes between",
		input: "data: a\r\rdata: b\r\n\n", events: []Event{msg("a", ""), msg("b", "")}},
	{name: "CR CR LF is two line ends",
		input: "data: a\r\r\ndata: b\n\n", events: []Event{msg("a", ""), msg("b", "")}},
	{name: "LF CR is two line ends",
		input: "data: a\n\rdata: b\n\n", events: []Event{msg("a", ""), msg("b", "")}},
	{name: "retry with a leading space is accepted after the one space is removed",
		input: "retry: 5\ndata: x\n\n", events: []Event{msg("x", "")}, retries: []int{5}},
	{name: "retry with two spaces is not all digits",
		input: "retry:  5\ndata: x\n\n", events: []Event{msg("x", "")}},
	{name: "retry with a sign is ignored",
		input: "retry: -5\nretry: +5\nretry: 5.0\ndata: x\n\n", events: []Event{msg("x", "")}},
	{name: "retry is applied when read, even in a block that is never dispatched",
		input: "retry: 10\n\nretry: 20\ndata: x", retries: []int{10, 20}, incomplete: true},
	{name: "retry with non-ASCII digits is ignored",
		input: "retry: ١٢\ndata: x\n\n", events: []Event{msg("x", "")}},
	{name: "a huge retry saturates instead of overflowing",
		input: "retry: 99999999999999999999999999\n", retries: []int{maxRetryMs}, incomplete: true},
	{name: "invalid UTF-8 in data becomes U+FFFD per maximal subpart",
		input:  "data: a\xE2\x82b\xFFc\xF0\x9F\x98\n\n",
		events: []Event{msg("a\uFFFDb\uFFFDc\uFFFD", "")}},
	{name: "surrogates and overlong forms are invalid",
		input:  "data: \xED\xA0\x80|\xC0\xAF|\xE0\x80\xAF\n\n",
		events: []Event{msg("\uFFFD\uFFFD\uFFFD|\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD", "")}},
	{name: "an invalid byte in the event type becomes U+FFFD",
		input: "event: a\xFF\ndata: x\n\n", events: []Event{{Type: "a\uFFFD", Data: "x"}}},
	{name: "an invalid byte in the id becomes U+FFFD",
		input: "id: a\xFF\ndata: x\n\n", events: []Event{msg("x", "a\uFFFD")}, lastID: "a\uFFFD"},
	{name: "an invalid byte in a field name makes it unknown",
		input: "dat\xE1:x\ndata\xFF\ndata: y\n\n", events: []Event{msg("y", "")}},
	{name: "a truncated sequence before the colon does not swallow the colon",
		input: "x\xE2:data\ndata:\xE2\x82\ndata: z\n\n", events: []Event{msg("\uFFFD\nz", "")}},
	{name: "four-byte characters survive",
		input: "data: 😀𝄞\n\n", events: []Event{msg("😀𝄞", "")}},
	{name: "a mid-line end of stream is incomplete and the line is dropped",
		input: "data: a\n\ndata: b\ndata: c", events: []Event{msg("a", "")}, incomplete: true},
	{name: "an id without a blank line at the end is not exposed",
		input: "id: 1\ndata: a\n\nid: 2\n", events: []Event{msg("a", "1")}, incomplete: true, lastID: "1"},
}

func TestConformanceTable(t *testing.T) {
	for _, tc := range conformance {
		t.Run(tc.name, func(t *testing.T) {
			var events []Event
			var retries []int
			p := newParser(t, eventsInto(&events, &retries))
			_, err := p.Write([]byte(tc.input))
			require.NoError(t, err)
			cerr := p.Close()
			for i := range tc.events {
				if tc.events[i].Type == "" {
					tc.events[i].Type = "message"
				}
			}
			require.Equal(t, tc.events, events, "events")
			require.Equal(t, tc.retries, retries, "retries")
			if tc.incomplete {
				require.ErrorIs(t, cerr, ErrIncomplete)
			} else {
				require.NoError(t, cerr)
			}
			require.Equal(t, tc.lastID, p.LastEventID(), "last event id")
		})
	}
}

type sliceHandler struct {
	events  *[]Event
	retries *[]int
}

func (h sliceHandler) Event(e Event) { *h.events = append(*h.events, e) }
func (h sliceHandler) Retry(ms int)  { *h.retries = append(*h.retries, ms) }

func eventsInto(events *[]Event, retries *[]int) Handler { return sliceHandler{events, retries} }

// Every case gives the same outcome whatever the cut: byte by byte, at every
// single offset, at every pair of offsets (short inputs), and through the
// pull Decoder reading one byte at a time.
func TestConformanceCasesAreCutInvariant(t *testing.T) {
	for _, tc := range conformance {
		t.Run(tc.name, func(t *testing.T) {
			whole := parseCut(t, tc.input, nil)
			n := len(tc.input)

			bytewise := make([]int, 0, n)
			for i := 1; i < n; i++ {
				bytewise = append(bytewise, i)
			}
			require.Equal(t, whole, parseCut(t, tc.input, bytewise), "byte by byte")

			for i := 0; i <= n; i++ {
				require.Equal(t, whole, parseCut(t, tc.input, []int{i}), "cut at %d", i)
			}
			pairLimit := 80
			if testing.Short() {
				pairLimit = 40
			}
			if n <= pairLimit {
				for i := 0; i <= n; i++ {
					for j := i; j <= n; j++ {
						require.Equal(t, whole, parseCut(t, tc.input, []int{i, j}), "cut at %d and %d", i, j)
					}
				}
			}

			dec := decodeAll(t, iotest.OneByteReader(strings.NewReader(tc.input)))
			require.Equal(t, pullView(whole), dec, "pull decoder, one byte per read")
			dec = decodeAll(t, strings.NewReader(tc.input))
			require.Equal(t, pullView(whole), dec, "pull decoder, whole reads")
		})
	}
}

// The web-platform-tests cases that span a reconnection: the first
// connection's bytes, Close (the server ends the response), Reset, then the
// second connection's bytes, as the test servers send them.
func TestWPTReconnectionCases(t *testing.T) {
	cases := []struct {
		name          string
		first, second string
		reconnectWith string // what a reconnection sends as Last-Event-ID
		events        []Event
	}{
		{"wpt format-field-id-2: the last event id persists into the next connection",
			"id: …\nretry: 200\ndata: hello\n\n", "data: …\n\n", "…",
			[]Event{msg("hello", "…"), msg("…", "…")}},
		{"wpt format-field-id-null: an id with NUL is never sent back",
			"id: x\x00\nretry: 200\ndata: hello\n\n", "id: \x00x\nretry: 200\ndata: hello\n\n", "",
			[]Event{msg("hello", ""), msg("hello", "")}},
		{"wpt format-data-before-final-empty-line: an unterminated block's id is not sent back",
			"retry:1000\ndata:test1\n\nid:test\ndata:test2", "retry:1000\ndata:test1\n\nid:test\ndata:test2", "",
			[]Event{msg("test1", ""), msg("test1", "")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i <= len(tc.first); i++ {
				var got []Event
				p := newParser(t, HandlerFunc(func(e Event) { got = append(got, e) }))
				_, _ = p.Write([]byte(tc.first[:i]))
				_, _ = p.Write([]byte(tc.first[i:]))
				_ = p.Close()
				require.Equal(t, tc.reconnectWith, p.LastEventID(), "cut at %d", i)
				p.Reset()
				_, _ = p.Write([]byte(tc.second))
				_ = p.Close()
				require.Equal(t, tc.events, got, "cut at %d", i)
			}
		})
	}
}
