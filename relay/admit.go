// What of a request reaches the model (package admit): known fields only,
// allowed models, capped max_tokens, a bounded conversation.

package relay

import (
	"slices"

	"github.com/trickle-dev/trickle/relay/internal/admit"
)

// RequestFields are the request fields the relay passes to the model (the
// simulated one included); every other field, and every field of a
// message other than MessageFields, is dropped. The slice is the caller's.
func RequestFields() []string { return slices.Clone(admit.Fields) }

// MessageFields are the fields of a message the relay passes to the
// model; every other is dropped. The slice is the caller's.
func MessageFields() []string { return slices.Clone(admit.MessageFields) }

// WithModels allows only these models: a request naming another gets 400
// (code model_not_allowed) naming the allowed ones; one naming none gets
// the first. An Upstream's Model still replaces the name sent upstream.
func WithModels(names ...string) Option {
	return func(c *config) {
		c.guard.models = append(c.guard.models, names...)
		c.guard.modelsSet = true
	}
}

// WithMaxTokens caps the output tokens a request may ask for: a larger
// max_tokens or max_completion_tokens gets 400 (code
// max_tokens_over_cap) naming the cap, and a request naming neither is
// sent with max_tokens set to the cap.
func WithMaxTokens(n int) Option {
	return func(c *config) { c.guard.maxTokens, c.guard.maxTokensSet = n, true }
}

// WithMaxInputChars bounds the text a request sends the model, in
// characters: every string of every field that passes counts (the
// messages' text, names and tool call ids, tool calls, tools and their
// schemas' keys, tool_choice, response_format, stop, user, content parts'
// data); numbers, booleans, field names, the vocabulary's roles and part
// types and a model WithModels allows do not. Beyond it 400 (code
// input_too_long, its param the field holding the most).
func WithMaxInputChars(n int) Option {
	return func(c *config) { c.guard.maxInputChars, c.guard.maxInputCharsSet = n, true }
}

func (g *guardConfig) checkAdmit() error {
	if g.modelsSet && len(g.models) == 0 {
		return &OptionError{Option: "WithModels", Value: `""`, Reason: "name at least one model"}
	}
	for _, m := range g.models {
		if m == "" {
			return &OptionError{Option: "WithModels", Value: `""`, Reason: "a model name is empty"}
		}
	}
	for _, l := range []struct {
		option string
		set    bool
		value  int64
	}{{"WithMaxTokens", g.maxTokensSet, int64(g.maxTokens)}, {"WithMaxInputChars", g.maxInputCharsSet, int64(g.maxInputChars)},
		{"WithMaxStreamsPerClient", g.streamsSet, int64(g.limits.Streams)}, {"WithTokensPerDay", g.tokensSet, g.limits.TokensPerDay}} {
		if l.set && l.value <= 0 {
			return &OptionError{Option: l.option, Value: l.value, Reason: "the limit must be positive"}
		}
	}
	return nil
}

func (g *guardConfig) policy() admit.Policy {
	return admit.Policy{Models: g.models, MaxTokens: g.maxTokens, MaxInputChars: g.maxInputChars}
}
