package widget

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A stopped answer learns what it cost from the relay's answer to its
// DELETE: trickle-usage carries the usage and the message with it, and
// only the answer that was stopped takes it, once.
func TestAStoppedAnswerTakesWhatTheRelaySaysItCost(t *testing.T) {
	data, ends, _ := relayAnswer(t)
	info := `{"id":"s","state":"stopped","events":3,"upstream_cancelled":true,"usage":{"completion_tokens":42,"estimated":true}}`

	t.Run("the cost arrives after the end", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, data[:ends[2]])
		e.Stop()
		p.take(e)
		require.Equal(t, "stopped", p.state)
		require.Contains(t, p.end.Message, `"usage":null`, "the end knows no cost yet")
		e.Cost([]byte(info))
		p.take(e)
		require.Equal(t, "trickle-usage", p.events[len(p.events)-1])
		var got struct {
			Usage   map[string]any `json:"usage"`
			Message struct {
				Status     string         `json:"status"`
				Incomplete bool           `json:"incomplete"`
				Usage      map[string]any `json:"usage"`
			} `json:"message"`
		}
		detail := p.details[len(p.details)-1][len("trickle-usage "):]
		require.NoError(t, json.Unmarshal([]byte(detail), &got), detail)
		require.Equal(t, 42.0, got.Usage["output_tokens"])
		require.Equal(t, true, got.Usage["estimated"])
		require.Equal(t, got.Usage, got.Message.Usage)
		require.Equal(t, "stopped", got.Message.Status)
		require.True(t, got.Message.Incomplete)

		n := len(p.events)
		e.Cost([]byte(info))
		p.take(e)
		require.Len(t, p.events, n, "the cost is taken once")
	})

	t.Run("an answer the page moved on from takes nothing", func(t *testing.T) {
		env, p, e, gen := streaming(t)
		env.arrive(gen, data[:ends[2]])
		e.Stop()
		e.Do(askCmd(t, 2, ""), time.Time{}, nil)
		p.take(e)
		n := len(p.events)
		e.Cost([]byte(info))
		p.take(e)
		require.Len(t, p.events, n)
	})

	for name, body := range map[string]string{
		"an empty answer (the DELETE failed)": "",
		"not JSON":                            "<html>404</html>",
		"no usage":                            `{"id":"s","state":"stopped"}`,
		"a null usage":                        `{"usage":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			env, p, e, gen := streaming(t)
			env.arrive(gen, data[:ends[2]])
			e.Stop()
			p.take(e)
			n := len(p.events)
			e.Cost([]byte(body))
			p.take(e)
			require.Len(t, p.events, n)
			require.Contains(t, p.end.Message, `"usage":null`)
		})
	}
}
