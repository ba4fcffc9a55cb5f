package sse

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the event type: the last "event" field of the block, or
	// "message" when there was none.
	Type string
	// Data is the block's "data" fields joined with "\n". (A Parser cuts
	// the Data of small events from shared 4 KiB blocks: keeping one Data
	// string keeps at most one such block alive.)
	Data string
	// LastEventID is the decoder's last event ID at the time of dispatch;
	// it persists across events until an "id" field changes it.
	LastEventID string
}
