package element

import (
	"strconv"

	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Strings are the words the Go side shows and speaks: the statuses, the
// stall notice, the notices, the tool calls and the metrics' names. The
// page replaces any of them (TrickleAnswer.strings, el.strings: the page
// sends them with every ask); English is built in. The words the page
// shows itself (Copy, Thinking, Retry, …) are wasm/web/strings.js's. The
// keys and the English of both are wasm/protocol's table (Str…,
// English…), which the page's contract.js is generated from.
type Strings struct {
	_ incomparable
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
	// Sources heads an answer's list of sources; SourcesSaid is said once
	// after the end status, {count} the number of sources.
	Sources, SourcesSaid string
	// Reasons are the sentences of the Reasons, by Reason; {status} is
	// the HTTP status code.
	Reasons [reasonCount]string
	// Metrics are the names of the rows show-metrics lists, in MetricRows'
	// order.
	Metrics [len(metricKeys)]string
}

// English is the built-in set.
var English = Strings{
	Responding:    protocol.EnglishResponding,
	Complete:      protocol.EnglishComplete,
	Stopped:       protocol.EnglishStopped,
	Incomplete:    protocol.EnglishIncomplete,
	Failed:        protocol.EnglishFailed,
	Stalled:       protocol.EnglishStalled,
	StoppedNotice: protocol.EnglishStoppedNotice,
	Calling:       protocol.EnglishCalling,
	Called:        protocol.EnglishCalled,
	ATool:         protocol.EnglishATool,
	ToolFailed:    protocol.EnglishToolFailed,
	Sources:       protocol.EnglishSources,
	SourcesSaid:   protocol.EnglishSourcesSaid,
	Reasons: [reasonCount]string{
		ReasonRefused:     protocol.EnglishRefused,
		ReasonNotFound:    protocol.EnglishNotFound,
		ReasonRateLimited: protocol.EnglishRateLimited,
		ReasonServerError: protocol.EnglishServerError,
		ReasonRejected:    protocol.EnglishRejected,
		ReasonNetwork:     protocol.EnglishNetwork,
		ReasonDropped:     protocol.EnglishDropped,
		ReasonCutOff:      protocol.EnglishCutOff,
		ReasonEmpty:       protocol.EnglishEmpty,
		ReasonUnreadable:  protocol.EnglishUnreadable,
		ReasonUpstream:    protocol.EnglishUpstream,
		ReasonRelay:       protocol.EnglishRelayFailed,
		ReasonTooLarge:    protocol.EnglishTooLarge,
		ReasonExpired:     protocol.EnglishExpired,
		ReasonWithheld:    protocol.EnglishWithheld,
		ReasonIdle:        protocol.EnglishIdle,
		ReasonUnknown:     protocol.EnglishUnknown,
	},
	Metrics: [len(metricKeys)]string{
		protocol.EnglishMetricTTFB, protocol.EnglishMetricTTFT, protocol.EnglishMetricTTFAT, protocol.EnglishMetricGaps,
		protocol.EnglishMetricTokensPerSecond, protocol.EnglishMetricBytes, protocol.EnglishMetricBuffering, protocol.EnglishMetricLongestFrame,
	},
}

// metricKeys are the keys of the metrics rows' names, in MetricRows' order.
var metricKeys = [...]string{
	protocol.StrMetricTTFB, protocol.StrMetricTTFT, protocol.StrMetricTTFAT, protocol.StrMetricGaps,
	protocol.StrMetricTokensPerSecond, protocol.StrMetricBytes, protocol.StrMetricBuffering, protocol.StrMetricLongestFrame,
}

// fields lists every string with its key, in a fixed order.
func (s *Strings) fields() []keyed {
	f := []keyed{
		{protocol.StrResponding, &s.Responding}, {protocol.StrComplete, &s.Complete}, {protocol.StrStopped, &s.Stopped},
		{protocol.StrIncomplete, &s.Incomplete}, {protocol.StrFailed, &s.Failed}, {protocol.StrStalled, &s.Stalled},
		{protocol.StrStoppedNotice, &s.StoppedNotice}, {protocol.StrCalling, &s.Calling}, {protocol.StrCalled, &s.Called},
		{protocol.StrATool, &s.ATool}, {protocol.StrToolFailed, &s.ToolFailed},
		{protocol.StrSources, &s.Sources}, {protocol.StrSourcesSaid, &s.SourcesSaid},
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
		if v, ok := page[f.key]; ok && stdlite.TrimSpace(v) != "" {
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
	return stdlite.ReplaceAll(s.Reasons[r], "{status}", strconv.Itoa(status))
}
