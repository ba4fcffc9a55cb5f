package stream

import (
	"errors"
	"fmt"
	"strings"
)

// Kind says what an Event carries.
type Kind int

// The kinds of unified events. Every dialect decoder speaks only these.
const (
	// KindText is a delta of the visible answer: Event.Text.
	KindText Kind = iota + 1
	// KindThinking is a delta of the model's reasoning: Event.Text.
	KindThinking
	// KindToolCallDelta is a piece of a tool call keyed by Event.Index:
	// Event.ID and Event.Name when the dialect sends them (often only on
	// the first delta), Event.Text a fragment of the arguments.
	KindToolCallDelta
	// KindToolCallDone says the tool call Event.Index is complete;
	// Event.Text holds its complete arguments.
	KindToolCallDone
	// KindUsage carries token counts: Event.Usage. Counts that are zero
	// were not reported by this event.
	KindUsage
	// KindFinish carries the model's finish reason, verbatim from the
	// provider ("stop", "end_turn", "STOP", "tool_calls", …): Event.Reason.
	KindFinish
	// KindError is an error the provider reported in the stream:
	// Event.Err. It is terminal.
	KindError
	// KindEnd is the dialect's end marker ([DONE], message_stop,
	// response.completed, done:true, or a clean close after Gemini's
	// finish reason). Only after it is an answer complete.
	KindEnd
	// KindKeepAlive is a ping that carries nothing (Anthropic "ping").
	KindKeepAlive
	// KindStatus is the relay's control event "trickle.status":
	// Event.Reason is "stopped", "failed" or "gone", Event.Text the
	// relay's message. It is terminal.
	KindStatus
	// KindToolResult is the output of the tool call Event.Index, when the
	// backend ran the tool and sent what it gave (the AI SDK's
	// tool-output-available, AG-UI's TOOL_CALL_RESULT): Event.Text is the
	// output as JSON (AG-UI: the text the tool gave), or, with Event.Reason
	// ToolResultError, the tool's error message; Event.Reason
	// ToolResultDenied says the reader denied the call.
	KindToolResult
	// KindAbort says the backend stopped the answer (the AI SDK's abort,
	// AG-UI's cancelled outcome).
	// It is terminal: the answer is Stopped, with ErrAborted.
	KindAbort
	// KindSource is a source the answer drew on (the AI SDK's source-url
	// and source-document parts): Event.ID the source's id, Event.URL its
	// address, Event.Title its title, and for a document Event.MediaType
	// and Event.Name, its file name.
	KindSource
	// KindFile is a file the answer carries (the AI SDK's file part):
	// Event.URL (often a data: URL) and Event.MediaType.
	KindFile
	// KindApproval says the backend waits for the reader before it goes
	// on: the AI SDK's tool-approval-request, an AG-UI interrupt.
	// Event.ID is the request's id (the one an answer names), Event.CallID
	// the tool call it concerns ("" when none), Event.Reason the
	// request's reason (AG-UI's interrupt reason; "tool_approval" for the
	// AI SDK) and Event.Text its message for the reader, if any.
	KindApproval
	// KindCitation says a passage of the answer cites a source: Event.ID,
	// Event.URL, Event.Title (and for a document Event.MediaType and
	// Event.Name) describe the source as KindSource does, Event.Index is
	// the byte offset in the answer's text where the cited passage ends
	// (CiteHere: where the text is now) and Event.Text the cited passage
	// as the provider quoted it, if it did. The source joins the answer's
	// sources if it is new.
	KindCitation
)

// CiteHere is the Index of a KindCitation whose passage ends where the
// answer's text ends when the citation arrives (Anthropic's citations,
// which belong to the text block they close).
const CiteHere = -1

// ApprovalToolCall is the Reason of a KindApproval that asks whether a
// tool call may run (the AI SDK's tool-approval-request).
const ApprovalToolCall = "tool_approval"

// ToolResultError is the Reason of a KindToolResult whose Text is the
// tool's error message rather than its output.
const ToolResultError = "error"

// ToolResultDenied is the Reason of a KindToolResult that says the reader
// denied the call, so it never ran (the AI SDK's tool-output-denied).
const ToolResultDenied = "denied"

var kindNames = [...]string{
	KindText:          "text",
	KindThinking:      "thinking",
	KindToolCallDelta: "tool_call_delta",
	KindToolCallDone:  "tool_call_done",
	KindUsage:         "usage",
	KindFinish:        "finish",
	KindError:         "error",
	KindEnd:           "end",
	KindKeepAlive:     "keep_alive",
	KindStatus:        "status",
	KindToolResult:    "tool_result",
	KindAbort:         "abort",
	KindSource:        "source",
	KindFile:          "file",
	KindApproval:      "approval",
	KindCitation:      "citation",
}

// String gives the kind's snake_case name, e.g. "tool_call_delta".
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Event is one unified stream event, the same whatever the dialect.
type Event struct {
	Kind Kind
	// Text is the text or thinking delta, the tool-call arguments
	// fragment (KindToolCallDelta), the complete arguments
	// (KindToolCallDone), the tool's output (KindToolResult), the relay's
	// message (KindStatus), or an approval request's message for the
	// reader (KindApproval).
	Text string
	// Index keys a tool call within the answer (the dialect's own index:
	// OpenAI's tool_calls index, Anthropic's content block index, the
	// Responses output_index, a running count for Gemini and Ollama).
	// For KindCitation it is where the cited passage ends (see there).
	Index int
	// ID and Name identify a tool call when the dialect sent them. For
	// KindSource, ID is the source's id and Name a document's file name;
	// for KindApproval, ID is the request's id.
	ID, Name string
	// Usage holds token counts (KindUsage).
	Usage Usage
	// Reason is the finish reason (KindFinish), the relay status word
	// (KindStatus), ToolResultError or ToolResultDenied (KindToolResult),
	// or why the backend asks (KindApproval).
	Reason string
	// Err is the provider's error (KindError).
	Err *ProviderError
	// URL, Title and MediaType describe a source or a file (KindSource,
	// KindFile).
	URL, Title, MediaType string
	// CallID is the id of the tool call an approval request concerns
	// (KindApproval).
	CallID string
}

// Source is a source an answer drew on: a web page (URL) or a document
// (MediaType, Filename), each with its Title when the backend gave one.
type Source struct {
	// ID is the backend's id for the source ("" when it gave none).
	ID        string `json:"id,omitempty"`
	URL       string `json:"url,omitempty"`
	Title     string `json:"title,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Filename  string `json:"filename,omitempty"`
}

// Citation ties a passage of the answer to one of its sources.
type Citation struct {
	// Source is the source's number: 1 for the first of Answer.Sources.
	Source int `json:"source"`
	// End is the byte offset in the answer's text where the cited passage
	// ends, on a UTF-8 character boundary: where a marker goes.
	End int `json:"end"`
	// Quote is the cited passage as the provider quoted it ("" when it
	// did not).
	Quote string `json:"quote,omitempty"`
}

// File is a file an answer carries: its URL (often a data: URL) and its
// media type.
type File struct {
	URL       string `json:"url"`
	MediaType string `json:"media_type"`
}

// Approval is a request from the backend for the reader's answer before
// it goes on (see KindApproval).
type Approval struct {
	// ID is the request's id, the one an answer to it names.
	ID string `json:"id"`
	// ToolCallID is the tool call it concerns, if any.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Reason is why the backend asks: ApprovalToolCall, or an AG-UI
	// interrupt's own reason.
	Reason string `json:"reason,omitempty"`
	// Message is the backend's prompt for the reader, if any.
	Message string `json:"message,omitempty"`
}

// Usage counts tokens. Zero means "not reported".
type Usage struct {
	InputTokens     int `json:"input_tokens"`
	OutputTokens    int `json:"output_tokens"`
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	TotalTokens     int `json:"total_tokens"`
	// Estimated: the counts are the relay's, from what it received up to
	// a Stop (its trickle.status), not the provider's.
	Estimated bool `json:"estimated,omitempty"`
}

// merge overlays the counts u reports onto the ones already known: later
// usage events refine earlier ones (Anthropic's message_delta repeats a
// cumulative output count), they never reset a count to zero.
func (u *Usage) merge(v Usage) {
	if v.InputTokens != 0 {
		u.InputTokens = v.InputTokens
	}
	if v.OutputTokens != 0 {
		u.OutputTokens = v.OutputTokens
	}
	if v.ReasoningTokens != 0 {
		u.ReasoningTokens = v.ReasoningTokens
	}
	if v.TotalTokens != 0 {
		u.TotalTokens = v.TotalTokens
	}
}

// ToolCall is one tool (function) call the model asked for.
type ToolCall struct {
	// Index is the dialect's key for the call (see Event.Index).
	Index int `json:"-"`
	// ID is the provider's call id ("call_…", "toolu_…"), if any.
	ID string `json:"id"`
	// Name is the function's name.
	Name string `json:"name"`
	// Arguments is the complete JSON arguments text. It is empty until
	// Complete: a half-received argument object is never presented as the
	// arguments.
	Arguments string `json:"arguments"`
	// Partial is the arguments text received so far, for progress
	// displays; it equals Arguments once the call is complete.
	Partial string `json:"-"`
	// Complete is true once the dialect closed the call's block.
	Complete bool `json:"-"`
	// Output is what the tool gave, when the backend ran it and sent its
	// output: JSON (DialectAISDK) or the tool's text (DialectAGUI); ""
	// otherwise.
	Output string `json:"output,omitempty"`
	// OutputError is the tool's error message when it failed.
	OutputError string `json:"output_error,omitempty"`
	// Denied: the reader denied the call, so it never ran.
	Denied bool `json:"denied,omitempty"`
}

// Sentinel errors. Compare with errors.Is.
var (
	// ErrIncomplete: the byte stream ended without the dialect's end
	// marker; the answer is cut off.
	ErrIncomplete = errors.New("stream: ended without the end marker")
	// ErrStopped: the user stopped the answer.
	ErrStopped = errors.New("stream: stopped by the user")
	// ErrAborted: the backend stopped the answer (the AI SDK's abort).
	ErrAborted = errors.New("stream: the server stopped the answer")
	// ErrProvider: the provider reported an error inside the stream
	// (matched by every *ProviderError).
	ErrProvider = errors.New("stream: the provider reported an error")
	// ErrRelay: the relay ended the stream with a "trickle.status" event
	// (matched by every *RelayError).
	ErrRelay = errors.New("stream: the relay ended the stream")
	// ErrGone: the relay no longer has the stream (resume after it
	// expired).
	ErrGone = errors.New("stream: the stream expired on the relay")
	// ErrWithheld: the relay's hold-back checker blocked a sentence, and
	// the answer ended before it.
	ErrWithheld = errors.New("stream: the relay withheld the rest of the answer")
	// ErrBadJSON: an event's data is not valid JSON (the event is skipped
	// and counted).
	ErrBadJSON = errors.New("stream: data is not valid JSON")
	// ErrUnknownEvent: an event type or shape the dialect does not define
	// (skipped and counted).
	ErrUnknownEvent = errors.New("stream: unknown event")
	// ErrUnknownToolCall: a tool-call delta for an index that was never
	// opened (skipped and counted).
	ErrUnknownToolCall = errors.New("stream: tool call for an unknown index")
	// ErrUndetected: the first events did not say which dialect this is
	// (skipped and counted until one does).
	ErrUndetected = errors.New("stream: cannot tell the dialect from this event")
	// ErrAfterEnd: an event arrived after the answer had ended (skipped
	// and counted).
	ErrAfterEnd = errors.New("stream: event after the end of the answer")
	// ErrUnknownDialect: ParseDialect, NewDecoder or WithDialect was given
	// a dialect that does not exist.
	ErrUnknownDialect = errors.New("stream: unknown dialect")
	// ErrEventTooLarge: one SSE event or NDJSON line exceeded the maximum
	// event size. The event is skipped and counted (Answer.Skipped,
	// Answer.Problems) and the events after it are still read, so the
	// answer goes on; the text it carried is missing from the answer.
	ErrEventTooLarge = errors.New("stream: event too large")
)

// ProviderError is an error the model provider reported in the stream
// (Anthropic's "overloaded_error", OpenAI's {"error":…}, Responses'
// response.failed, …). It matches ErrProvider.
type ProviderError struct {
	// Dialect is the dialect that carried it.
	Dialect Dialect `json:"-"`
	// Type is the provider's error type or code ("overloaded_error",
	// "server_error", "INTERNAL"); "error" when it gave none.
	Type string `json:"type"`
	// Message is the provider's message.
	Message string `json:"message"`
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("stream: %s error %s: %s", e.Dialect, e.Type, e.Message)
}

// Is makes errors.Is(err, ErrProvider) true.
func (e *ProviderError) Is(target error) bool { return target == ErrProvider }

// RelayError is a terminal "trickle.status" from the relay. It matches
// ErrRelay, and ErrGone, ErrStopped or ErrWithheld for those statuses.
type RelayError struct {
	// Status is a RelayStatus word: "stopped", "failed", "gone" or
	// "withheld".
	Status string
	// Message is the relay's message.
	Message string
}

func (e *RelayError) Error() string {
	switch RelayStatus(e.Status) {
	case RelayGone:
		msg := "the stream expired on the relay and cannot be resumed; ask again"
		if e.Message != "" {
			msg += " (" + e.Message + ")"
		}
		return "stream: relay: " + msg
	case "":
		return "stream: relay: " + e.Message
	}
	if e.Message == "" {
		return "stream: relay: " + e.Status
	}
	return "stream: relay: " + e.Status + ": " + e.Message
}

// Is matches ErrRelay, and ErrGone / ErrStopped / ErrWithheld for those
// statuses.
func (e *RelayError) Is(target error) bool {
	switch target {
	case ErrRelay:
		return true
	case ErrGone:
		return RelayStatus(e.Status) == RelayGone
	case ErrStopped:
		return RelayStatus(e.Status) == RelayStopped
	case ErrWithheld:
		return RelayStatus(e.Status) == RelayWithheld
	}
	return false
}

// DecodeError says which event could not be understood and why. Err wraps
// one of ErrBadJSON, ErrUnknownEvent, ErrUnknownToolCall, ErrUndetected,
// ErrAfterEnd.
type DecodeError struct {
	// Dialect is the dialect in use (DialectAuto before detection).
	Dialect Dialect
	// Event is the 1-based number of the event in the stream.
	Event int
	// Type is the SSE event type ("message" for NDJSON lines).
	Type string
	// Err is the reason.
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("stream: %s event %d (%s): %s", e.Dialect, e.Event, e.Type,
		strings.TrimPrefix(e.Err.Error(), "stream: "))
}

func (e *DecodeError) Unwrap() error { return e.Err }
