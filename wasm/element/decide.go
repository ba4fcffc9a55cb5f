package element

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/internal/stdlite"
)

// MaxErrorBody is how much of a failed response's body the widget keeps
// to explain the failure.
const MaxErrorBody = 2048

// maxErrorRunes is how much of it the message shows.
const maxErrorRunes = 300

// HTTPError explains a response with a non-2xx status from the start of
// its body (the relay and most APIs put a sentence there). The body is cut
// at a character, never inside one, and bytes that are not UTF-8 become
// U+FFFD: the message goes into JSON, the DOM and a screen reader.
//
// A JSON body in one of the shapes the relay and the model APIs use for
// errors ({"error":{"message":…}} from the relay, OpenAI, Anthropic and
// Gemini, {"error":"…"} from Ollama, {"message":"…"}, or an array holding
// one of those) is explained by its message alone, not by its JSON. The
// error is a *StatusError; the page shows its Reason, never the body.
func HTTPError(status int, body []byte) error {
	msg := stdlite.TrimSpace(toValidUTF8(string(body)))
	if m := errorMessage(msg); m != "" {
		msg = m
	}
	if utf8.RuneCountInString(msg) > maxErrorRunes {
		n := 0
		for i := range msg {
			if n == maxErrorRunes {
				msg = stdlite.TrimSpace(msg[:i]) + "…"
				break
			}
			n++
		}
	}
	return &StatusError{Status: status, Message: msg}
}

// toValidUTF8 is strings.ToValidUTF8(s, "\uFFFD"): each run of bytes that
// are not UTF-8 becomes one U+FFFD. Written out because nothing else in
// the widget links strings.ToValidUTF8, which costs the .wasm more
// (docs/notes/widget-size.md); FuzzToValidUTF8 holds it to the original.
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+2)
	inRun := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			if !inRun {
				b = append(b, "\uFFFD"...)
				inRun = true
			}
			i++
			continue
		}
		inRun = false
		b = append(b, s[i:i+n]...)
		i += n
	}
	return string(b)
}

// errorMessage is the message of a JSON error body, or "" when body is
// not JSON or has no message where an error's message is found.
func errorMessage(body string) string {
	var msg string
	var value func(r *jsonx.Reader, depth int)
	value = func(r *jsonx.Reader, depth int) {
		switch r.Kind() {
		case jsonx.Array:
			r.Array(func(i int) {
				if i == 0 && depth == 0 {
					value(r, depth+1)
				} else {
					r.Skip()
				}
			})
		case jsonx.Object:
			r.Object(func(key string) {
				switch {
				case key == "error" && r.Kind() == jsonx.String:
					r.Str(&msg)
				case key == "error" && r.Kind() == jsonx.Object && depth < 2:
					value(r, 2)
				case key == "message" && r.Kind() == jsonx.String && msg == "":
					r.Str(&msg)
				default:
					r.Skip()
				}
			})
		default:
			r.Skip()
		}
	}
	if jsonx.Decode(body, func(r *jsonx.Reader) { value(r, 0) }) != nil {
		return ""
	}
	return stdlite.TrimSpace(msg)
}

// WSClose classifies how a WebSocket ended: one that never opened was
// refused (401, 403, no such endpoint: browsers give no status, only the
// close code 1006); one that closed with another code than 1000 (normal)
// was cut. Both are failures, err says which; clean is true only for a
// normal close of an opened socket. Both errors wrap ErrConnection.
func WSClose(url string, opened bool, code int, reason string) (clean bool, err error) {
	switch {
	case !opened:
		return false, errtext.Wrap(ErrConnection.Error()+": could not open the WebSocket "+url+" (closed with code "+strconv.Itoa(code)+")", ErrConnection)
	case code != 1000:
		return false, errtext.Wrap(ErrConnection.Error()+": the WebSocket closed with code "+strconv.Itoa(code)+" "+reason, ErrConnection)
	}
	return true, nil
}

// ConnEnd is what the resume policy knows of a connection that ended
// before its answer did.
type ConnEnd struct {
	// Opened: the WebSocket opened (a fetch always counts: one that failed
	// before its response may have been cut by the network); a WebSocket
	// refused at the handshake is not resumed.
	Opened bool
	// Clean: it ended normally (the body's end, close code 1000), not with
	// an error.
	Clean bool
	// Resumed: it was itself a resume.
	Resumed bool
	// Events: it brought at least one new event id.
	Events bool
}

// Resumer decides whether and when a dropped answer reconnects: only a
// relay stream (known id) is resumed; a resumed connection that ended
// cleanly with nothing new means the relay has no more; errors are retried
// with Backoff (an errored body may have brought events the browser then
// discarded), and a connection that brought events resets the count.
type Resumer struct {
	Backoff Backoff
	attempt int
}

// Reset forgets the attempts (a new answer).
func (r *Resumer) Reset() { r.attempt = 0 }

// Next reports whether to resume after c ended, and after how long; retry
// is the server's retry: value (0 when none). Without a last event id (all
// of the first connection lost) the relay replays the stream from its
// start, so an empty lastEventID is no reason not to resume.
func (r *Resumer) Next(streamID string, c ConnEnd, retry time.Duration) (time.Duration, bool) {
	if streamID == "" || !c.Opened || (c.Resumed && !c.Events && c.Clean) {
		return 0, false
	}
	if c.Events {
		r.attempt = 0
	}
	b := r.Backoff
	if b.Attempts == 0 {
		b = DefaultBackoff
	}
	d, ok := b.Delay(r.attempt, retry)
	if !ok {
		return 0, false
	}
	r.attempt++
	return d, true
}
