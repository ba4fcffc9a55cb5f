package sse

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsEventStreamFollowsMIMETypeParsing(t *testing.T) {
	cases := []struct {
		name, ct string
		want     bool
	}{
		{"the plain type", "text/event-stream", true},
		{"wpt format-mime-trailing-semicolon: a trailing semicolon is allowed", "text/event-stream;", true},
		{"wpt format-utf-8: a charset parameter is ignored", "text/event-stream;charset=windows-1252", true},
		{"case does not matter", "Text/Event-Stream; charset=UTF-8", true},
		{"surrounding HTTP whitespace is trimmed", " \ttext/event-stream\t ; x=y ", true},
		{"wpt format-mime-valid-bogus: another valid type is refused", "text/x-bogus", false},
		{"wpt format-mime-bogus: an unparsable type is refused", "x bogus", false},
		{"an empty header is refused", "", false},
		{"a space inside the subtype is refused", "text/event-stream x", false},
		{"a space before the slash is refused", "text /event-stream", false},
		{"a missing subtype is refused", "text/", false},
		{"a prefix of the type is refused", "text/event", false},
		{"application/json is refused", "application/json", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, IsEventStream(tc.ct), "%q", tc.ct)
		})
	}
}
