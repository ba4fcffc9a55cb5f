package element

import (
	"strings"
	"sync"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/weburl"
)

// ResumeHeader is the request header with which the widget tells a relay
// that it resumes a cut stream ("on"): the relay then keeps the
// generation running through a disconnect for its grace period. A client
// that has not said so is cancelled at once when it leaves (relay/
// internal/chat.ResumeHeader).
const ResumeHeader = "X-Trickle-Resume"

// relayOrigins are the origins that answered with X-Trickle-Stream-URL:
// relays, which allow the resume header in their CORS preflight. One set
// per Go program (every element of the page shares it).
var relayOrigins struct {
	sync.Mutex
	seen map[string]bool
}

// SawRelay records that endpoint's origin answered as a relay does.
func SawRelay(endpoint string) {
	o := originOf(endpoint)
	if o == "" {
		return
	}
	relayOrigins.Lock()
	defer relayOrigins.Unlock()
	if relayOrigins.seen == nil {
		relayOrigins.seen = make(map[string]bool)
	}
	relayOrigins.seen[o] = true
}

// DeclaresResume reports whether a request to endpoint from a page of
// origin pageOrigin carries ResumeHeader: when the endpoint is the page's
// own origin (no preflight) or one already seen answering as a relay
// (SawRelay). A plain backend on another origin is never sent a custom
// header its CORS preflight would refuse.
func DeclaresResume(endpoint, pageOrigin string) bool {
	o := originOf(endpoint)
	if o == "" {
		return false
	}
	if o == strings.ToLower(pageOrigin) {
		return true
	}
	relayOrigins.Lock()
	defer relayOrigins.Unlock()
	return relayOrigins.seen[o]
}

// originOf is scheme://host[:port] of an absolute URL, lower case, "" for
// anything else.
func originOf(s string) string {
	u, ok := weburl.Parse(s)
	if !ok || !u.Absolute() {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// cancelHeaders are the headers of a Stop's DELETE: the request's own
// (authorization and whatever else the page set), without those that
// describe the request's body, its resume or its answer.
func cancelHeaders(h [][2]string) [][2]string {
	out := make([][2]string, 0, len(h)+1)
	for _, kv := range h {
		switch strings.ToLower(kv[0]) {
		case "content-type", "accept", "last-event-id", strings.ToLower(ResumeHeader):
			continue
		}
		out = append(out, kv)
	}
	return append(out, [2]string{"Accept", "application/json"})
}

// corsHint adds to err, a fetch to url that failed before any response,
// what the developer must check when url is on another origin than the
// page's: a browser reports a CORS refusal as a plain network error, so
// the detail says that CORS is the likely cause and which headers the
// backend must send for this request (its preflight's and its own).
func corsHint(err error, url, pageOrigin string, headers [][2]string) error {
	o := originOf(url)
	page := strings.ToLower(pageOrigin)
	if o == "" || page == "" || page == "null" || o == page {
		return err
	}
	var names []string
	for _, kv := range headers {
		switch strings.ToLower(kv[0]) {
		case "accept", "accept-language", "content-language":
			continue // CORS-safelisted
		}
		names = append(names, kv[0])
	}
	allow := ""
	if len(names) > 0 {
		allow = ", Access-Control-Allow-Headers: " + strings.Join(names, ", ")
	}
	return errtext.Wrap(errtext.Text(err)+" (the endpoint's origin "+o+" is not the page's "+pageOrigin+": if the server is up, CORS is the likely cause: it must answer the preflight (OPTIONS) and the request with Access-Control-Allow-Origin: "+pageOrigin+", Access-Control-Allow-Methods: POST"+allow+", and Access-Control-Expose-Headers: X-Trickle-Stream, X-Trickle-Stream-URL for Stop and resume)", err)
}
