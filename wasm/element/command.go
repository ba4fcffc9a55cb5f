package element

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Command is one message from the page (trickle.js) to the Go side, which
// runs in a Web Worker or, as the fallback, on the page's main thread: the
// two talk through one message port either way. The page sends each
// command as a JSON object (a stream() call's RequestInit travels beside
// it, as a structured clone, since it may hold a Blob).
//
// The page resolves everything that needs the document before it sends:
// URLs against document.baseURI, the element's attributes and headers
// property, the page's origin. The Go side then never asks the page.
type Command struct {
	Kind protocol.Kind
	// ID names the element (the page numbers them).
	ID int
	// N numbers an ask(), stream() or retry() call: the final update of
	// its answer carries it so the page settles that call's promise. 0
	// means no promise (the element's own retry button).
	N int
	// At is when the page made the call: milliseconds since the epoch,
	// performance.timeOrigin + performance.now() on the page, which the
	// Go side converts to its own clock (the two threads share it).
	At float64

	// URL is the endpoint (ask) or the URL to fetch (stream), absolute.
	URL string
	// WSEndpoint is the ws-endpoint attribute resolved, or "".
	WSEndpoint string
	// Transport, Dialect, Announce, Model, ImageOrigins: the element's
	// attributes of those names ("" when absent).
	Transport, Dialect, Announce, Model, ImageOrigins string
	// Idle is the idle-timeout attribute ("" when absent: IdleTimeout).
	Idle string
	// Origin is the page's origin (render.Policy's SameOrigin).
	Origin string
	// ShowMetrics: the element has the show-metrics attribute.
	ShowMetrics bool
	// Highlight: the element has the highlight attribute.
	Highlight bool
	// Headers are the element's headers property, in its order.
	Headers [][2]string
	// Strings are the page's replacements of the widget's words
	// (TrickleAnswer.strings, then the element's), by key; nil for none.
	Strings map[string]string

	// The argument of ask(): a prompt, or a body object's JSON text, or
	// neither (then ArgType is JavaScript's typeof of what was given).
	Prompt    string
	HasPrompt bool
	Body      string
	ArgType   string
}

// ParseCommand reads one command the page sent.
func ParseCommand(s string) (Command, error) {
	var c Command
	err := jsonx.Decode(s, func(r *jsonx.Reader) {
		r.Object(func(key string) {
			switch key {
			case "t":
				var kind string
				r.Str(&kind)
				c.Kind = protocol.Kind(kind)
			case "id":
				r.Int(&c.ID)
			case "n":
				r.Int(&c.N)
			case "at":
				r.Float(&c.At)
			case protocol.KeyURL:
				r.Str(&c.URL)
			case protocol.KeyWS:
				r.Str(&c.WSEndpoint)
			case protocol.KeyTransport:
				r.Str(&c.Transport)
			case protocol.KeyDialect:
				r.Str(&c.Dialect)
			case protocol.KeyAnnounce:
				r.Str(&c.Announce)
			case protocol.KeyModel:
				r.Str(&c.Model)
			case protocol.KeyImages:
				r.Str(&c.ImageOrigins)
			case protocol.KeyIdleTimeout:
				r.Str(&c.Idle)
			case "origin":
				r.Str(&c.Origin)
			case protocol.KeyShowMetrics:
				r.Bool(&c.ShowMetrics)
			case protocol.KeyHighlight:
				r.Bool(&c.Highlight)
			case "headers":
				r.Array(func(int) {
					var kv [2]string
					r.Array(func(i int) {
						if i < 2 {
							r.Str(&kv[i])
						} else {
							r.Skip()
						}
					})
					c.Headers = append(c.Headers, kv)
				})
			case "strings":
				r.Object(func(key string) {
					if r.Kind() != jsonx.String {
						r.Skip()
						return
					}
					if c.Strings == nil {
						c.Strings = make(map[string]string)
					}
					var v string
					r.Str(&v)
					c.Strings[key] = v
				})
			case "prompt":
				c.HasPrompt = r.Kind() == jsonx.String
				r.Str(&c.Prompt)
			case "body":
				c.Body = r.Raw()
			case "type":
				r.Str(&c.ArgType)
			default:
				r.Skip()
			}
		})
	})
	if err != nil {
		return Command{}, errtext.Wrap("trickle: a malformed command from trickle.js (loader and .wasm from different builds?): "+errtext.Text(err), err)
	}
	return c, nil
}

// DefaultIdleTimeout is how long an answer waits without a byte before it
// ends as incomplete, when the idle-timeout attribute does not say.
const DefaultIdleTimeout = 60 * time.Second

// IdleTimeout reads the idle-timeout attribute: seconds (a decimal
// number) without a byte before the answer ends as incomplete; 0 turns
// the bound off; absent is DefaultIdleTimeout. Anything else is an
// AttributeError naming the attribute.
func (c Command) IdleTimeout() (time.Duration, error) {
	v := stdlite.TrimSpace(c.Idle)
	if v == "" {
		return DefaultIdleTimeout, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e9 {
		return 0, &AttributeError{Attribute: "idle-timeout", Value: c.Idle, Reason: "must be a number of seconds (0 turns the bound off)", Err: ErrBadIdleTimeout}
	}
	return time.Duration(f * float64(time.Second)), nil
}

// ErrBadIdleTimeout is wrapped by the AttributeError of an idle-timeout
// that is not a number of seconds.
var ErrBadIdleTimeout = errors.New("trickle: idle-timeout is not a number of seconds")

// Request is what an answer sends: a POST of Body to URL over fetch, or
// the same body as the first message of a WebSocket.
type Request struct {
	// URL is what to fetch; Endpoint is the endpoint the relay's control
	// URLs (resume, cancel) derive from. Both absolute.
	URL, Endpoint string
	// Body is the JSON request (empty for stream(): the page's init has
	// its own).
	Body string
	// Headers go with the request and with its resumes.
	Headers [][2]string
	// WebSocket: open WSURL and send Body; a resume opens WSResume.
	WebSocket       bool
	WSURL, WSResume string
	// Stream: the page's own fetch(url, init) (stream()), not a chat
	// request built here.
	Stream bool
}

// Request builds what ask() or stream() sends from the command. An ask
// whose argument is neither a prompt nor an object fails with
// ErrBadRequestBody.
func (c Command) Request() (Request, error) {
	if c.Kind == protocol.Stream {
		return Request{URL: c.URL, Endpoint: c.URL, Headers: c.Headers, Stream: true}, nil
	}
	var body string
	switch {
	case c.HasPrompt:
		body = PromptBody(c.Prompt, c.Model)
	case c.Body != "":
		var err error
		if body, err = StreamingBody(c.Body); err != nil {
			return Request{}, err
		}
	default:
		return Request{}, errtext.Wrap(ErrBadRequestBody.Error()+" (got "+c.ArgType+")", ErrBadRequestBody)
	}
	r := Request{URL: c.URL, Endpoint: c.URL, Body: body, Headers: c.Headers}
	if c.Transport == "websocket" {
		r.WebSocket = true
		auth := ""
		for _, h := range c.Headers {
			if strings.EqualFold(h[0], "Authorization") {
				auth = h[1]
			}
		}
		var err error
		r.WSURL, r.WSResume, err = WebSocketURLs(c.URL, c.WSEndpoint, auth)
		return r, err
	}
	// The body is JSON and the answer SSE whatever the page's headers say.
	r.Headers = make([][2]string, 0, len(c.Headers)+2)
	for _, kv := range c.Headers {
		if !strings.EqualFold(kv[0], "Content-Type") && !strings.EqualFold(kv[0], "Accept") {
			r.Headers = append(r.Headers, kv)
		}
	}
	r.Headers = append(r.Headers, [2]string{"Content-Type", "application/json"}, [2]string{"Accept", "text/event-stream"})
	if DeclaresResume(c.URL, c.Origin) && !hasHeader(r.Headers, ResumeHeader) {
		// The widget resumes a cut stream: a relay keeps the generation
		// through a disconnect for it (and cancels at once for a client
		// that has not said so).
		r.Headers = append(r.Headers, [2]string{ResumeHeader, "on"})
	}
	return r, nil
}

func hasHeader(h [][2]string, name string) bool {
	for _, kv := range h {
		if strings.EqualFold(kv[0], name) {
			return true
		}
	}
	return false
}

// ResumeHeaders are the headers of a fetch that resumes a stream: the
// request's own (authorization), asking for SSE after lastEventID.
func (r Request) ResumeHeaders(lastEventID string) [][2]string {
	h := make([][2]string, 0, len(r.Headers)+2)
	for _, kv := range r.Headers {
		if !strings.EqualFold(kv[0], "Content-Type") && !strings.EqualFold(kv[0], "Accept") {
			h = append(h, kv)
		}
	}
	h = append(h, [2]string{"Accept", "text/event-stream"})
	if lastEventID != "" {
		h = append(h, [2]string{"Last-Event-ID", lastEventID})
	}
	return h
}

// ResumeMessage is the WebSocket message that resumes stream after
// lastEventID.
func ResumeMessage(stream, lastEventID string) string {
	b := append([]byte(nil), `{"type":"resume","stream":`...)
	b = jsonx.AppendString(b, stream)
	b = append(b, `,"last_event_id":`...)
	b = jsonx.AppendString(b, lastEventID)
	return string(append(b, '}'))
}

// FootnotePrefix is what goes before the footnote ids of the element
// numbered id on its page ("trickle-3-fn:1"): every element of a page has
// its own number (trickle.js counts them, whichever build serves them),
// so two answers' notes never share an id.
func FootnotePrefix(id int) string { return "trickle-" + strconv.Itoa(id) + "-" }

// Config is the Session configuration the command's attributes ask for.
// A dialect attribute that names no dialect is kept as it is: NewSession
// then refuses it, and the element fails the call with an AttributeError
// that names the attribute and lists the valid dialects.
func (c Command) Config() Config {
	d, err := stream.ParseDialect(c.Dialect)
	if err != nil {
		d = stream.Dialect(c.Dialect)
	}
	cfg := Config{Dialect: d}
	// An announce attribute of no known mode is the default, as HTML's
	// enumerated attributes do with an invalid value.
	cfg.Announce, _ = a11y.ParseMode(strings.ToLower(stdlite.TrimSpace(c.Announce)))
	if c.Origin != "null" {
		// An opaque origin (a file: page) has no URLs of its own.
		cfg.Policy.SameOrigin = c.Origin
	}
	cfg.Highlight = c.Highlight
	cfg.FootnotePrefix = FootnotePrefix(c.ID)
	if len(c.Strings) > 0 {
		w := English.With(c.Strings)
		cfg.Words = &w
	}
	if o := stdlite.TrimSpace(c.ImageOrigins); o != "" {
		cfg.Policy.AllowedImageOrigins = stdlite.Fields(o)
	}
	return cfg
}
