//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
)

// Under JWT auth (the page sets el.headers = {Authorization}, as
// docs/security.md says), Stop stops the model: the relay reports the
// upstream cancelled, trickle-usage brings what the answer cost, and with
// one stream allowed per client the next question is not refused. Over
// SSE the DELETE carries the token; over WebSocket the socket carries the
// stop and its stopped status the cost.
func TestStopUnderAuthCancelsTheUpstreamAndReportsTheCost(t *testing.T) {
	secret := []byte("e2e-stop-under-auth-secret-0123456789")
	token, err := relay.MintToken(secret, "reader", time.Hour)
	require.NoError(t, err)
	infoOf := func(base, id string) relay.Info {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/streams/"+url.PathEscape(id)+"/info", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var in relay.Info
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
		return in
	}
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			// A relay of its own: a stream the other transport left
			// running must not count against this one's client.
			base := startRelay(relay.WithAuthSecret(secret), relay.WithMaxStreamsPerClient(1), relay.WithGrace(time.Minute))
			ctx := tabAt(t, base)
			browsertest.Eval[bool](t, ctx, `(() => {
				window.__usage = [];
				document.addEventListener("trickle-usage", (ev) => window.__usage.push(ev.detail));
				document.getElementById("a").headers = { Authorization: `+browsertest.JSString("Bearer "+token)+` };
				return true;
			})()`)
			start(t, ctx, map[string]string{
				"endpoint":  "/v1/chat/completions?answer=sample-20k&gap_ms=5",
				"transport": tr,
			}, 200)
			id := stopAnswer(t, ctx)
			require.Eventually(t, func() bool {
				in := infoOf(base, id)
				return in.UpstreamCancelled && in.State == relay.StateStopped
			}, 10*time.Second, 20*time.Millisecond, "the relay stops the generation and cancels the upstream: %+v", infoOf(base, id))
			browsertest.WaitFor(t, ctx, 10*time.Second, `window.__usage.length === 1`)
			out := browsertest.Eval[float64](t, ctx, `window.__usage[0].usage.output_tokens`)
			require.Positive(t, out, "trickle-usage says what the stopped answer cost")
			errs := browsertest.Eval[int](t, ctx, `window.__events.filter((e) => e.type === "trickle-error").length`)
			require.Zero(t, errs, "a confirmed Stop is a clean stop")

			again := browsertest.Eval[string](t, ctx, `(() => {
				const a = document.getElementById("a");
				a.setAttribute("endpoint", "/v1/chat/completions?answer=short");
				return a.ask("again");
			})()`)
			require.Equal(t, "complete", again, "with one stream per client, the next question is not refused")
		})
	}
}

// A Stop the relay refuses is not a clean stop: here the reader's token
// expired while the answer streamed, so the DELETE gets 401, and
// trickle-error (status stopped, reason stopNotConfirmed) says so with the
// URL and the relay's answer.
func TestAStopTheRelayRefusesIsSaid(t *testing.T) {
	secret := []byte("e2e-stop-refused-secret-0123456789abc")
	base := startRelay(relay.WithAuthSecret(secret))
	ctx := tabAt(t, base)
	// Minted once the page is up: it lives long enough for the answer to
	// start, and expires while it streams. The relay reads exp with
	// auth.Leeway (60 s) of clock skew, so the token's exp is that far in
	// the past, less the 5 s it is meant to live.
	now := time.Now()
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{Subject: "reader",
		IssuedAt:  jwt.NewNumericDate(now.Add(-70 * time.Second)),
		ExpiresAt: jwt.NewNumericDate(now.Add(-60*time.Second + 5*time.Second))}).SignedString(secret)
	require.NoError(t, err)
	browsertest.Eval[bool](t, ctx, `(document.getElementById("a").headers = { Authorization: `+browsertest.JSString("Bearer "+token)+` }, true)`)
	start(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&gap_ms=5"}, 50)
	id := browsertest.Eval[string](t, ctx, `document.getElementById("a").streamId`)
	require.Eventually(t, func() bool {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/streams/"+url.PathEscape(id)+"/info", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusUnauthorized
	}, 10*time.Second, 50*time.Millisecond, "the token expires")
	status := browsertest.Eval[string](t, ctx, `(async () => {
		document.getElementById("a").stop();
		return await window.__p;
	})()`)
	require.Equal(t, "stopped", status)
	browsertest.WaitFor(t, ctx, 10*time.Second, `window.__events.some((e) => e.type === "trickle-error")`)
	type errDetail struct{ Status, Reason, Detail string }
	e := browsertest.Eval[errDetail](t, ctx, `window.__events.find((e) => e.type === "trickle-error").detail`)
	require.Equal(t, "stopped", e.Status)
	require.Equal(t, "stopNotConfirmed", e.Reason)
	require.Contains(t, e.Detail, "DELETE "+base+"/v1/streams/"+id)
	require.Contains(t, e.Detail, "401")
}
