// Package cors holds the relay's cross-origin rules: which page origins may
// use the API and the headers a browser needs to read its answers (and its
// refusals).
package cors

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/trickle-dev/trickle/wire"
)

// Allowed says whether a browser page at origin may use the API of the
// relay reached as host: the same origin always may, others only when
// listed ("*" lists every origin).
func Allowed(host, origin string, list []string) bool {
	if origin == "" {
		return true // not a browser, or a same-origin GET
	}
	if u, err := url.Parse(origin); err == nil && strings.EqualFold(u.Host, host) {
		return true
	}
	for _, o := range list {
		if o == "*" || strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return true
		}
	}
	return false
}

// Answer sets the headers that let a page at origin read the API's
// answer, allowed or refused; credentials says whether it may send them
// (only an allowed origin on a relay that checks identity).
func Answer(h http.Header, origin string, credentials bool) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if credentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
}

// Preflight answers a preflight request: the methods and headers the API
// takes, cached for ten minutes.
func Preflight(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, "+wire.HeaderLastEventID+", "+wire.HeaderResume)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}

// Expose lets an allowed page read the relay's own response headers.
func Expose(h http.Header) {
	h.Set("Access-Control-Expose-Headers", wire.HeaderStream+", "+wire.HeaderStreamURL+", "+wire.HeaderRequestID+", "+wire.HeaderRetryAfter)
}
