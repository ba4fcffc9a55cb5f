package admit_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/admit"
	"github.com/trickle-dev/trickle/wire"
)

func filtered(t *testing.T, p admit.Policy, body string) map[string]any {
	t.Helper()
	out, err := p.Filter([]byte(body))
	require.NoError(t, err, body)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	return m
}

func TestOnlyKnownFieldsPassAtTheTopAndInEachMessage(t *testing.T) {
	// Every known field passes with its value, whatever else comes with it.
	in := map[string]any{"n": 8, "logprobs": true, "store": true, "service_tier": "priority", "metadata": map[string]any{"a": 1},
		"web_search_options": map[string]any{}, "messages": []any{map[string]any{"role": "user", "content": "hi", "secret_field": 1, "name": "bob"}}}
	for i, f := range admit.Fields {
		if f != "messages" {
			in[f] = float64(i + 1)
		}
	}
	b, _ := json.Marshal(in)
	m := filtered(t, admit.Policy{}, string(b))
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	require.Equal(t, admit.Fields, keys)
	for i, f := range admit.Fields {
		if f != "messages" {
			require.Equal(t, float64(i+1), m[f], f)
		}
	}
	require.Equal(t, []any{map[string]any{"role": "user", "content": "hi", "name": "bob"}}, m["messages"])
}

func TestModelsOutsideTheAllowlistAreRefusedNamingTheAllowedOnes(t *testing.T) {
	p := admit.Policy{Models: []string{"small", "medium"}}
	require.Equal(t, "medium", filtered(t, p, `{"model":"medium","messages":[]}`)["model"])
	require.Equal(t, "small", filtered(t, p, `{"messages":[]}`)["model"], "no model: the first allowed")
	for _, body := range []string{`{"model":"o1-pro"}`, `{"model":"Small"}`, `{"model":7}`} {
		_, err := p.Filter([]byte(body))
		var r *admit.Refusal
		require.ErrorAs(t, err, &r, body)
		require.Equal(t, admit.ModelNotAllowed, r.Code)
		require.Equal(t, "model", r.Param)
		require.Contains(t, r.Message, `"small", "medium"`)
	}
	require.Equal(t, "anything", filtered(t, admit.Policy{}, `{"model":"anything"}`)["model"], "no allowlist: any model")
}

func TestMaxTokensIsCappedAndSetWhenTheRequestNamesNone(t *testing.T) {
	p := admit.Policy{MaxTokens: 500}
	require.Equal(t, float64(500), filtered(t, p, `{"messages":[]}`)["max_tokens"])
	require.Equal(t, float64(500), filtered(t, p, `{"max_tokens":null}`)["max_tokens"])
	require.Equal(t, float64(20), filtered(t, p, `{"max_tokens":20}`)["max_tokens"])
	m := filtered(t, p, `{"max_completion_tokens":499}`)
	require.Equal(t, float64(499), m["max_completion_tokens"])
	require.NotContains(t, m, "max_tokens", "the request's own field is kept, not doubled")
	for _, c := range []struct {
		body  string
		code  wire.Code
		param string
	}{
		{`{"max_tokens":100000}`, admit.MaxTokensOverCap, "max_tokens"},
		{`{"max_tokens":10,"max_completion_tokens":501}`, admit.MaxTokensOverCap, "max_completion_tokens"},
		{`{"max_tokens":-1}`, admit.BadMaxTokens, "max_tokens"},
		{`{"max_tokens":"lots"}`, admit.BadMaxTokens, "max_tokens"},
		{`{"max_tokens":1e30}`, admit.BadMaxTokens, "max_tokens"},
	} {
		_, err := p.Filter([]byte(c.body))
		var r *admit.Refusal
		require.ErrorAs(t, err, &r, c.body)
		require.Equal(t, c.code, r.Code, c.body)
		require.Equal(t, c.param, r.Param, c.body)
		if c.code == admit.MaxTokensOverCap {
			require.Contains(t, r.Message, "cap of 500")
		}
	}
	_, err := admit.Policy{}.Filter([]byte(`{"max_tokens":100000}`))
	require.NoError(t, err, "no cap: any positive ask")
}

func TestTheConversationIsBoundedInCharacters(t *testing.T) {
	p := admit.Policy{MaxInputChars: 10}
	msg := func(content string) string {
		return `{"messages":[{"role":"system","content":"abc"},{"role":"user","content":` + content + `}]}`
	}
	_, err := p.Filter([]byte(msg(`"ééééééé"`))) // 3 + 7 characters (14 bytes)
	require.NoError(t, err)
	for _, over := range []string{`"12345678"`, `[{"type":"text","text":"1234"},{"type":"text","text":"5678"}]`,
		`[{"type":"image_url","image_url":{"url":"data:"}}]`} {
		_, err := p.Filter([]byte(msg(over)))
		var r *admit.Refusal
		require.ErrorAs(t, err, &r, over)
		require.Equal(t, admit.InputTooLong, r.Code)
		require.Contains(t, r.Message, "limit of 10")
	}
	long := `"` + strings.Repeat("x", 1000) + `"`
	_, err = admit.Policy{}.Filter([]byte(msg(long)))
	require.NoError(t, err, "no bound: any length")
}

// What the policy cannot read is refused with a code of its own (never
// the error's type as a code) and the field it is about, and the refusal
// is answered as a 400 invalid_request_error.
func TestMalformedBodiesAreRefusedWithTheirOwnCodes(t *testing.T) {
	for _, c := range []struct {
		body  string
		code  wire.Code
		param string
		says  string
	}{
		{`{`, admit.NotAnObject, "", "not an OpenAI chat request"},
		{`[1,2]`, admit.NotAnObject, "", "not an OpenAI chat request"},
		{`"text"`, admit.NotAnObject, "", "not an OpenAI chat request"},
		{`{"messages":"hi"}`, admit.BadMessages, "messages", `"messages" is not an array of objects`},
		{`{"messages":[1]}`, admit.BadMessages, "messages", `"messages" is not an array of objects`},
		{`{"model":7}`, admit.ModelNotAllowed, "model", `"model" is not a string`},
	} {
		_, err := admit.Policy{Models: []string{"small"}}.Filter([]byte(c.body))
		var r *admit.Refusal
		require.ErrorAs(t, err, &r, c.body)
		require.Equal(t, c.code, r.Code, c.body)
		require.Equal(t, c.param, r.Param, c.body)
		require.Contains(t, r.Error(), c.says, c.body)
		require.True(t, strings.HasPrefix(r.Error(), "relay: "), c.body)

		e := r.Refusal()
		require.Equal(t, wire.TypeInvalidRequest, e.Type, c.body)
		require.Equal(t, c.code, e.Code, c.body)
		require.Equal(t, c.param, e.Param, c.body)
		require.Equal(t, r.Error(), e.Message, c.body)
		require.Equal(t, 400, e.HTTPStatus(), c.body)
		require.NotEqual(t, string(e.Type), string(e.Code), "a type is not a code")
	}
}

// Every code the policy refuses with belongs to invalid_request_error in
// the contract.
func TestThePolicysCodesAreInvalidRequestsInTheContract(t *testing.T) {
	for _, c := range []wire.Code{admit.ModelNotAllowed, admit.MaxTokensOverCap, admit.BadMaxTokens, admit.InputTooLong, admit.NotAnObject, admit.BadMessages} {
		require.Equal(t, wire.TypeInvalidRequest, c.Type(), c)
	}
}

// Filtering is idempotent: what the policy let through passes again
// unchanged, whatever the request held (the relay forwards the filtered
// body, and a retry through a second relay must not change it).
func TestFilteringWhatPassedChangesNothing(t *testing.T) {
	policies := []admit.Policy{{}, {MaxTokens: 300}, {Models: []string{"a", "b"}, MaxTokens: 50, MaxInputChars: 1000}}
	bodies := []string{
		`{}`,
		`{"messages":[]}`,
		`{"model":"b","n":3,"messages":[{"role":"user","content":"hi","x":1}],"max_tokens":20}`,
		`{"stream":true,"temperature":0.2,"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hé"},{"type":"image_url","image_url":{"url":"data:"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]}`,
		`{"max_completion_tokens":null,"max_tokens":null,"model":null}`,
	}
	for _, p := range policies {
		for _, body := range bodies {
			once, err := p.Filter([]byte(body))
			require.NoError(t, err, body)
			twice, err := p.Filter(once)
			require.NoError(t, err, body)
			require.JSONEq(t, string(once), string(twice), "%+v %s", p, body)
		}
	}
}

// A conversation at exactly the bound passes; one character more is
// refused: the bound is inclusive, counted in characters, not bytes.
func TestTheBoundOnTheConversationIsInclusive(t *testing.T) {
	for n := 1; n <= 12; n++ {
		p := admit.Policy{MaxInputChars: n}
		at := `{"messages":[{"role":"user","content":"` + strings.Repeat("é", n) + `"}]}`
		_, err := p.Filter([]byte(at))
		require.NoError(t, err, "%d characters at a bound of %d", n, n)
		over := `{"messages":[{"role":"user","content":"` + strings.Repeat("é", n+1) + `"}]}`
		_, err = p.Filter([]byte(over))
		var r *admit.Refusal
		require.ErrorAs(t, err, &r, "%d characters over a bound of %d", n+1, n)
	}
}

// Every field that reaches the model counts against the bound, not only
// the messages' text (issue 36's reproduction: about 300 KB in tools,
// response_format, stop, name, user, tool_call_id or a content part's
// extra key passed a 200-character cap).
func TestEveryFieldThatCarriesTextCountsAgainstTheBound(t *testing.T) {
	p := admit.Policy{MaxInputChars: 200}
	big := strings.Repeat("x", 300<<10)
	q, _ := json.Marshal(big)
	s := string(q)
	for _, c := range []struct{ name, body, param string }{
		{"tools", `{"tools":[{"type":"function","function":{"name":"f","description":` + s + `}}],"messages":[{"role":"user","content":"hi"}]}`, "tools"},
		{"a tool's schema keys", `{"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{` + s + `:{}}}}}],"messages":[]}`, "tools"},
		{"response_format", `{"response_format":{"type":"json_schema","json_schema":{"name":` + s + `}},"messages":[]}`, "response_format"},
		{"stop", `{"stop":[` + s + `],"messages":[]}`, "stop"},
		{"user", `{"user":` + s + `,"messages":[]}`, "user"},
		{"tool_choice", `{"tool_choice":{"type":"function","function":{"name":` + s + `}},"messages":[]}`, "tool_choice"},
		{"a number field holding text", `{"temperature":` + s + `,"messages":[]}`, "temperature"},
		{"the model, with no allow-list", `{"model":` + s + `,"messages":[]}`, "model"},
		{"a message's name", `{"messages":[{"role":"user","name":` + s + `,"content":"hi"}]}`, "messages"},
		{"a message's tool_call_id", `{"messages":[{"role":"tool","tool_call_id":` + s + `,"content":"ok"}]}`, "messages"},
		{"a message's role", `{"messages":[{"role":` + s + `,"content":"hi"}]}`, "messages"},
		{"a part's type", `{"messages":[{"role":"user","content":[{"type":` + s + `,"text":"hi"}]}]}`, "messages"},
		{"a part's data", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":` + s + `,"format":"wav"}}]}]}`, "messages"},
		{"tool calls", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":` + s + `}}]}]}`, "messages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := p.Filter([]byte(c.body))
			var r *admit.Refusal
			require.ErrorAs(t, err, &r)
			require.Equal(t, admit.InputTooLong, r.Code)
			require.Equal(t, c.param, r.Param, "the field holding the most is named")
			require.Contains(t, r.Message, "limit of 200")
		})
	}
	// The request's own vocabulary counts for nothing: field names, the
	// roles, the part types, numbers, and a model the allow-list names.
	at := `{"model":"m","temperature":0.5,"max_tokens":9,"stream":true,"messages":[{"role":"system","content":"` + strings.Repeat("a", 100) +
		`"},{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("b", 100) + `"}]}]}`
	_, err := admit.Policy{MaxInputChars: 200, Models: []string{"m"}}.Filter([]byte(at))
	require.NoError(t, err)
	_, err = admit.Policy{MaxInputChars: 199, Models: []string{"m"}}.Filter([]byte(at))
	require.Error(t, err)
}

// Unknown keys inside content parts are dropped before forwarding; the
// known ones pass.
func TestUnknownKeysOfContentPartsAreDropped(t *testing.T) {
	m := filtered(t, admit.Policy{}, `{"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"x":1},"secret":"s"},
		{"type":"image_url","image_url":{"url":"data:"},"extra":1}]}]}`)
	require.Equal(t, []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "hi"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:"}},
	}}}, m["messages"])
}

// TestEachFieldIsDecodedOnce: however many rules read a field (the
// messages are filtered and counted, max_tokens checked and counted, the
// model allowed), the policy decodes its JSON once; the messages' numbers
// keep their digits through it.
func TestEachFieldIsDecodedOnce(t *testing.T) {
	const body = `{"model":"m","max_tokens":5,"max_completion_tokens":6,"stop":["x"],"tools":[{"type":"function","function":{"name":"f"}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"<hi> & bye","x":1}],"extra":2},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"index":9007199254740993}]},{"role":"tool","content":"42","tool_call_id":"c","n":1}]}`
	for _, p := range []admit.Policy{
		{MaxInputChars: 1000},
		{MaxInputChars: 1000, Models: []string{"m"}, MaxTokens: 10},
		{},
	} {
		decoded := map[string]int{}
		p.OnDecode = func(field string) { decoded[field]++ }
		in, err := admit.Decode([]byte(body))
		require.NoError(t, err)
		out, err := p.FilterFields(in)
		require.NoError(t, err)
		require.Contains(t, string(out["messages"]), `"index":9007199254740993`, "a number keeps its digits")
		require.Equal(t, 1, decoded["messages"], "%+v", p)
		for f, n := range decoded {
			require.Equal(t, 1, n, "%s decoded %d times under %+v", f, n, p)
		}
		require.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"<hi> & bye"}]},`+
			`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"},"index":9007199254740993}]},{"role":"tool","content":"42","tool_call_id":"c"}]`, string(out["messages"]))
	}
}
