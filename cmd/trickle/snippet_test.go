package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/sim"
	"github.com/trickle-dev/trickle/stream"
)

// readmeSnippetPrompt is the prompt the README's snippet asks with: the
// value of its input.
func readmeSnippetPrompt(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "<!-- any-page-snippet")
	require.True(t, ok, "README.md lost its any-page-snippet marker")
	m := regexp.MustCompile(`<input name="prompt" value="([^"]+)"`).FindStringSubmatch(after)
	require.NotNil(t, m, "the snippet's prompt input")
	return m[1]
}

// The README's snippet, against `trickle serve` with every default, gets
// the answer to its question (code, for a code question) in under 10 s —
// not the 20 KB essay.
func TestTheReadmeSnippetsPromptStreamsARelevantAnswerAtDefaultTiming(t *testing.T) {
	prompt := readmeSnippetPrompt(t)
	require.Equal(t, "code", sim.Choose(prompt))

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	go func() {
		done <- serveContext(ctx, []string{"--addr", "127.0.0.1:0"}, io.Discard, io.Discard, func(addr string) { ready <- addr })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	addr := <-ready

	// The body the widget's ask(prompt) sends.
	body := `{"messages":[{"content":` + quote(prompt) + `,"role":"user"}],"stream":true}`
	start := time.Now()
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p, err := stream.NewPipeline(stream.WithContentType(resp.Header.Get("Content-Type")))
	require.NoError(t, err)
	_, err = io.Copy(p, resp.Body)
	require.NoError(t, err)
	p.Close()
	took := time.Since(start)

	want, _ := sim.Lookup("code")
	require.Equal(t, stream.Complete, p.Answer().Status())
	require.Equal(t, want.Text, p.Answer().Text())
	require.Contains(t, p.Answer().Text(), "reverse a string in Go")
	t.Logf("the snippet's answer streamed in %v", took)
	require.Less(t, took, 10*time.Second)
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
