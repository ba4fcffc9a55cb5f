package admit_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/relay/internal/admit"
)

// longestString is the most characters of one string value anywhere in
// a decoded request (the vocabulary's role and type words aside): a
// request the policy passed under a bound holds no string longer than the
// bound, wherever it sits.
func longestString(v any) int {
	switch v := v.(type) {
	case string:
		return utf8.RuneCountInString(v)
	case []any:
		n := 0
		for _, e := range v {
			n = max(n, longestString(e))
		}
		return n
	case map[string]any:
		n := 0
		for k, e := range v {
			if k == "role" || k == "type" {
				continue // the vocabulary's words count only when unknown
			}
			n = max(n, longestString(e))
		}
		return n
	}
	return 0
}

// Whatever a client sends, the filter never panics; what passes holds
// only known fields (at the top, in messages, in content parts), passes
// again unchanged, and under a bound carries no string longer than it.
func FuzzFilter(f *testing.F) {
	for _, seed := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","tools":[{"type":"function","function":{"name":"f","description":"d"}}],"messages":[]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"hi","x":"y"},{"type":"image_url","image_url":{"url":"data:"}}]}],"user":"u","stop":["a"]}`,
		`{"response_format":{"type":"json_object"},"max_tokens":5,"messages":[{"role":"tool","tool_call_id":"c","content":"ok","name":"n"}]}`,
	} {
		f.Add(seed, 40)
	}
	f.Fuzz(func(t *testing.T, body string, bound int) {
		bound = 1 + (bound&0xffff)%200
		p := admit.Policy{MaxInputChars: bound, Models: []string{"m"}}
		out, err := p.Filter([]byte(body))
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("the filter passed what is not a JSON object: %s", out)
		}
		for k := range m {
			if !slices.Contains(admit.Fields, k) {
				t.Fatalf("the field %q passed", k)
			}
		}
		msgs, _ := m["messages"].([]any)
		for _, msg := range msgs {
			mm, _ := msg.(map[string]any)
			for k, v := range mm {
				if !slices.Contains(admit.MessageFields, k) {
					t.Fatalf("the message field %q passed", k)
				}
				parts, _ := v.([]any)
				for _, part := range parts {
					pm, _ := part.(map[string]any)
					for pk := range pm {
						if k == "content" && !slices.Contains(admit.PartFields, pk) {
							t.Fatalf("the content part key %q passed", pk)
						}
					}
				}
			}
		}
		if n := longestString(m); n > bound {
			t.Fatalf("a string of %d characters passed a bound of %d: %s", n, bound, strings.TrimSpace(string(out)))
		}
		again, err := p.Filter(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("what passed does not pass again unchanged: %v\n%s\n%s", err, out, again)
		}
	})
}
