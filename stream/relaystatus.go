package stream

// StatusEventType is the SSE event type of the relay's own terminal event,
// whose data is {"status": <RelayStatus>, "message": <why>}.
const StatusEventType = "trickle.status"

// RelayStatus is the status word of a "trickle.status" event. The relay
// (package relay) writes it and the Pipeline reads it; this type is the one
// list of its words.
type RelayStatus string

// The status words a client acts on.
const (
	RelayStopped RelayStatus = "stopped" // a client asked to stop
	RelayFailed  RelayStatus = "failed"  // the upstream or the relay failed
	RelayGone    RelayStatus = "gone"    // the stream expired or never existed
)

// Known reports whether s is one of the words above.
func (s RelayStatus) Known() bool {
	switch s {
	case RelayStopped, RelayFailed, RelayGone:
		return true
	}
	return false
}
