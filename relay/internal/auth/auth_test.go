package auth_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/auth"
)

var (
	secret = []byte("the relay's secret, 32 bytes long")
	now    = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
)

func sign(t *testing.T, method jwt.SigningMethod, key any, claims jwt.Claims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	require.NoError(t, err)
	return s
}

func claims(sub string, ttl time.Duration) jwt.RegisteredClaims {
	return jwt.RegisteredClaims{Subject: sub, IssuedAt: jwt.NewNumericDate(now.Add(-time.Second)), ExpiresAt: jwt.NewNumericDate(now.Add(ttl))}
}

func TestAMintedTokenNamesItsSubject(t *testing.T) {
	tok, err := auth.Mint(secret, "user-42", 10*time.Minute, now)
	require.NoError(t, err)
	sub, err := auth.NewVerifier(secret, func() time.Time { return now.Add(9 * time.Minute) }).Verify(tok)
	require.NoError(t, err)
	require.Equal(t, "user-42", sub)
}

// RFC 7515 Appendix A.1: an HS256 JWS computed by the RFC's authors, with
// its key. Its signature verifies (the refusal is for what the payload
// lacks, a subject), which no token made by this code could prove.
func TestTheRFC7515ExampleVerifiesWithItsKey(t *testing.T) {
	key, err := base64.RawURLEncoding.DecodeString("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")
	require.NoError(t, err)
	tok := "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9" +
		".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ" +
		".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	before := func() time.Time { return time.Unix(1300819300, 0) }
	_, err = auth.NewVerifier(key, before).Verify(tok)
	requireCode(t, err, auth.NoSubject)

	_, err = auth.NewVerifier(key, func() time.Time { return time.Unix(1300819380, 0).Add(auth.Leeway + time.Second) }).Verify(tok)
	requireCode(t, err, auth.Expired)
	_, err = auth.NewVerifier(secret, before).Verify(tok)
	requireCode(t, err, auth.Signature)
}

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var ae *auth.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, code, ae.Code, "%v", err)
	require.NotEmpty(t, ae.Message)
}

func TestEveryBadTokenIsRefusedSayingWhy(t *testing.T) {
	good := sign(t, jwt.SigningMethodHS256, secret, claims("u", time.Minute))
	parts := strings.Split(good, ".")
	otherPayload := strings.Split(sign(t, jwt.SigningMethodHS256, secret, claims("admin", time.Minute)), ".")[1]
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	none := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims("u", time.Minute))
	// "alg":"NONE" and "None" are the same attack.
	noneUpper := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"NONE","typ":"JWT"}`)) + "." + parts[1] + "."

	cases := []struct {
		name, token, code string
	}{
		{"no token", "", auth.Missing},
		{"not a JWT", "hello", auth.Malformed},
		{"a header that is not JSON", "bm90IGpzb24." + parts[1] + "." + parts[2], auth.Malformed},
		{"a payload that is not base64", parts[0] + ".!!!." + parts[2], auth.Malformed},
		{"alg none", none, auth.AlgNone},
		{"alg NONE", noneUpper, auth.AlgNone},
		{"HS512 with the right secret", sign(t, jwt.SigningMethodHS512, secret, claims("u", time.Minute)), auth.Algorithm},
		{"ES256", sign(t, jwt.SigningMethodES256, ec, claims("u", time.Minute)), auth.Algorithm},
		{"another secret", sign(t, jwt.SigningMethodHS256, []byte("someone else's secret"), claims("u", time.Minute)), auth.Signature},
		{"a forged payload with the old signature", parts[0] + "." + otherPayload + "." + parts[2], auth.Signature},
		{"no signature", parts[0] + "." + parts[1] + ".", auth.Signature},
		{"expired past the leeway", sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{Subject: "u", ExpiresAt: jwt.NewNumericDate(now.Add(-auth.Leeway - time.Second))}), auth.Expired},
		{"not before, past the leeway", sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{Subject: "u", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)), NotBefore: jwt.NewNumericDate(now.Add(auth.Leeway + time.Second))}), auth.NotYetValid},
		{"issued in the future, past the leeway", sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{Subject: "u", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now.Add(auth.Leeway + time.Second))}), auth.NotYetValid},
		{"no expiry", sign(t, jwt.SigningMethodHS256, secret, jwt.RegisteredClaims{Subject: "u"}), auth.NoExpiry},
		{"valid for a year", sign(t, jwt.SigningMethodHS256, secret, claims("u", 365*24*time.Hour)), auth.TooLong},
		{"no subject", sign(t, jwt.SigningMethodHS256, secret, claims("", time.Minute)), auth.NoSubject},
	}
	v := auth.NewVerifier(secret, func() time.Time { return now })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub, err := v.Verify(c.token)
			require.Empty(t, sub)
			requireCode(t, err, c.code)
		})
	}
	sub, err := v.Verify(good)
	require.NoError(t, err)
	require.Equal(t, "u", sub)
}

// A backend's clock a little off the relay's is not a refusal: exp, nbf
// and iat are read with auth.Leeway.
func TestTokensWithinTheLeewayOfTheClockPass(t *testing.T) {
	v := auth.NewVerifier(secret, func() time.Time { return now })
	skew := auth.Leeway - time.Second
	for name, c := range map[string]jwt.RegisteredClaims{
		"just expired":         {Subject: "u", ExpiresAt: jwt.NewNumericDate(now.Add(-skew))},
		"not before, just now": {Subject: "u", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)), NotBefore: jwt.NewNumericDate(now.Add(skew))},
		"issued just ahead":    {Subject: "u", ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now.Add(skew))},
	} {
		sub, err := v.Verify(sign(t, jwt.SigningMethodHS256, secret, c))
		require.NoError(t, err, name)
		require.Equal(t, "u", sub, name)
	}
}

func TestMintRefusesWhatVerifyWouldRefuse(t *testing.T) {
	for _, c := range []struct {
		sub    string
		ttl    time.Duration
		secret []byte
	}{{"", time.Minute, secret}, {"u", 0, secret}, {"u", 25 * time.Hour, secret}, {"u", time.Minute, nil}, {"u", time.Minute, []byte("short")}, {"u", time.Minute, secret[:auth.MinSecret-1]}} {
		_, err := auth.Mint(c.secret, c.sub, c.ttl, now)
		require.Error(t, err, "%+v", c)
	}
}

// With an audience and an issuer set, a token must carry both (issue 36:
// aud and iss were ignored); without them set, neither is read.
func TestAnAudienceAndAnIssuerWhenSetMustMatch(t *testing.T) {
	v := auth.NewVerifier(secret, func() time.Time { return now })
	v.Audience, v.Issuer = "trickle-relay", "https://backend.example"
	with := func(aud []string, iss string) string {
		c := claims("alice", time.Minute)
		c.Audience, c.Issuer = aud, iss
		return sign(t, jwt.SigningMethodHS256, secret, c)
	}
	sub, err := v.Verify(with([]string{"other", "trickle-relay"}, "https://backend.example"))
	require.NoError(t, err, "one of its audiences is this relay's")
	require.Equal(t, "alice", sub)
	for _, c := range []struct {
		name, token, code, says string
	}{
		{"no aud", with(nil, "https://backend.example"), auth.Audience, `its "aud" is missing`},
		{"another aud", with([]string{"billing"}, "https://backend.example"), auth.Audience, `its "aud" is "billing"`},
		{"no iss", with([]string{"trickle-relay"}, ""), auth.Issuer, `its "iss" is missing`},
		{"another iss", with([]string{"trickle-relay"}, "https://evil.example"), auth.Issuer, `its "iss" is "https://evil.example"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(c.token)
			var e *auth.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, c.code, e.Code)
			require.Contains(t, e.Message, c.says)
			require.Equal(t, 401, e.Refusal().HTTPStatus())
		})
	}
	_, err = auth.NewVerifier(secret, func() time.Time { return now }).Verify(with([]string{"billing"}, "anyone"))
	require.NoError(t, err, "unset: neither claim is read")
}
