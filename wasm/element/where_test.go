package element

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every error's detail says where: an HTTP error names the URL that
// answered (an empty 404 too), and a fetch to another origin that failed
// before any response says CORS is the likely cause and which headers the
// backend must send; one to the page's own origin does not.
func TestErrorsSayWhere(t *testing.T) {
	ask := func(t *testing.T, url, pageOrigin string) (*fakeEnv, *page, *Element, int) {
		env, p := newFakeEnv(t), newPage(t)
		e := NewElement(1, env, env.clock(), nil, "worker")
		e.Do(command(t, `{"t":"ask","id":1,"n":1,"url":"`+url+`","origin":"`+pageOrigin+`","headers":[["Authorization","Bearer t"]],"prompt":"hi"}`), time.Time{}, nil)
		return env, p, e, env.conn().Gen
	}

	t.Run("a 404 with an empty body names the URL", func(t *testing.T) {
		_, p, e, gen := ask(t, "https://api.test/v1/chat/completions", "https://page.test")
		require.True(t, e.Response(gen, Response{OK: false, Status: 404}))
		require.True(t, e.Ended(gen, End{Kind: EndDone}))
		p.frame(e)
		require.Equal(t, "failed", p.state)
		require.Contains(t, p.end.Detail, "HTTP 404 with an empty body at https://api.test/v1/chat/completions")
	})

	t.Run("a 500 with a message names the URL and the message", func(t *testing.T) {
		env, p, e, gen := ask(t, "https://api.test/v1/chat/completions", "https://page.test")
		require.True(t, e.Response(gen, Response{OK: false, Status: 500}))
		env.arrive(gen, []byte(`{"error":{"message":"boom"}}`))
		require.True(t, e.Ended(gen, End{Kind: EndDone}))
		p.frame(e)
		require.Contains(t, p.end.Detail, "HTTP 500 at https://api.test/v1/chat/completions: boom")
	})

	t.Run("a refused cross-origin fetch: CORS and the headers to send", func(t *testing.T) {
		_, p, e, gen := ask(t, "https://api.test/api/chat", "https://page.test")
		require.True(t, e.Ended(gen, End{Kind: EndFetchError, Err: "Failed to fetch"}))
		p.frame(e)
		require.Equal(t, "Could not reach the server.", p.end.Notice)
		for _, want := range []string{"https://api.test/api/chat", "Failed to fetch", "CORS is the likely cause", "Access-Control-Allow-Origin: https://page.test", "Access-Control-Allow-Headers: Authorization, Content-Type"} {
			require.Contains(t, p.end.Detail, want)
		}
	})

	t.Run("a failed same-origin fetch: no CORS hint", func(t *testing.T) {
		_, p, e, gen := ask(t, "https://page.test/api/chat", "https://page.test")
		require.True(t, e.Ended(gen, End{Kind: EndFetchError, Err: "Failed to fetch"}))
		p.frame(e)
		require.Contains(t, p.end.Detail, "https://page.test/api/chat: Failed to fetch")
		require.NotContains(t, p.end.Detail, "CORS")
	})
}
