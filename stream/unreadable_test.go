package stream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestABodyNothingCanBeReadFromFailsSayingWhatArrived(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		says                    []string
	}{
		{"an HTML page", "text/html; charset=utf-8", "\n<!doctype html><html><body><h1>Sign in</h1><p>Your session expired, please sign in again to go on.</p></body></html>\n",
			[]string{`of type "text/html; charset=utf-8"`, `it begins "<!doctype html><html><body><h1>Sign in</h1><p>Your session expir"…`}},
		{"a JSON object that is no stream", "application/json", `{"result":"done","items":[1,2,3]}`,
			[]string{`of type "application/json"`, `"{\"result\":\"done\",\"items\":[1,2,3]}"`}},
		{"text without its content type", "", "Hello, this is the answer.\n",
			[]string{"with no content type", `"Hello, this is the answer.\n"`}},
		{"events that are not JSON", "text/event-stream", "data: hello\n\ndata: world\n\n",
			[]string{`of type "text/event-stream"`, `"data: hello\n\ndata: world\n\n"`}},
		{"bytes that are not text", "application/octet-stream", "\x00\x01\xff\xfeBIN",
			[]string{`"\x00\x01\xff\xfeBIN"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, cuts := range [][]int{nil, {1}, {len(c.body) / 2}} {
				s := run(t, []byte(c.body), cuts, WithContentType(c.contentType))
				require.Equal(t, "failed", s.Status, "never incomplete: %s", s.Err)
				require.Contains(t, s.Err, "stream: cannot read the response: ")
				for _, want := range c.says {
					require.Contains(t, s.Err, want)
				}
			}
			p := newPipeline(t, WithContentType(c.contentType))
			feed(t, p, c.body)
			require.NoError(t, p.Close(), "Close returns the reason of a cut answer only")
			require.ErrorIs(t, p.Answer().Err(), ErrUnreadable)
		})
	}
}

func TestACutAnswerIsIncompleteNotUnreadable(t *testing.T) {
	for _, c := range []struct{ name, contentType, body string }{
		{"cut in its first event", "text/event-stream", `data: {"choices":[{"delta":{"content":"Hel`},
		{"cut in a field's name", "", "da"},
		{"only the relay's comment", "text/event-stream", ": trickle stream s1\n\n"},
		{"only blank lines", "", "\n\r\n  \n"},
		{"empty", "text/event-stream", ""},
		{"cut in its first NDJSON line", "application/x-ndjson", `{"model":"m","created_at":"t","message":{"content":"Hel`},
		{"a first event understood, the rest cut", "", "data: {\"delta\":\"a\"}\n\ndata: <html>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := run(t, []byte(c.body), nil, WithContentType(c.contentType))
			require.Equal(t, "incomplete", s.Status, s.Err)
			require.NotContains(t, s.Err, "cannot read")
		})
	}
}

func TestTheQuotedStartIsCutAtACharacter(t *testing.T) {
	s := strings.Repeat("a", headBytes-2) + "日本"
	require.Equal(t, `"`+strings.Repeat("a", headBytes-2)+`"…`, quoteCut(s, headBytes), "日 is cut: it goes whole")
	require.Equal(t, `"short"`, quoteCut("short", headBytes))
	require.Equal(t, `"\x1b[31m"`, quoteCut("\x1b[31m", headBytes), "control bytes are escaped")
}
