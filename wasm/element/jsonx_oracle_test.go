package element

import (
	"encoding/json"
	"fmt"
	"github.com/trickle-dev/trickle/internal/buffering"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// streamingBodyOracle is StreamingBody written with encoding/json, which
// the widget does not link: the port must give the same bodies and refuse
// the same inputs.
func streamingBodyOracle(body string) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil || m == nil {
		return "", fmt.Errorf("%w: %v", ErrBadRequestBody, err)
	}
	m["stream"] = json.RawMessage("true")
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadRequestBody, err)
	}
	return string(b), nil
}

func checkStreamingBody(t *testing.T, body string) {
	want, wantErr := streamingBodyOracle(body)
	got, gotErr := StreamingBody(body)
	if wantErr != nil {
		require.ErrorIs(t, gotErr, ErrBadRequestBody, "body %q", body)
		return
	}
	require.NoError(t, gotErr, "body %q", body)
	require.Equal(t, want, got, "body %q", body)
}

var requestBodySeeds = []string{
	`{"model":"m","stream":false,"temperature":0.5,"messages":[]}`,
	`{"messages":[{"role":"user","content":"<b>hi</b> & \u2028 \"q\""}],"max_tokens":10}`,
	" {\n \"z\" : [ 1 , 2 ] , \"a\" : { \"b\" : null } , \"stream\" : \"yes\" } ",
	`{"model":"a","model":"b","stream":true,"stream":false}`,
	`{"\u00e9":1,"e":2,"\u212a":3,"Model":"x","STREAM":false}`,
	"{\"k\\ud800\":\"\xff\",\"<\":\"&\"}",
	`{}`, `[]`, `"x"`, `null`, `{`, `{"a":1,}`, `{"a":1}x`, ``, `1`,
}

func TestStreamingBodyWritesWhatEncodingJSONWrote(t *testing.T) {
	for _, body := range requestBodySeeds {
		checkStreamingBody(t, body)
	}
	// Random bodies, and each cut short or with a byte changed.
	rng := rand.New(rand.NewPCG(21, 22))
	values := []string{`1`, `-2.50e1`, `"s"`, `"<\u0026>"`, `true`, `null`, `[ 1, {"x" : [] } ]`, `{"nested":{"stream":false}}`}
	keys := []string{"model", "stream", "messages", "temperature", "Model", "a", "é", "<tag>"}
	n := 2000
	if testing.Short() {
		n = 300
	}
	for range n {
		body := "{"
		for i := range rng.IntN(6) {
			if i > 0 {
				body += ","
			}
			k, _ := json.Marshal(keys[rng.IntN(len(keys))])
			body += string(k) + ": " + values[rng.IntN(len(values))]
		}
		body += "}"
		checkStreamingBody(t, body)
		i := rng.IntN(len(body))
		checkStreamingBody(t, body[:i])
		checkStreamingBody(t, body[:i]+"\""+body[i:])
	}
}

func FuzzStreamingBody(f *testing.F) {
	for _, body := range requestBodySeeds {
		f.Add(body)
	}
	f.Fuzz(checkStreamingBody)
}

func checkPromptBody(t *testing.T, prompt, model string) {
	m := map[string]any{
		"stream":   true,
		"messages": []map[string]string{{"role": "user", "content": prompt}},
	}
	if model != "" {
		m["model"] = model // only the page's model: none is made up
	}
	want, err := json.Marshal(m)
	require.NoError(t, err)
	require.Equal(t, string(want), PromptBody(prompt, model))
}

func TestPromptBodyWritesWhatEncodingJSONWrote(t *testing.T) {
	for _, p := range []string{"", "hello", `say "hi" </script>`, "a & b \u2028 \x00 \xff é 😀"} {
		checkPromptBody(t, p, "")
		checkPromptBody(t, p, "<model>")
	}
}

func FuzzPromptBody(f *testing.F) {
	f.Add(`say "hi" </script>`, "m")
	f.Fuzz(checkPromptBody)
}

func TestMetricsJSONIsWhatEncodingJSONWrote(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	check := func(m Metrics) {
		want, err := json.Marshal(m)
		if err != nil {
			require.Equal(t, "{}", m.JSON())
			return
		}
		require.Equal(t, string(want), m.JSON())
	}
	check(Metrics{})
	check(Metrics{TTFB: math.NaN()})
	check(Metrics{Buffering: buffering.Streamed, FrameMax: 1e21, GapP50: 1e-7, Tokens: -3})
	f := func() float64 {
		switch rng.IntN(3) {
		case 0:
			return round2(rng.Float64() * 1e5)
		case 1:
			return math.Float64frombits(rng.Uint64())
		}
		return float64(rng.IntN(100))
	}
	for range 500 {
		check(Metrics{
			TTFB: f(), TTFT: f(), GapP50: f(), GapP95: f(), GapMax: f(), Tokens: rng.Int(), TokensPerS: f(),
			Bytes: rng.IntN(1 << 30), Duration: f(), Buffering: buffering.Verdict(rng.IntN(4)),
			Reconnects: rng.IntN(9), Frames: rng.IntN(1000), FrameMax: f(), FrameTotal: f(),
		})
	}
}
