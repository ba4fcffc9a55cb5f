// Who is asking: the identity of every API request, from a JWT the page's
// backend signed (WithAuthSecret) or, without one, the client's address.
// Limits count per identity (limits.go).

package relay

import (
	"fmt"
	"net/http"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/auth"
	"github.com/trickle-dev/trickle/relay/internal/limit"
)

// guardConfig is what the options of identity.go, admit.go and limits.go
// set.
type guardConfig struct {
	authSecret    []byte
	authSecretSet bool
	// The aud and iss a token must carry (WithAuthAudience,
	// WithAuthIssuer).
	audience, issuer       string
	audienceSet, issuerSet bool

	models                         []string
	modelsSet                      bool
	maxTokens, maxInputChars       int
	maxTokensSet, maxInputCharsSet bool

	limits                         limit.Settings
	rateSet, streamsSet, tokensSet bool
}

// WithAuthSecret makes the relay accept only API requests carrying a
// short-lived JWT signed with HS256 and this secret ("Authorization:
// Bearer <jwt>"; on the WebSocket, ?access_token=<jwt>). The page's
// backend mints it; its "sub" is the identity the limits count, and its
// "exp" may lie at most a day ahead. A refused token gets 401 with a JSON
// error whose code says why (token_expired, token_bad_signature,
// token_alg_none…). Requests without an Origin header need one too.
func WithAuthSecret(secret []byte) Option {
	return func(c *config) {
		c.guard.authSecret = append([]byte(nil), secret...)
		c.guard.authSecretSet = true
	}
}

// WithAuthAudience makes WithAuthSecret's tokens valid only with this
// audience in their "aud" claim: another, or none, gets 401 (code
// token_audience) naming it. For a backend whose secret signs tokens for
// more than one service.
func WithAuthAudience(aud string) Option {
	return func(c *config) { c.guard.audience, c.guard.audienceSet = aud, true }
}

// WithAuthIssuer makes WithAuthSecret's tokens valid only when their
// "iss" claim is iss: another, or none, gets 401 (code token_issuer)
// naming it.
func WithAuthIssuer(iss string) Option {
	return func(c *config) { c.guard.issuer, c.guard.issuerSet = iss, true }
}

// minSecret is the shortest secret WithAuthSecret takes (auth.MinSecret).
const minSecret = auth.MinSecret

func (g *guardConfig) check(c *config) error {
	for _, o := range []struct {
		option, value string
		set           bool
	}{{"WithAuthAudience", g.audience, g.audienceSet}, {"WithAuthIssuer", g.issuer, g.issuerSet}} {
		switch {
		case o.set && o.value == "":
			return &OptionError{Option: o.option, Value: `""`, Reason: "name the claim's value, or leave the option out"}
		case o.set && !g.authSecretSet:
			return &OptionError{Option: o.option, Value: fmt.Sprintf("%q", o.value), Reason: "it checks the claims of JWTs, and no auth secret is set to verify them"}
		}
	}
	if g.authSecretSet {
		switch {
		case len(g.authSecret) < minSecret:
			return &OptionError{Option: "WithAuthSecret", Value: fmt.Sprintf("(%d bytes)", len(g.authSecret)), Reason: "the secret has too few bytes: give at least 32 (e.g. openssl rand -hex 32)"}
		case c.token != "":
			return &OptionError{Option: "WithAuthSecret", Value: "and a shared token", Reason: "a shared bearer token (WithToken) and JWTs cannot both be required: keep one"}
		}
	}
	if err := g.checkLimits(); err != nil {
		return err
	}
	return g.checkAdmit()
}

// Identity is who a request counts as: "sub:" and the token's subject
// with WithAuthSecret, else "addr:" and the client's IP address.
func Identity(r *http.Request) string { return auth.Identity(r) }

// MaxTokenLifetime is the longest a WithAuthSecret token may be valid:
// one whose "exp" lies further ahead is refused.
const MaxTokenLifetime = auth.MaxLifetime

// MintToken signs a token WithAuthSecret(secret) accepts: HS256, with sub,
// iat (now) and exp (now + ttl, at most MaxTokenLifetime).
func MintToken(secret []byte, sub string, ttl time.Duration) (string, error) {
	return auth.Mint(secret, sub, ttl, time.Now())
}

// MintTokenFor is MintToken with the "aud" and "iss" claims that
// WithAuthAudience and WithAuthIssuer check (each left out when "").
func MintTokenFor(secret []byte, sub string, ttl time.Duration, audience, issuer string) (string, error) {
	return auth.MintFor(secret, sub, ttl, time.Now(), audience, issuer)
}
