package paced

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestServeSendsTheWholeAnswerAsOpenAIChunksThenDone(t *testing.T) {
	answer := "# Título\n\nUnicode — every rune survives, even 🙂 at a cut.\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Serve(w, r, Tokens(answer, 4), 20_000, nil)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))

	var got strings.Builder
	var tokens int
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		require.False(t, done, "nothing after [DONE]")
		if data == "[DONE]" {
			done = true
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &chunk))
		if c := chunk.Choices[0].Delta.Content; c != "" {
			require.LessOrEqual(t, len([]rune(c)), 4)
			tokens++
			got.WriteString(c)
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, done)
	require.Equal(t, answer, got.String())
	require.Equal(t, (len([]rune(answer))+3)/4, tokens)
}
