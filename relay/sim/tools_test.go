package sim_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/stream"
)

// A real model cannot call a tool the request did not declare: without
// tools, the tool-call answer streams no call in any dialect, and says why.
func TestNoToolIsCalledUnlessTheRequestDeclaresIt(t *testing.T) {
	for _, d := range sim.Dialects() {
		for _, choice := range []string{"", "auto", "required"} {
			a := decode(t, d, wire(all(t, sim.Params{Dialect: d, Answer: "tool-call", ToolChoice: choice})))
			require.Equal(t, stream.Complete, a.Status(), "%s: %v", d, a.Err())
			require.Empty(t, a.ToolCalls(), "%s %q: no tool declared, none called", d, choice)
			require.Contains(t, a.Text(), "declares no tool", d)
			if d == stream.DialectOpenAI {
				require.Equal(t, "stop", a.FinishReason())
			}
		}
	}
	// Declared, but refused by tool_choice "none".
	a := decode(t, "openai", wire(all(t, sim.Params{Answer: "tool-call", Tools: []sim.Tool{sim.Weather}, ToolChoice: "none"})))
	require.Empty(t, a.ToolCalls())
}

// The call goes to a declared tool that fits, with arguments valid against
// its schema, whatever the schema asks (the canned arguments only where
// they fit).
func TestToolArgumentsAreValidAgainstTheDeclaredSchema(t *testing.T) {
	schemas := []string{
		`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`,
		`{"type":"object","properties":{"city":{"type":"string","minLength":2,"maxLength":4}},"required":["city"],"additionalProperties":false}`,
		`{"type":"object","properties":{"unit":{"type":"string","enum":["kelvin"]},"days":{"type":"integer","minimum":3,"maximum":7}},"required":["unit","days"],"additionalProperties":false}`,
		`{"type":"object","properties":{"where":{"type":"object","properties":{"lat":{"type":"number","exclusiveMinimum":-90,"maximum":90},"lon":{"type":"number"}},"required":["lat","lon"]}},"required":["where"]}`,
		`{"type":"object","properties":{"places":{"type":"array","items":{"type":"string","const":"Lyon"},"minItems":2}},"required":["places"]}`,
		`{"type":"object","properties":{"location":{"type":["string","null"]},"include_forecast":{"type":"boolean"}},"required":["location","include_forecast"]}`,
		`{"type":"object","properties":{"mode":{"anyOf":[{"type":"integer","minimum":10},{"type":"string"}]}},"required":["mode"]}`,
		`{"type":"object"}`,
		`{}`,
	}
	for _, sc := range schemas {
		tool := sim.Tool{Name: "lookup_forecast", Description: "Weather forecast", Parameters: json.RawMessage(sc)}
		for _, d := range sim.Dialects() {
			if d == stream.DialectPlain {
				continue // plain carries text only
			}
			a := decode(t, d, wire(all(t, sim.Params{Dialect: d, Answer: "tool-call", Tools: []sim.Tool{{Name: "unrelated", Parameters: json.RawMessage(`{}`)}, tool}})))
			calls := a.ToolCalls()
			require.Len(t, calls, 1, "%s %s", d, sc)
			require.Equal(t, "lookup_forecast", calls[0].Name, "the tool that fits, not the first")
			require.NoError(t, sim.Validate(json.RawMessage(sc), []byte(calls[0].Arguments)), "%s %s: %s", d, sc, calls[0].Arguments)
		}
	}
}

// The schema check itself refuses what it should (so that the test above
// proves something).
func TestValidateRefusesWhatBreaksTheSchema(t *testing.T) {
	bad := []struct{ schema, value string }{
		{`{"type":"object","required":["a"]}`, `{}`},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"a":1}`},
		{`{"type":"object","additionalProperties":false}`, `{"a":1}`},
		{`{"enum":["x"]}`, `"y"`},
		{`{"type":"integer"}`, `1.5`},
		{`{"type":"number","minimum":3}`, `2`},
		{`{"type":"string","maxLength":2}`, `"abc"`},
		{`{"type":"array","minItems":1}`, `[]`},
		{`{"anyOf":[{"type":"string"},{"type":"boolean"}]}`, `3`},
		{`{"const":"a"}`, `"b"`},
	}
	for _, c := range bad {
		require.Error(t, sim.Validate(json.RawMessage(c.schema), []byte(c.value)), "%s %s", c.schema, c.value)
	}
	require.NoError(t, sim.Validate(sim.Weather.Parameters, []byte(`{"location":"Lyon, France","unit":"celsius"}`)))
}

// tool_choice forces a call, as the API does: "required" calls a declared
// tool even for a question that needs none, a name calls that tool.
func TestToolChoiceForcesTheCall(t *testing.T) {
	other := sim.Tool{Name: "search_docs", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}
	for _, c := range []struct{ choice, want string }{{"required", "search_docs"}, {"get_weather", "get_weather"}, {"search_docs", "search_docs"}} {
		a := decode(t, "openai", wire(all(t, sim.Params{Answer: "short", Tools: []sim.Tool{other, sim.Weather}, ToolChoice: c.choice})))
		require.Len(t, a.ToolCalls(), 1, c.choice)
		require.Equal(t, c.want, a.ToolCalls()[0].Name)
		require.Equal(t, "tool_calls", a.FinishReason())
	}
}

// A stop sequence ends the text before it, in every dialect, and the
// sequence itself is not sent.
func TestStopSequencesEndTheText(t *testing.T) {
	full, _ := sim.Lookup("short")
	seq := "What I answer"
	i := strings.Index(full.Text, seq)
	require.Positive(t, i)
	for _, d := range sim.Dialects() {
		msgs := all(t, sim.Params{Dialect: d, Answer: "short", Stop: []string{"never there", seq}, TokenChars: 5})
		a := decode(t, d, wire(msgs))
		require.Equal(t, stream.Complete, a.Status(), d)
		require.Equal(t, full.Text[:i], a.Text(), d)
		if d == stream.DialectAnthropic {
			require.Contains(t, string(wire(msgs)), `"stop_reason":"stop_sequence","stop_sequence":"What I answer"`)
		}
	}
}

// max_tokens cuts every dialect's answer with its "length" reason.
func TestMaxTokensEndsWithLengthInEveryDialect(t *testing.T) {
	for _, d := range sim.Dialects() {
		g, err := sim.New(sim.Params{Dialect: d, Answer: "short", MaxTokens: 3})
		require.NoError(t, err)
		var msgs []sim.Message
		for m, ok := g.Next(); ok; m, ok = g.Next() {
			msgs = append(msgs, m)
		}
		require.Equal(t, 3, g.Tokens(), d)
		a := decode(t, d, wire(msgs))
		require.Equal(t, stream.Complete, a.Status(), d)
		require.Len(t, []rune(a.Text()), 12, d)
		switch d {
		case stream.DialectOpenAI, stream.DialectAnthropic, stream.DialectGemini:
			require.Contains(t, []string{"length", "max_tokens", "MAX_TOKENS"}, a.FinishReason(), d)
		}
	}
}
