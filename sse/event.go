package sse

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the event type: the last "event" field of the block, or
	// "message" when there was none.
	Type string
	// Data is the block's "data" fields joined with "\n".
	Data string
	// LastEventID is the decoder's last event ID at the time of dispatch;
	// it persists across events until an "id" field changes it.
	LastEventID string
}
