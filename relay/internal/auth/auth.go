// Package auth is the relay's check of a client's identity: a short-lived
// JWT signed with HS256 by the page's own backend, whose subject is the
// identity the relay's limits count. It says precisely why a token is
// refused (expired, signed with another secret, another algorithm,
// alg none…), and mints tokens for tests and scripts. Guard is the API's
// middleware: it reads the request's token, or the shared bearer token of
// WithToken, and puts the identity in the request's context.
package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/golang-jwt/jwt/v5"
)

// MaxLifetime is the longest a token may be valid for: one whose expiry
// lies further ahead is refused, so that a leaked token is worth little.
const MaxLifetime = 24 * time.Hour

// Why a token is refused: the code of an *Error (package wire has the
// contract).
const (
	Missing     = string(wire.CodeTokenMissing)      // no token was sent
	Malformed   = string(wire.CodeTokenMalformed)    // not three base64url parts of JSON
	AlgNone     = string(wire.CodeTokenAlgNone)      // "alg":"none": unsigned
	Algorithm   = string(wire.CodeTokenAlgorithm)    // signed with an algorithm other than HS256
	Signature   = string(wire.CodeTokenBadSignature) // forged, altered or signed with another secret
	Expired     = string(wire.CodeTokenExpired)      // past its exp
	NotYetValid = string(wire.CodeTokenNotYetValid)  // before its nbf or iat
	NoExpiry    = string(wire.CodeTokenNoExpiry)     // no exp claim
	TooLong     = string(wire.CodeTokenTooLong)      // exp more than MaxLifetime ahead
	NoSubject   = string(wire.CodeTokenNoSubject)    // no sub claim: no identity to count
	Audience    = string(wire.CodeTokenAudience)     // the relay expects an aud the token lacks
	Issuer      = string(wire.CodeTokenIssuer)       // the relay expects an iss the token lacks
)

// Error is a refused token: Code (one of the constants) and a message
// that says what to do.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return "relay: " + e.Message }

// Refusal is how the relay refuses a request with the token: 401 with the
// code.
func (e *Error) Refusal() wire.Error {
	return wire.Error{Type: wire.TypeAuthentication, Code: wire.Code(e.Code), Message: e.Error()}
}

// Verifier checks tokens against one secret.
type Verifier struct {
	secret []byte
	now    func() time.Time
	// When set, the token's "aud" must hold Audience and its "iss" be
	// Issuer.
	Audience, Issuer string
}

// NewVerifier checks tokens signed with secret; now is the clock (nil:
// time.Now).
func NewVerifier(secret []byte, now func() time.Time) *Verifier {
	if now == nil {
		now = time.Now
	}
	return &Verifier{secret: secret, now: now}
}

// Verify returns the token's subject, or an *Error saying why the token
// is refused.
func (v *Verifier) Verify(token string) (string, error) {
	if token == "" {
		return "", &Error{Missing, "this relay needs a token: send Authorization: Bearer <token> (on the WebSocket, ?access_token=<token>), minted by the page's backend"}
	}
	// The header is read before the library parses the token so that the
	// refusal can say which algorithm was used; the library's own check
	// (WithValidMethods) refuses the same tokens.
	head, _, ok := strings.Cut(token, ".")
	if !ok {
		return "", &Error{Malformed, "the token is not a JWT (want header.payload.signature)"}
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	var h struct {
		Alg string `json:"alg"`
	}
	if err != nil || json.Unmarshal(raw, &h) != nil {
		return "", &Error{Malformed, "the token's header is not base64url JSON"}
	}
	switch {
	case strings.EqualFold(h.Alg, "none"):
		return "", &Error{AlgNone, `the token is unsigned ("alg":"none"); sign it with HS256 and the relay's secret`}
	case h.Alg != jwt.SigningMethodHS256.Alg():
		return "", &Error{Algorithm, fmt.Sprintf("the token is signed with %q; this relay accepts HS256 only", h.Alg)}
	}
	var claims jwt.RegisteredClaims
	_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return v.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(v.now),
		jwt.WithLeeway(Leeway),
	)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "", &Error{Malformed, "the token is malformed: " + err.Error()}
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "", &Error{Signature, "the token's signature does not match this relay's secret: it was altered, forged or signed with another secret"}
	case errors.Is(err, jwt.ErrTokenExpired):
		return "", &Error{Expired, "the token expired at " + claims.ExpiresAt.UTC().Format(time.RFC3339) + "; ask the page's backend for a new one"}
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "", &Error{NotYetValid, "the token is not valid yet (its nbf or iat is in the future); check the backend's clock"}
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing) && claims.ExpiresAt == nil:
		return "", &Error{NoExpiry, `the token has no "exp"; mint short-lived tokens (at most ` + MaxLifetime.String() + ")"}
	default:
		return "", &Error{Malformed, "the token is refused: " + err.Error()}
	}
	if left := claims.ExpiresAt.Sub(v.now()); left > MaxLifetime {
		return "", &Error{TooLong, fmt.Sprintf(`the token's "exp" is %s ahead, over the relay's limit of %s; mint short-lived tokens`, left.Round(time.Second), MaxLifetime)}
	}
	if claims.Subject == "" {
		return "", &Error{NoSubject, `the token has no "sub": the relay counts its limits per subject; mint it with the user's id as sub`}
	}
	if v.Audience != "" && !slices.Contains(claims.Audience, v.Audience) {
		return "", &Error{Audience, fmt.Sprintf(`the token is not for this relay: its "aud" is %s, and this relay accepts only tokens for %q; mint it with that audience`, claimed(claims.Audience), v.Audience)}
	}
	if v.Issuer != "" && claims.Issuer != v.Issuer {
		return "", &Error{Issuer, fmt.Sprintf(`the token's issuer is not the one this relay trusts: its "iss" is %s, and this relay accepts only tokens issued by %q`, claimed([]string{claims.Issuer}), v.Issuer)}
	}
	return claims.Subject, nil
}

// claimed phrases a claim's values for a refusal: "missing" when none.
func claimed(values []string) string {
	var q []string
	for _, v := range values {
		if v != "" {
			q = append(q, fmt.Sprintf("%q", v))
		}
	}
	if len(q) == 0 {
		return "missing"
	}
	return strings.Join(q, ", ")
}

// Leeway is the clock skew allowed between the backend that mints a
// token and the relay, on its exp, nbf and iat.
const Leeway = 60 * time.Second

// MinSecret is the shortest secret a token is signed or checked with:
// HS256 keys shorter than the hash (RFC 7518 3.2) are guessable offline
// from one token.
const MinSecret = 32

// Mint signs a token for sub valid for ttl from now, with HS256. A secret
// shorter than MinSecret is refused, as the relay refuses to check with it.
func Mint(secret []byte, sub string, ttl time.Duration, now time.Time) (string, error) {
	return MintFor(secret, sub, ttl, now, "", "")
}

// MintFor is Mint with an audience ("aud") and an issuer ("iss"), each
// left out when "".
func MintFor(secret []byte, sub string, ttl time.Duration, now time.Time, audience, issuer string) (string, error) {
	switch {
	case sub == "":
		return "", errors.New("the subject is empty")
	case ttl <= 0 || ttl > MaxLifetime:
		return "", fmt.Errorf("the lifetime %s is not between 0 and %s", ttl, MaxLifetime)
	case len(secret) < MinSecret:
		return "", fmt.Errorf("the secret has %d bytes: give at least %d (e.g. openssl rand -hex 32), as trickle serve requires", len(secret), MinSecret)
	}
	claims := jwt.RegisteredClaims{
		Subject:   sub,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		Issuer:    issuer,
	}
	if audience != "" {
		claims.Audience = jwt.ClaimStrings{audience}
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
