package auth_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/auth"
)

// through runs one request through g and returns the answer and the
// identity the next handler saw ("" when it was not reached).
func through(t *testing.T, g *auth.Guard, r *http.Request) (*httptest.ResponseRecorder, string) {
	t.Helper()
	var who string
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who = auth.Identity(r)
		w.WriteHeader(http.StatusNoContent)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec, who
}

// refusal is the error body a refused client reads.
func refusal(t *testing.T, rec *httptest.ResponseRecorder) (typ, code, msg string) {
	t.Helper()
	var b struct {
		Error struct{ Type, Code, Message string }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b), rec.Body.String())
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return b.Error.Type, b.Error.Code, b.Error.Message
}

func request(path, authz string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, nil)
	r.RemoteAddr = "192.0.2.7:51234"
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	return r
}

func TestAGuardWithAVerifierLetsInAValidTokenAsItsSubject(t *testing.T) {
	tok, err := auth.Mint(secret, "user-42", 10*time.Minute, time.Now())
	require.NoError(t, err)
	g := &auth.Guard{Verifier: auth.NewVerifier(secret, nil), Log: slog.New(slog.DiscardHandler)}
	for _, r := range []*http.Request{
		request("/v1/chat/completions", "Bearer "+tok),
		request("/v1/chat/completions", "Bearer  "+tok+" "),
		request("/v1/chat/completions", "bearer "+tok), // the scheme in any case (RFC 9110 11.1)
		request("/v1/chat/completions", "BEARER "+tok),
		request("/v1/ws?access_token="+tok, ""),
	} {
		rec, who := through(t, g, r)
		require.Equal(t, http.StatusNoContent, rec.Code, r.URL)
		require.Equal(t, "sub:user-42", who)
	}
}

func TestAGuardWithAVerifierRefusesABadTokenSayingWhy(t *testing.T) {
	other, err := auth.Mint([]byte("another secret, also 32 bytes long!"), "u", time.Minute, time.Now())
	require.NoError(t, err)
	g := &auth.Guard{Verifier: auth.NewVerifier(secret, nil), Log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name string
		r    *http.Request
		code string
	}{
		{"no token", request("/v1/chat/completions", ""), auth.Missing},
		{"another scheme", request("/v1/chat/completions", "Basic dXNlcjpwYXNz"), auth.Missing},
		{"a query token off the WebSocket", request("/v1/chat/completions?access_token="+other, ""), auth.Missing},
		{"not a JWT", request("/v1/chat/completions", "Bearer opaque"), auth.Malformed},
		{"another secret's token", request("/v1/ws?access_token="+other, ""), auth.Signature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, who := through(t, g, tc.r)
			require.Equal(t, http.StatusUnauthorized, rec.Code)
			require.Empty(t, who, "the API is not reached")
			require.Equal(t, `Bearer realm="trickle", error="invalid_token"`, rec.Header().Get("WWW-Authenticate"))
			typ, code, msg := refusal(t, rec)
			require.Equal(t, "authentication_error", typ)
			require.Equal(t, tc.code, code)
			require.NotEmpty(t, msg)
		})
	}
}

func TestAGuardWithASharedTokenLetsInOnlyThatToken(t *testing.T) {
	g := &auth.Guard{Token: "s3cret", Log: slog.New(slog.DiscardHandler)}
	rec, who := through(t, g, request("/v1/chat/completions", "Bearer s3cret"))
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, "addr:192.0.2.7", who, "a shared token names nobody: the address counts")

	rec, _ = through(t, g, request("/v1/ws?access_token=s3cret", ""))
	require.Equal(t, http.StatusNoContent, rec.Code, "the WebSocket's token comes in the query")

	for _, r := range []*http.Request{
		request("/v1/chat/completions", ""),
		request("/v1/chat/completions", "Bearer s3cret2"),
		request("/v1/chat/completions", "Bearer "),
		request("/v1/chat/completions?access_token=s3cret", ""),
	} {
		rec, who := through(t, g, r)
		require.Equal(t, http.StatusUnauthorized, rec.Code, r.URL.String()+" "+r.Header.Get("Authorization"))
		require.Empty(t, who)
		require.Equal(t, `Bearer realm="trickle"`, rec.Header().Get("WWW-Authenticate"))
		typ, _, msg := refusal(t, rec)
		require.Equal(t, "unauthorized", typ)
		require.Equal(t, "relay: missing or wrong bearer token", msg)
	}
}

func TestAnOpenGuardLetsEveryRequestInAsItsAddress(t *testing.T) {
	rec, who := through(t, &auth.Guard{}, request("/v1/chat/completions", "Bearer whatever"))
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, "addr:192.0.2.7", who)
}

func TestIdentityTakesARemoteAddressWithoutAPortAsItIs(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "@unix"
	require.Equal(t, "addr:@unix", auth.Identity(r))
	r.RemoteAddr = "[2001:db8::1]:443"
	require.Equal(t, "addr:2001:db8::1", auth.Identity(r))
}

func TestARefusedTokensErrorSaysRelayAndWhatToDo(t *testing.T) {
	_, err := auth.NewVerifier(secret, nil).Verify("")
	require.ErrorContains(t, err, "relay: this relay needs a token")
}

// Without auth a client is its address, and an IPv6 client its /64: one
// host holds a whole /64 and would otherwise get a fresh budget per
// address.
func TestAnAddressIdentityGroupsIPv6ByItsSlash64(t *testing.T) {
	id := func(remote string) string {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
		r.RemoteAddr = remote
		return auth.Identity(r)
	}
	require.Equal(t, "addr:192.0.2.7", id("192.0.2.7:51234"))
	require.Equal(t, "addr:192.0.2.7", id("[::ffff:192.0.2.7]:51234"), "an IPv4-mapped address is the IPv4 it is")
	require.Equal(t, "addr:2001:db8:1:2::/64", id("[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443"))
	require.Equal(t, id("[2001:db8:1:2::1]:1"), id("[2001:db8:1:2:ffff::9]:2"), "one /64, one identity")
	require.NotEqual(t, id("[2001:db8:1:2::1]:1"), id("[2001:db8:1:3::1]:1"), "another /64, another identity")
	require.Equal(t, "addr:fe80::/64", id("[fe80::1%eth0]:1"), "a zone does not make another identity")
}
