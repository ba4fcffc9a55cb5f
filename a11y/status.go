package a11y

import (
	"strings"

	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/stream"
)

// maxErrorRunes bounds the error read out in a failure status.
const maxErrorRunes = 200

// StatusText says how the answer ended: each terminal stream.Status maps
// to its sentence; Failed, and a status that is not an end at all (a
// caller's mistake, never silence), are a failure, said with the error when
// there is one. It is what End has announced; a page shows it at once.
func StatusText(status stream.Status, err error) string {
	switch status {
	case stream.Complete:
		return StatusComplete
	case stream.Stopped:
		return StatusStopped
	case stream.Incomplete:
		return StatusIncomplete
	}
	if err == nil {
		return StatusFailed
	}
	msg := stdlite.JoinFields(plain(err.Error()))
	if r := []rune(msg); len(r) > maxErrorRunes {
		// A listener cannot skim: say the start of a long error.
		msg = stdlite.TrimSpace(string(r[:maxErrorRunes])) + "…"
	}
	if msg == "" {
		return StatusFailed
	}
	return withStop("Answer failed: " + msg)
}

// plain removes characters a screen reader would read out as symbols from
// an error message, which may quote model or server text.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("*#`|<>[]{}_~\\", r) {
			return ' '
		}
		return r
	}, s)
}
