package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/relaytest"
)

// The floor is only a fair baseline if a client cannot tell it from the
// relay: same status, same headers, the same event bytes once the stream
// ids are made equal.
func TestTheFloorStreamsTheRelaysBytes(t *testing.T) {
	_, rts := relaytest.Start(t)
	f := newFloor()
	go f.run()
	fts := httptest.NewServer(f.handler())
	defer fts.Close()

	const query = "/v1/chat/completions?dialect=plain&answer=sample-20k&ttft_ms=5&gap_ms=2&jitter_ms=0&token_chars=4"
	const body = `{"model":"load","stream":true,"max_tokens":60,"messages":[{"role":"user","content":"load"}]}`
	get := func(base string) (*http.Response, string) {
		resp, err := http.Post(base+query, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		id := resp.Header.Get("X-Trickle-Stream")
		require.Len(t, id, 16)
		return resp, strings.ReplaceAll(string(b), id, "ID")
	}
	want, wantBody := get(rts.URL)
	got, gotBody := get(fts.URL)
	require.Equal(t, want.StatusCode, got.StatusCode)
	require.Equal(t, want.TransferEncoding, got.TransferEncoding, "chunked, as the relay")
	for _, h := range []string{"Content-Type", "Cache-Control", "X-Accel-Buffering", "Connection"} {
		require.Equal(t, want.Header.Get(h), got.Header.Get(h), h)
	}
	require.Len(t, got.Header, len(want.Header), "the same header lines")
	require.Equal(t, 61, strings.Count(wantBody, "\nid: ID:"), "60 tokens and the end marker")
	require.Equal(t, wantBody, gotBody)
}

// A request shape the floor cannot replay identically for every stream is
// refused with a reason, not served differently.
func TestTheFloorRefusesShapesItCannotReplay(t *testing.T) {
	f := newFloor()
	for _, q := range []string{
		"dialect=plain&answer=sample-20k&ttft_ms=5&gap_ms=2&jitter_ms=3&token_chars=4",
		"dialect=plain&ttft_ms=5&gap_ms=2&jitter_ms=0&token_chars=4",
		"dialect=plain&answer=sample-20k&gap_ms=2&jitter_ms=0&token_chars=4",
		"dialect=plain&answer=sample-20k&ttft_ms=70000&gap_ms=2&jitter_ms=0&token_chars=4",
	} {
		_, err := f.script(q, "m", 10)
		require.Error(t, err, q)
	}
}
