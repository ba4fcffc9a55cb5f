package stream

import (
	"strconv"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wire"
)

// StatusEventType is the SSE event type of the relay's own terminal event,
// whose data is {"status": <RelayStatus>, "message": <why>} (package
// wire has the contract).
const StatusEventType = wire.StatusEvent

// RelayStatus is the status word of a "trickle.status" event: the relay
// writes it and the Pipeline reads it; package wire holds its one
// list of words.
type RelayStatus = wire.Status

// The status words a client acts on.
const (
	RelayStopped  = wire.StatusStopped  // a client asked to stop
	RelayFailed   = wire.StatusFailed   // the upstream or the relay failed
	RelayGone     = wire.StatusGone     // the stream expired or never existed
	RelayWithheld = wire.StatusWithheld // the relay's hold-back checker blocked a sentence, and the answer ends before it
)

// WithheldMessage is the message of a RelayWithheld status.
const WithheldMessage = wire.WithheldMessage

// statusData is the relay's control event payload.
//
//jsonx:reader
type statusData struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	// Usage is what was generated up to a Stop, as the relay counted it.
	Usage struct {
		CompletionTokens int  `json:"completion_tokens"`
		Estimated        bool `json:"estimated"`
	} `json:"usage"`
}

func (p *Pipeline) status(ev sse.Event) {
	var s statusData
	if err := eventError(s.decode(ev.Data)); err != nil {
		p.skipped(ev, p.seq, err)
		return
	}
	switch {
	case RelayStatus(s.Status).Known():
		p.reopen = false
		ev := Event{Kind: KindStatus, Reason: s.Status, Text: s.Message}
		ev.Usage.OutputTokens, ev.Usage.Estimated = s.Usage.CompletionTokens, s.Usage.Estimated
		p.emit(ev)
	default:
		p.skipped(ev, p.seq, errtext.Wrap(ErrUnknownEvent.Error()+": trickle.status "+strconv.Quote(s.Status), ErrUnknownEvent))
	}
}
