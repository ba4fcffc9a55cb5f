package widget

import (
	"net/url"
	"strings"
	"time"
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

// RelayURLs are the relay endpoints that control one stream, on the origin
// of the endpoint that started it.
type RelayURLs struct {
	Resume string // GET with Last-Event-ID
	Cancel string // DELETE
}

// StreamURLs derives the control endpoints for stream id from the endpoint
// URL (absolute) that started it. The fault-injection query of the endpoint
// is not carried over: a resume must not inject the fault again.
func StreamURLs(endpoint, id string) (RelayURLs, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return RelayURLs{}, err
	}
	base := u.Scheme + "://" + u.Host + "/v1/streams/" + url.PathEscape(id)
	return RelayURLs{Resume: base, Cancel: base}, nil
}

// WebSocketURLs are the relay's /v1/ws on the origin of endpoint
// (absolute), or wsEndpoint resolved against endpoint when set. first
// carries endpoint's query (dialect and simulation parameters, faults
// included); resume carries none of it, so a resume does not inject the
// fault again. Browsers cannot set headers on a WebSocket handshake, so a
// bearer token from the Authorization header goes in as ?access_token= (the
// relay accepts it on /v1/ws only).
func WebSocketURLs(endpoint, wsEndpoint, authorization string) (first, resume string, err error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", "", err
	}
	if wsEndpoint != "" {
		ws, err := u.Parse(wsEndpoint)
		if err != nil {
			return "", "", err
		}
		u = ws
	} else {
		u = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/v1/ws", RawQuery: u.RawQuery}
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	r := *u
	r.RawQuery = ""
	if token, ok := strings.CutPrefix(strings.TrimSpace(authorization), "Bearer "); ok && token != "" {
		q := u.Query()
		q.Set("access_token", token)
		u.RawQuery = q.Encode()
		r.RawQuery = url.Values{"access_token": {token}}.Encode()
	}
	return u.String(), r.String(), nil
}
