package widget

import (
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/stream"
)

// Strings are the words the Go side shows and speaks: the statuses, the
// stall notice, the notices, the tool calls and the metrics' names. The
// page replaces any of them (TrickleAnswer.strings, el.strings: the page
// sends them with every ask); English is built in. The words the page
// shows itself (Copy, Thinking, Retry, …) are wasm/web/strings.js's; it
// holds these too, under the same keys, and cmd/trickle's docs tests check
// the two agree.
type Strings struct {
	// The statuses, shown in the status line and spoken in the status
	// region.
	Responding, Complete, Stopped, Incomplete, Failed string
	// Stalled is the stall notice, shown and said once.
	Stalled string
	// StoppedNotice is the notice of a stopped answer.
	StoppedNotice string
	// Calling is a tool call while it streams, {name} its name ("…"
	// follows); Called is one whose arguments are complete; ATool names a
	// call that has none yet; ToolFailed is what a tool the backend ran
	// reported as its error, {error}.
	Calling, Called, ATool, ToolFailed string
	// Reasons are the sentences of the Reasons, by Reason; {status} is
	// the HTTP status code.
	Reasons [reasonCount]string
	// Metrics are the names of the rows show-metrics lists, in MetricRows'
	// order.
	Metrics [len(metricKeys)]string
}

// English is the built-in set.
var English = Strings{
	Responding:    a11y.StatusResponding,
	Complete:      a11y.StatusComplete,
	Stopped:       a11y.StatusStopped,
	Incomplete:    a11y.StatusIncomplete,
	Failed:        a11y.StatusFailed,
	Stalled:       "Waiting for the model…",
	StoppedNotice: "Stopped.",
	Calling:       "Calling {name}",
	Called:        "Called {name}",
	ATool:         "a tool",
	ToolFailed:    "Failed: {error}",
	Reasons: [reasonCount]string{
		ReasonRefused:     "The server refused the request ({status}).",
		ReasonNotFound:    "The server has no answer at this address ({status}).",
		ReasonRateLimited: "Too many requests ({status}): wait a moment, then retry.",
		ReasonServerError: "The server failed to answer ({status}).",
		ReasonRejected:    "The server did not accept the request ({status}).",
		ReasonNetwork:     "Could not reach the server.",
		ReasonDropped:     "The connection dropped and could not be resumed.",
		ReasonCutOff:      "The answer ended before the model finished.",
		ReasonEmpty:       "The server sent an empty answer.",
		ReasonUnreadable:  "The server's answer is in a form this page cannot read.",
		ReasonUpstream:    "The model's service reported an error.",
		ReasonRelay:       "The relay serving this answer failed.",
		ReasonTooLarge:    "Part of the answer was too large to read.",
		ReasonExpired:     "The answer expired on the server and cannot be resumed.",
		ReasonWithheld:    "This answer was withheld.",
		ReasonIdle:        "The server went silent, so the answer stops here.",
		ReasonUnknown:     "Something went wrong.",
	},
	Metrics: [len(metricKeys)]string{
		"Time to first byte", "Time to first token", "Time to first answer token", "Gap p50 / p95",
		"Tokens per second", "Bytes", "Buffering", "Longest frame",
	},
}

// metricKeys are the keys of the metrics rows' names, in MetricRows' order.
var metricKeys = [...]string{
	"metricTTFB", "metricTTFT", "metricTTFAT", "metricGaps",
	"metricTokensPerSecond", "metricBytes", "metricBuffering", "metricLongestFrame",
}

// fields lists every string with its key, in a fixed order.
func (s *Strings) fields() []keyed {
	f := []keyed{
		{"responding", &s.Responding}, {"complete", &s.Complete}, {"stopped", &s.Stopped},
		{"incomplete", &s.Incomplete}, {"failed", &s.Failed}, {"stalled", &s.Stalled},
		{"stoppedNotice", &s.StoppedNotice}, {"calling", &s.Calling}, {"called", &s.Called},
		{"aTool", &s.ATool}, {"toolFailed", &s.ToolFailed},
	}
	for r := ReasonNone + 1; r < reasonCount; r++ {
		f = append(f, keyed{r.String(), &s.Reasons[r]})
	}
	for i, k := range metricKeys {
		f = append(f, keyed{k, &s.Metrics[i]})
	}
	return f
}

type keyed struct {
	key string
	p   *string
}

// StringKeys are the keys of Strings, in a fixed order.
func StringKeys() []string {
	var s Strings
	var keys []string
	for _, f := range s.fields() {
		keys = append(keys, f.key)
	}
	return keys
}

// Get returns the string of key, and whether Strings has one.
func (s *Strings) Get(key string) (string, bool) {
	for _, f := range s.fields() {
		if f.key == key {
			return *f.p, true
		}
	}
	return "", false
}

// With returns the strings with the page's replacements: a key Strings
// does not have (one of the page's own, or a mistake the page already
// reported) is ignored, and so is an empty value (the built-in word
// stays: an empty status would be silence).
func (s Strings) With(page map[string]string) Strings {
	if len(page) == 0 {
		return s
	}
	for _, f := range s.fields() {
		if v, ok := page[f.key]; ok && strings.TrimSpace(v) != "" {
			*f.p = v
		}
	}
	return s
}

// Status is the status word-sentence of st ("" for an answer not yet
// going).
func (s *Strings) Status(st stream.Status) string {
	switch st {
	case stream.Streaming, stream.Waiting:
		return s.Responding
	case stream.Complete:
		return s.Complete
	case stream.Stopped:
		return s.Stopped
	case stream.Incomplete:
		return s.Incomplete
	}
	return s.Failed
}

// Reason is the sentence of r, with {status} replaced by the HTTP status
// ("" for ReasonNone).
func (s *Strings) Reason(r Reason, status int) string {
	if r <= ReasonNone || r >= reasonCount {
		if r == ReasonNone {
			return ""
		}
		r = ReasonUnknown
	}
	return strings.ReplaceAll(s.Reasons[r], "{status}", strconv.Itoa(status))
}
