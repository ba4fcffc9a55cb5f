package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/testlog"
)

const testSecret = "a test secret of more than thirty-two bytes"

func TestATokenMintedByTrickleTokenIsAcceptedByTrickleServe(t *testing.T) {
	t.Setenv("TRICKLE_TEST_AUTH_SECRET", testSecret)
	var tok, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"token", "--sub", "alice", "--ttl", "2m", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET"}, nil, &tok, &errOut), errOut.String())
	require.Equal(t, 2, strings.Count(tok.String(), "."), "a JWT: %s", tok.String())

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out, logs testlog.Buffer
	go func() {
		done <- serveContext(ctx, []string{"--addr", "127.0.0.1:0", "--sim-ttft", "1ms", "--sim-gap", "1ms", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET"},
			&out, &logs, func(addr string) { ready <- addr })
	}()
	addr := <-ready
	ask := func(auth string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions?answer=short",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := ask("Bearer " + strings.TrimSpace(tok.String()))
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "data: [DONE]")
	code, body = ask("")
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, `"token_missing"`)
	cancel()
	require.Equal(t, 0, <-done, logs.String())
}

func TestTokenAndServeRefuseWhatCannotMintOrCheck(t *testing.T) {
	t.Setenv("TRICKLE_TEST_AUTH_SECRET", testSecret)
	t.Setenv("TRICKLE_TEST_SHORT_SECRET", "short")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"token"}, "--sub is required"},
		{[]string{"token", "--sub", "a", "--ttl", "0s", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET"}, "--ttl 0s"},
		{[]string{"token", "--sub", "a", "--ttl", "48h", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET"}, "--ttl 48h0m0s"},
		{[]string{"token", "--sub", "a", "--auth-secret-env", "TRICKLE_TEST_SURELY_UNSET"}, "--auth-secret-env TRICKLE_TEST_SURELY_UNSET"},
		{[]string{"serve", "--auth-secret-env", "TRICKLE_TEST_SURELY_UNSET"}, "--auth-secret-env TRICKLE_TEST_SURELY_UNSET"},
		{[]string{"serve", "--auth-secret-env", "TRICKLE_TEST_SHORT_SECRET"}, "--auth-secret-env (5 bytes): the secret has too few bytes"},
		{[]string{"serve", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET", "--token-env", "TRICKLE_TEST_AUTH_SECRET"}, "--auth-secret-env"},
		{[]string{"serve", "--auth-audience", "relay"}, "--auth-audience"},
		{[]string{"serve", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET", "--auth-issuer", ""}, "--auth-issuer"},
	} {
		var out, errOut bytes.Buffer
		require.Equal(t, 2, run(c.args, nil, &out, &errOut), "%v: %s", c.args, errOut.String())
		require.Contains(t, errOut.String(), c.says, "%v", c.args)
		require.NotContains(t, errOut.String(), "With", "%v: the message names the flag, not the library's option", c.args)
		require.Empty(t, out.String())
	}
}

// --auth-audience and --auth-issuer: a token trickle token mints with the
// same --audience and --issuer passes; one without gets 401 naming the
// claim.
func TestServeChecksTheAudienceAndIssuerTrickleTokenMints(t *testing.T) {
	t.Setenv("TRICKLE_TEST_AUTH_SECRET", testSecret)
	mint := func(args ...string) string {
		var tok, errOut bytes.Buffer
		require.Equal(t, 0, run(append([]string{"token", "--sub", "alice", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET"}, args...), nil, &tok, &errOut), errOut.String())
		return strings.TrimSpace(tok.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan int, 1)
	var out, logs testlog.Buffer
	go func() {
		done <- serveContext(ctx, []string{"--addr", "127.0.0.1:0", "--sim-ttft", "1ms", "--sim-gap", "1ms", "--auth-secret-env", "TRICKLE_TEST_AUTH_SECRET",
			"--auth-audience", "chat-relay", "--auth-issuer", "backend"}, &out, &logs, func(addr string) { ready <- addr })
	}()
	addr := <-ready
	ask := func(tok string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions?answer=short",
			strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := ask(mint("--audience", "chat-relay", "--issuer", "backend"))
	require.Equal(t, http.StatusOK, code, body)
	code, body = ask(mint())
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, `"token_audience"`)
	code, body = ask(mint("--audience", "chat-relay", "--issuer", "elsewhere"))
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, `"token_issuer"`)
	cancel()
	require.Equal(t, 0, <-done, logs.String())
}
