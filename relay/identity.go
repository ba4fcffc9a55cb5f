// Who is asking: the identity of every API request, from a JWT the page's
// backend signed (WithAuthSecret) or, without one, the client's address.
// Limits count per identity (limits.go).

package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/relay/internal/auth"
)

// guardConfig is what the options of identity.go, admit.go and limits.go
// set.
type guardConfig struct {
	authSecret    []byte
	authSecretSet bool

	models                         []string
	modelsSet                      bool
	maxTokens, maxInputChars       int
	maxTokensSet, maxInputCharsSet bool
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

// minSecret is the shortest secret WithAuthSecret takes: HS256 keys
// shorter than the hash (RFC 7518 3.2) are guessable offline from one
// token.
const minSecret = 32

func (g *guardConfig) check(c *config) error {
	if g.authSecretSet {
		switch {
		case len(g.authSecret) < minSecret:
			return &OptionError{Option: "WithAuthSecret", Value: fmt.Sprintf("(%d bytes)", len(g.authSecret)), Reason: "the secret has too few bytes: give at least 32 (e.g. openssl rand -hex 32)"}
		case c.token != "":
			return &OptionError{Option: "WithAuthSecret", Value: "and a shared token", Reason: "a shared bearer token (WithToken) and JWTs cannot both be required: keep one"}
		}
	}
	return g.checkAdmit()
}

// identityKey is the request context's key of the caller's identity.
type identityKey struct{}

// Identity is who a request counts as: "sub:" and the token's subject
// with WithAuthSecret, else "addr:" and the client's IP address.
func Identity(r *http.Request) string {
	if id, ok := r.Context().Value(identityKey{}).(string); ok {
		return id
	}
	return addressIdentity(r)
}

func addressIdentity(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
}

// bearer is the request's token: the Authorization header's, or on the
// WebSocket (whose handshake a browser cannot give headers) the
// access_token query parameter.
func bearer(r *http.Request) (string, bool) {
	if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(got), true
	}
	if r.URL.Path == "/v1/ws" && r.URL.Query().Has("access_token") {
		return r.URL.Query().Get("access_token"), true
	}
	return "", false
}

// authenticate checks the request's JWT and puts its subject in the
// request's context, or answers 401 saying what is wrong with the token.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, next http.Handler) {
	tok, _ := bearer(r)
	sub, err := s.verifier.Verify(tok)
	if err != nil {
		var ae *auth.Error
		code := auth.Malformed
		if errors.As(err, &ae) {
			code = ae.Code
		}
		s.log.Info("token refused", "code", code, "path", r.URL.Path, "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", `Bearer realm="trickle", error="invalid_token"`)
		writeCodedError(w, http.StatusUnauthorized, "authentication_error", code, err.Error())
		return
	}
	next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, "sub:"+sub)))
}

// codedError is the OpenAI-style error body with a code that names the
// refusal precisely ("token_expired", "rate_limit", "model_not_allowed").
type codedError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
		Param   string `json:"param,omitempty"`
	} `json:"error"`
}

func writeCodedError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeCodedParam(w, status, typ, code, "", msg)
}

func writeCodedParam(w http.ResponseWriter, status int, typ, code, param, msg string) {
	var e codedError
	e.Error.Message, e.Error.Type, e.Error.Code, e.Error.Param = msg, typ, code, param
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(e)
}

// MaxTokenLifetime is the longest a WithAuthSecret token may be valid:
// one whose "exp" lies further ahead is refused.
const MaxTokenLifetime = auth.MaxLifetime

// MintToken signs a token WithAuthSecret(secret) accepts: HS256, with sub,
// iat (now) and exp (now + ttl, at most MaxTokenLifetime).
func MintToken(secret []byte, sub string, ttl time.Duration) (string, error) {
	return auth.Mint(secret, sub, ttl, time.Now())
}
