package relay

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/cors"
	"github.com/trickle-dev/trickle/relay/internal/sink"
	"github.com/trickle-dev/trickle/wire"
)

// OriginError is why a browser page's request to the API was refused: its
// origin is neither the relay's own nor one of WithAllowedOrigins.
type OriginError struct {
	Origin string // the page's origin, as its Origin header said it
}

func (e *OriginError) Error() string {
	return "relay: the page's origin " + e.Origin + " may not use this relay's API"
}

// defaultOriginRefusal is the refusal a page gets unless WithOriginRefusal
// phrases it.
func defaultOriginRefusal(e *OriginError) string {
	return e.Error() + ": add it to the relay's allowed origins"
}

// crossOrigin handles browsers' cross-origin rules.
//
// The widget's files (/trickle/) are public code: any page may load them,
// as from a CDN (Access-Control-Allow-Origin: *, never with credentials).
//
// The API (/v1/) answers only its own origin and the WithAllowedOrigins
// list.
// A request from another origin is refused (403) before it can spend the
// model, but with CORS headers for that origin, so the page can read the
// refusal: the element then says which origin to allow instead of failing
// with an unreadable network error. Its preflight passes for the same
// reason (the request that follows is refused all the same), and a
// WebSocket is accepted only to be handed the refusal and closed. Each
// refused origin is logged once, at warn.
func (s *Server) crossOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if strings.HasPrefix(r.URL.Path, "/trickle/") {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			next.ServeHTTP(w, r)
			return
		}
		if origin == "" || !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		if s.cfg.token == "" && s.verifier == nil && !s.hostAllowed(r.Host) {
			msg := "relay: this relay has no auth and answers browsers only under localhost, an IP address or its allowed hosts, not " + r.Host +
				" (a page under another name may be a DNS rebinding attack): start it with --allowed-host " + hostName(r.Host) + ", or with auth"
			if s.refused.First("host " + r.Host) {
				s.log.Warn("host refused", "host", r.Host, "origin", origin, "path", r.URL.Path)
			}
			cors.Answer(w.Header(), origin, false)
			if r.URL.Path == "/v1/ws" && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				s.wsRefuse(w, r, msg)
				return
			}
			apierr.Write(w, wire.Error{Type: wire.TypeOriginNotAllowed, Code: wire.CodeHostNotAllowed, Message: msg})
			return
		}
		allowed := cors.Allowed(r.Host, origin, s.cfg.origins)
		cors.Answer(w.Header(), origin, allowed && (s.cfg.token != "" || s.verifier != nil))
		if r.Method == http.MethodOptions {
			cors.Preflight(w)
			return
		}
		if !allowed {
			msg := s.cfg.originRefusal(&OriginError{Origin: origin})
			if s.refused.First(origin) {
				s.log.Warn("origin refused", "origin", origin, "method", r.Method, "path", r.URL.Path, "refusal", msg)
			}
			if r.URL.Path == "/v1/ws" && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
				s.wsRefuse(w, r, msg)
				return
			}
			apierr.Write(w, wire.Error{Type: wire.TypeOriginNotAllowed, Message: msg})
			return
		}
		cors.Expose(w.Header())
		next.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a browser's request under host (the Host
// header, with its port) may use a relay without auth: an IP address,
// localhost (and its subdomains, which resolve to loopback), or a name of
// WithAllowedHosts.
func (s *Server) hostAllowed(host string) bool {
	name := strings.ToLower(hostName(host))
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	for _, h := range s.cfg.hosts {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// hostName is a Host header without its port and brackets.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

// wsRefuse answers a WebSocket from a refused origin. Browsers show a page
// nothing of a refused handshake, so the socket is accepted, handed one
// terminal trickle.status event that says why, and closed; no request is
// read and nothing is generated.
func (s *Server) wsRefuse(w http.ResponseWriter, r *http.Request, message string) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // the origin is refused: only the refusal is sent
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return
	}
	s.wsFail(sink.LibraryWS(c, time.Second), wire.StatusFailed, message, websocket.StatusPolicyViolation)
	c.CloseNow()
}
