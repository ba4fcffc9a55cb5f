package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/trickle-dev/trickle/wire"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
)

// Guard is the API's door: with a Verifier only requests carrying a token
// it accepts pass, with a shared Token only those carrying it, with
// neither every request.
type Guard struct {
	Verifier *Verifier
	Token    string
	Log      *slog.Logger
}

// Handler passes the requests the guard lets in to next, with their
// identity (Identity) in the request's context, and answers the others
// 401 saying what is wrong.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, sent := bearer(r)
		switch {
		case g.Verifier != nil:
			sub, err := g.Verifier.Verify(tok)
			if err != nil {
				ae := &Error{Code: Malformed}
				errors.As(err, &ae)
				refusal := ae.Refusal()
				refusal.Message = err.Error()
				g.Log.Info("token refused", "code", refusal.Code, "path", r.URL.Path, "remote", r.RemoteAddr)
				w.Header().Set("WWW-Authenticate", `Bearer realm="trickle", error="invalid_token"`)
				apierr.Write(w, refusal)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), identityKey{}, "sub:"+sub))
		case g.Token != "":
			if !sent || subtle.ConstantTimeCompare([]byte(tok), []byte(g.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="trickle"`)
				apierr.Write(w, wire.Error{Type: wire.TypeUnauthorized, Message: "relay: missing or wrong bearer token"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bearer is the request's token: the Authorization header's, or on the
// WebSocket (whose handshake a browser cannot give headers) the
// access_token query parameter.
func bearer(r *http.Request) (string, bool) {
	// The scheme is case-insensitive (RFC 9110 11.1): "bearer" is Bearer.
	if scheme, got, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(got), true
	}
	if r.URL.Path == "/v1/ws" && r.URL.Query().Has("access_token") {
		return r.URL.Query().Get("access_token"), true
	}
	return "", false
}

// identityKey is the request context's key of the caller's identity.
type identityKey struct{}

// Identity is who a request counts as: "sub:" and the token's subject
// when a Verifier let it in, else "addr:" and the client's IP address.
func Identity(r *http.Request) string {
	if id, ok := r.Context().Value(identityKey{}).(string); ok {
		return id
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + addressIdentity(host)
}

// addressIdentity is the part of a client's address its limits count
// under: an IPv4 address whole, an IPv6 address by its /64 (one host gets
// a whole /64 and could otherwise take a fresh budget per address), an
// IPv4-mapped IPv6 address as the IPv4 it is.
func addressIdentity(host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return host
	}
	return p.String()
}

// AddressKey is what a client's address (host, without the port) counts
// under: Identity's address part (an IPv6 address by its /64).
func AddressKey(host string) string { return addressIdentity(host) }
