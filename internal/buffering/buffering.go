// Package buffering decides, from when a streamed answer's bytes arrived,
// whether something between the model and the reader held the stream back
// and released it in one burst (a reverse proxy buffering responses, a
// compressing middlebox, a server that does not flush).
//
// It is the one definition of the "buffered" verdict: the widget's
// metrics (buffering: streamed, buffered, unknown) and `trickle probe`
// (streaming, batched, buffered, inconclusive) both ask Judge. It never
// measures anything itself: callers pass the number of text deltas and the
// time from the first byte of the response body to the last.
package buffering

import (
	"fmt"
	"time"
)

// Verdict is what the arrival times say about the stream.
type Verdict uint8

const (
	// Unknown: too little to tell. Fewer than two tokens, or a short answer
	// that arrived within Window — a fast model can send that much that
	// quickly on its own.
	Unknown Verdict = iota
	// Streamed: the bytes arrived spread over at least Window.
	Streamed
	// Buffered: at least MinTokens tokens, and the first and last byte
	// arrived less than Window apart.
	Buffered
)

// MarshalText is the verdict's word: encoding/json writes it as a string.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads a verdict's word.
func (v *Verdict) UnmarshalText(b []byte) error {
	for _, w := range []Verdict{Unknown, Streamed, Buffered} {
		if string(b) == w.String() {
			*v = w
			return nil
		}
	}
	return fmt.Errorf("buffering: %q is not a verdict (streamed, buffered, unknown)", b)
}

// String is the verdict's word, in the widget's metrics and in
// `trickle probe`'s report alike: streamed, buffered or unknown.
func (v Verdict) String() string {
	switch v {
	case Streamed:
		return "streamed"
	case Buffered:
		return "buffered"
	}
	return "unknown"
}

// Window is how close the first and the last byte must arrive for an
// answer to count as released at once.
//
// 50 ms, not less, because of how arrival is measured. The widget stamps
// each chunk with performance.now() in a JavaScript read callback, on an
// event loop it shares with its own frames and, on the page's thread, with
// the page: a chunk can wait behind a task there, and a burst the network
// delivered at once is read in several callbacks with frames between
// them. 50 ms is the longest task that does not count as a long task
// (the Long Tasks API's threshold), so a burst read across ordinary tasks
// still falls inside it. `trickle probe` reads natively with no such
// delay, but a released buffer also takes transfer time to arrive — an
// answer of a few hundred tokens is tens of kilobytes of SSE, a few ms on
// a fast link — so the same window serves it too. A wider window would
// misjudge more fast, short, genuinely streamed answers (see MinTokens).
// A narrower one gives no precision back: a long answer released at once
// over a slow link can take longer than any window to arrive, and is then
// Streamed here (the probe's "batched", many tokens per read, catches
// some of those).
const Window = 50 * time.Millisecond

// FastestStream is the highest rate, in tokens per second, at which a model
// is expected to stream on its own. The simulated model's fastest pace in
// this repository's browser tests is 1,000 tokens a second (1 ms apart).
const FastestStream = 1000

// MinTokens is the fewest tokens for which arriving within Window says
// "held back": a model streaming at FastestStream needs Window to send
// MinTokens tokens (their MinTokens-1 gaps), so a genuine stream of at
// least that many tokens at up to that rate spreads over Window or more.
// Shorter answers that arrive within Window are Unknown.
const MinTokens = int(Window/time.Millisecond)*FastestStream/1000 + 1

// Judge returns the verdict for an answer of tokens text deltas whose first
// and last response bytes arrived spread apart.
func Judge(tokens int, spread time.Duration) Verdict {
	switch {
	case tokens < 2:
		return Unknown
	case spread >= Window:
		return Streamed
	case tokens >= MinTokens:
		return Buffered
	}
	return Unknown
}
