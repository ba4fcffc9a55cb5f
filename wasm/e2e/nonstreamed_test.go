//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// completionBody is a chat.completion as OpenAI writes it (pretty), for a
// backend that ignores stream: true.
const completionBody = `{
  "id": "chatcmpl-1",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1",
  "choices": [
    {
      "index": 0,
      "message": {"role": "assistant", "content": "The whole answer, **at once**.", "refusal": null},
      "finish_reason": "stop"
    }
  ],
  "usage": {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16}
}
`

func customCompletion(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, completionBody)
}

// A backend that ignores stream: true and answers one chat.completion:
// the answer is its text, complete, with its usage.
func TestANonStreamedCompletionIsShownAsTheAnswer(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/completion"}, "hello")
	require.Equal(t, "complete", r.Status, r.Notice)
	require.Equal(t, "The whole answer, **at once**.", r.Text)
	require.False(t, r.NoticeShown)
	require.NotNil(t, r.Message)
	out := browsertest.Eval[float64](t, ctx, `document.getElementById("a").message.usage.output_tokens`)
	require.Equal(t, 7.0, out)
}

// Every HTTP error's detail names the URL (a 404 with an empty body too),
// and a backend on another origin that sends no CORS headers is said to
// be the likely CORS refusal, with the headers it must send.
func TestErrorsNameTheURLAndTheLikelyCORSRefusal(t *testing.T) {
	ctx := tab(t)
	type errDetail struct{ Message, Reason, Detail string }
	lastError := func() errDetail {
		return browsertest.Eval[errDetail](t, ctx, `window.__events.filter((e) => e.type === "trickle-error").at(-1).detail`)
	}

	r := ask(t, ctx, map[string]string{"endpoint": "/custom/empty404"}, "hello")
	require.Equal(t, "failed", r.Status)
	e := lastError()
	require.Equal(t, "notFound", e.Reason)
	require.Contains(t, e.Detail, "HTTP 404 with an empty body at "+server(t)+"/custom/empty404")

	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A backend of its own origin, with no CORS headers at all.
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(map[string]string{"delta": "hi"})
		io.WriteString(w, "data: "+string(b)+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(plain.Close)
	browsertest.Eval[bool](t, ctx, `(document.getElementById("a").headers = { Authorization: "Bearer t" }, true)`)
	r = ask(t, ctx, map[string]string{"endpoint": plain.URL + "/api/chat"}, "hello")
	require.Equal(t, "failed", r.Status)
	e = lastError()
	require.Equal(t, "network", e.Reason)
	for _, want := range []string{plain.URL + "/api/chat", "CORS is the likely cause", "Access-Control-Allow-Origin: " + server(t), "Authorization"} {
		require.Contains(t, e.Detail, want)
	}
}
