package upstream

import (
	"encoding/json"

	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
)

// Meter reads the output tokens an upstream reports in its stream (the
// usage OpenAI sends when asked with include_usage, Anthropic's
// message_delta, Ollama's eval_count), so that the limits count what the
// model says it generated rather than the events relayed.
type Meter struct {
	dec  stream.Decoder
	out  int
	text int // bytes of the text the stream carried (answer, reasoning, tool calls)
}

// BytesPerToken is how the relay estimates the output tokens of an answer
// whose upstream reports none: one token per four bytes of it, rounded
// up (about right for English; the JSON around a stream:false answer's
// text counts too, so that estimate is high rather than low).
const BytesPerToken = 4

// EstimateTokens is the tokens n bytes of output are taken for when the
// upstream reports none.
func EstimateTokens(n int) int { return (n + BytesPerToken - 1) / BytesPerToken }

// NewMeter reads the usage of a stream from u.
func (u *Upstream) NewMeter() *Meter {
	dec, _ := stream.NewDecoder(u.Dialect) // a checked Upstream's dialect has a decoder
	return &Meter{dec: dec}
}

// See reads one relayed event and returns the output tokens reported so
// far (0: none yet).
func (m *Meter) See(event, data string) int {
	if m.dec == nil {
		return 0
	}
	if event == "" {
		event = "message"
	}
	m.dec.Decode(sse.Event{Type: event, Data: data}, func(e stream.Event) {
		if e.Kind == stream.KindUsage && e.Usage.OutputTokens > m.out {
			m.out = e.Usage.OutputTokens
		}
		m.text += len(e.Text)
	})
	return m.out
}

// Estimate is the output tokens the text seen so far is taken for
// (EstimateTokens), for when the upstream reports none.
func (m *Meter) Estimate() int { return EstimateTokens(m.text) }

// maxUsageBody is the longest stream:false answer whose usage Forward
// reads (a longer one is copied all the same, its tokens estimated).
const maxUsageBody = 8 << 20

// outputTokens is the output tokens a stream:false answer reports, in
// any of the upstream dialects, or when it reports none the estimate from
// its bytes (EstimateTokens).
func outputTokens(body []byte) int {
	if n := reportedTokens(body[:min(len(body), maxUsageBody)]); n > 0 {
		return n
	}
	return EstimateTokens(len(body))
}

// reportedTokens is the output tokens a stream:false answer reports (0:
// none).
func reportedTokens(body []byte) int {
	var a struct {
		Usage struct {
			CompletionTokens int `json:"completion_tokens"` // OpenAI
			OutputTokens     int `json:"output_tokens"`     // Anthropic
		} `json:"usage"`
		EvalCount int `json:"eval_count"` // Ollama
	}
	if json.Unmarshal(body, &a) != nil {
		return 0
	}
	return max(a.Usage.CompletionTokens, a.Usage.OutputTokens, a.EvalCount)
}
