package element

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/internal/weburl"
)

// StreamID extracts the relay's stream id from an event id "<stream>:<seq>"
// (the relay's format); it returns "" for ids of another shape.
func StreamID(eventID string) string {
	i := strings.LastIndexByte(eventID, ':')
	if i <= 0 || i == len(eventID)-1 {
		return ""
	}
	for _, c := range eventID[i+1:] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return eventID[:i]
}

// Backoff paces reconnection attempts: the server's retry: value (or Base)
// doubled at each attempt, capped at Max, for at most Attempts attempts.
type Backoff struct {
	Base     time.Duration
	Max      time.Duration
	Attempts int
}

// DefaultBackoff: quick first retry (the relay keeps the stream for a grace
// period, usually tens of seconds), five attempts within about ten seconds.
var DefaultBackoff = Backoff{Base: 250 * time.Millisecond, Max: 4 * time.Second, Attempts: 5}

// Delay is the wait before attempt n (0-based); retry is the last retry:
// value the server sent (0 when none). ok is false when no attempt is left.
func (b Backoff) Delay(n int, retry time.Duration) (d time.Duration, ok bool) {
	if n >= b.Attempts {
		return 0, false
	}
	d = b.Base
	if retry > 0 {
		d = retry
	}
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, max(b.Max, retry)), true
}

// RelayURLs are the relay endpoints that control one stream.
type RelayURLs struct {
	Resume string // GET with Last-Event-ID
	Cancel string // DELETE
}

// StreamURLs finds the control endpoints for stream id of the endpoint URL
// (absolute) that started it. ref is where the relay said the stream lives
// (its X-Trickle-Stream-URL, see ResolveStreamRef): a reference relative to
// the endpoint ("../streams/ID"), or already resolved against the request
// that carried it. It holds wherever the relay's API is mounted (under
// http.StripPrefix, behind a proxy's location /ai/), and is followed only
// on the endpoint's own origin. Without it (an older relay, a header a
// page on another origin cannot read) the address is derived from the
// endpoint's path: the API's prefix is what comes before its /v1/ (see
// apiPrefix). The endpoint's query, where the fault injection is, is not
// carried over: a resume must not inject the fault again.
func StreamURLs(endpoint, id, ref string) (RelayURLs, error) {
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return RelayURLs{}, err
	}
	if r, ok := weburl.Parse(ref); ok && r.Path != "" {
		s := u.Resolve(r)
		if s.Scheme == u.Scheme && s.Host == u.Host {
			s.RawQuery, s.Fragment = "", ""
			return RelayURLs{Resume: s.String(), Cancel: s.String()}, nil
		}
	}
	base := u.Scheme + "://" + u.Host + apiPrefix(pathOf(u)) + "/v1/streams/" + weburl.Escape(id, weburl.SegmentKeeps)
	return RelayURLs{Resume: base, Cancel: base}, nil
}

// parseEndpoint reads the URL a request goes to (the page resolved it:
// absolute).
func parseEndpoint(s string) (*weburl.URL, error) {
	u, ok := weburl.Parse(s)
	if !ok || !u.Absolute() {
		return nil, notAURL("endpoint", s)
	}
	return u, nil
}

// notAURL says that s, the what attribute, is not a URL the widget reads.
func notAURL(what, s string) error {
	return errors.New("trickle: the " + what + " " + strconv.Quote(s) +
		" is not a URL the widget reads: it reads them as a browser writes them (scheme://host[:port]/path?query, escaped, without user or password)")
}

// pathOf is u's path with its escapes decoded (net/url's URL.Path).
func pathOf(u *weburl.URL) string {
	p, _ := weburl.Unescape(u.Path, false)
	return p
}

// ResolveStreamRef resolves ref, an X-Trickle-Stream-URL, against from, the
// URL of the request whose response carried it: the relay writes it
// relative to that request's path ("../streams/ID" on the endpoint's POST,
// "ID" on a resume's GET of /v1/streams/ID), so a ref kept past its
// response must be resolved against its own request, not the endpoint
// (the stream's second resume went to /v1/chat/ID). It returns "" for
// none, or one that does not parse; StreamURLs checks the origin.
func ResolveStreamRef(from, ref string) string {
	if ref == "" {
		return ""
	}
	b, ok := weburl.Parse(from)
	if !ok || !b.Absolute() {
		return ""
	}
	r, ok := weburl.Parse(ref)
	if !ok || r.Path == "" {
		return ""
	}
	s := b.Resolve(r)
	s.RawQuery, s.Fragment = "", ""
	return s.String()
}

// apiPrefix is the path the relay's API is mounted under, read from an
// endpoint path: what comes before its last "/v1/" ("/ai" for
// /ai/v1/chat/completions), "" for a path with none (the site's root, as
// a backend of the page's own that is not the relay).
func apiPrefix(path string) string {
	if i := stdlite.LastIndex(path, "/v1/"); i >= 0 {
		return path[:i]
	}
	return ""
}

// WebSocketURLs are the relay's /v1/ws beside endpoint (absolute: on its
// origin, under its API prefix, see apiPrefix), or wsEndpoint resolved
// against endpoint when set. first
// carries endpoint's query (dialect and simulation parameters, faults
// included); resume carries none of it, so a resume does not inject the
// fault again. Browsers cannot set headers on a WebSocket handshake, so a
// bearer token from the Authorization header goes in as ?access_token= (the
// relay accepts it on /v1/ws only).
func WebSocketURLs(endpoint, wsEndpoint, authorization string) (first, resume string, err error) {
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return "", "", err
	}
	if wsEndpoint != "" {
		ws, ok := weburl.Parse(wsEndpoint)
		if !ok {
			return "", "", notAURL("ws-endpoint", wsEndpoint)
		}
		u = u.Resolve(ws)
	} else {
		u = &weburl.URL{Scheme: u.Scheme, Host: u.Host, Path: weburl.Escape(apiPrefix(pathOf(u))+"/v1/ws", weburl.PathKeeps), RawQuery: u.RawQuery}
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	r := *u
	r.RawQuery = ""
	if token, ok := strings.CutPrefix(stdlite.TrimSpace(authorization), "Bearer "); ok && token != "" {
		u.RawQuery = withQueryValue(u.RawQuery, "access_token", token)
		r.RawQuery = "access_token=" + weburl.Escape(token, weburl.QueryKeeps)
	}
	return u.String(), r.String(), nil
}

// maxQueryParams is net/url's limit on a query's parameters: a query with
// more is read as having none.
const maxQueryParams = 10000

// withQueryValue is the query q with key set to value, as url.Values
// writes it after u.Query() and Set: the pairs net/url reads (not empty,
// no ';', valid escapes) decoded and escaped again, sorted by key (a key's
// values in their order), key's own values replaced by value. It spares
// the widget url.Values's map and generic string sort.
func withQueryValue(q, key, value string) string {
	type pair struct {
		_    incomparable
		k, v string
		n    int
	}
	var pairs []pair
	if strings.Count(q, "&")+1 <= maxQueryParams {
		for q != "" {
			var kv string
			kv, q, _ = strings.Cut(q, "&")
			if kv == "" || strings.Contains(kv, ";") {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			k, ok := weburl.Unescape(k, true)
			if !ok {
				continue
			}
			if v, ok = weburl.Unescape(v, true); !ok || k == key {
				continue
			}
			pairs = append(pairs, pair{k: k, v: v, n: len(pairs)})
		}
	}
	pairs = append(pairs, pair{k: key, v: value, n: len(pairs)})
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].n < pairs[j].n
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(weburl.Escape(p.k, weburl.QueryKeeps))
		b.WriteByte('=')
		b.WriteString(weburl.Escape(p.v, weburl.QueryKeeps))
	}
	return b.String()
}
