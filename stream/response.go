package stream

import (
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/internal/stdlite"
)

// Response is what a Pipeline takes from a response's headers.
type Response struct {
	// ContentType is the Content-Type header (see WithContentType).
	ContentType string
	// ContentLength is the body's length in bytes from Content-Length, or
	// -1 when it is unknown. A text body that ends before it is
	// Incomplete.
	ContentLength int64
	// UIMessageStream is the UIMessageStreamHeader's value: set ("v1"),
	// the body is an AI SDK UI message stream (DialectAISDK).
	UIMessageStream string
}

// ResponseOf reads a Response from the headers, got by name (net/http's
// Header.Get, or the browser's Headers.get). A Content-Length is used
// only for a body that is not content-encoded: the bytes a client reads
// from a compressed body are not the ones the header counts.
func ResponseOf(header func(name string) string) Response {
	r := Response{ContentType: header("Content-Type"), ContentLength: -1, UIMessageStream: header(UIMessageStreamHeader)}
	if enc := stdlite.TrimSpace(header("Content-Encoding")); enc == "" || strings.EqualFold(enc, "identity") {
		if n, err := strconv.ParseInt(stdlite.TrimSpace(header("Content-Length")), 10, 64); err == nil && n >= 0 {
			r.ContentLength = n
		}
	}
	return r
}

// WithResponse gives the response's headers: its content type (as
// WithContentType), its length, and whether it says it is a UI message
// stream.
func WithResponse(r Response) Option {
	return func(p *Pipeline) {
		p.contentType, p.length, p.uiStream = r.ContentType, r.ContentLength, r.UIMessageStream != ""
	}
}

// Respond gives the headers of the response whose body comes next (the
// first connection's, or a resumed one's, after Reconnect). Its length
// counts for that body; its content type chooses the framing only while
// nothing has been read (the framing of a resumed stream stays).
func (p *Pipeline) Respond(r Response) {
	p.length = r.ContentLength
	if p.seq == 0 && p.received == 0 && p.framing == FramingUnknown && (p.dec == nil || p.dec.Dialect() != DialectText) {
		p.contentType, p.uiStream = r.ContentType, r.UIMessageStream != ""
		p.frame()
	}
}
