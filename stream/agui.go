package stream

import (
	"errors"
	"strconv"
	"strings"

	"github.com/trickle-dev/trickle/internal/errtext"
	"github.com/trickle-dev/trickle/internal/jsonx"
	"github.com/trickle-dev/trickle/internal/stdlite"
	"github.com/trickle-dev/trickle/sse"
)

// DialectAGUI is AG-UI 1.0, the Agent–User Interaction protocol agent
// backends speak (CopilotKit, TanStack AI, Microsoft Agent Framework,
// Google ADK…): one JSON event per SSE event, named by its "type" —
// RUN_STARTED, TEXT_MESSAGE_* (the answer), REASONING_* (the thinking),
// TOOL_CALL_* (tool calls and their results), RUN_ERROR — ending with
// RUN_FINISHED, whose outcome says whether the run succeeded, was
// cancelled (the answer is Stopped) or waits on an interrupt (each
// interrupt is a KindApproval, and the answer is Complete with the finish
// reason "interrupt"). State, messages snapshots, steps, activities,
// subagent bounds, CUSTOM and RAW events carry nothing the answer shows and
// are read quietly; so are the 0.x THINKING_* names of the reasoning
// events, whose text is thinking.
const DialectAGUI Dialect = "ag-ui"

// aguiDecoder reads DialectAGUI. Tool calls are keyed by toolCallId; each
// gets the next index in the order they open. The decoder keeps each open
// call's arguments, since TOOL_CALL_END does not repeat them.
type aguiDecoder struct {
	calls map[string]*aguiCall
	// chunkCall is the call a TOOL_CALL_CHUNK without an id continues:
	// the one the last chunk opened, until another kind of event closes it.
	chunkCall string
	// quiet holds the ids of text messages that are not the assistant's
	// (a user, system or developer message echoed into the run).
	quiet map[string]bool
	// chunkMsg is the message a TEXT_MESSAGE_CHUNK without an id continues.
	chunkMsg string
	// run is the id of the stream's first run, the one the answer is: the
	// RUN_FINISHED of another (an agent this one invoked as a run of its
	// own, under parentRunId) does not end it.
	run string
}

type aguiCall struct {
	index int
	args  strings.Builder
	done  bool
}

//jsonx:reader
type aguiEvent struct {
	Type         string       `json:"type"`
	MessageID    string       `json:"messageId"`
	Role         string       `json:"role"`
	Delta        string       `json:"delta"`
	ToolCallID   string       `json:"toolCallId"`
	ToolCallName string       `json:"toolCallName"`
	Content      rawJSON      `json:"content"`
	Outcome      *aguiOutcome `json:"outcome"`
	Usage        []aguiUsage  `json:"usage"`
	Message      string       `json:"message"`
	Code         string       `json:"code"`
	RunID        string       `json:"runId"`
}

// aguiOutcome is RUN_FINISHED's outcome: success (also when absent),
// interrupt (with what the run waits for) or cancelled.
type aguiOutcome struct {
	Type       string          `json:"type"`
	Interrupts []aguiInterrupt `json:"interrupts"`
}

type aguiInterrupt struct {
	_          incomparable
	ID         string `json:"id"`
	Reason     string `json:"reason"`
	Message    string `json:"message"`
	ToolCallID string `json:"toolCallId"`
}

// aguiUsage is one TokenUsage entry: a run that called several models
// reports one entry each.
type aguiUsage struct {
	InputTokens     int `json:"inputTokens"`
	OutputTokens    int `json:"outputTokens"`
	TotalTokens     int `json:"totalTokens"`
	ReasoningTokens int `json:"reasoningTokens"`
}

// aguiQuiet are the event types that carry nothing the answer shows.
var aguiQuiet = map[string]bool{
	"TEXT_MESSAGE_END": true,
	"STATE_SNAPSHOT":   true, "STATE_DELTA": true, "MESSAGES_SNAPSHOT": true,
	"ACTIVITY_SNAPSHOT": true, "ACTIVITY_DELTA": true, "RAW": true, "CUSTOM": true,
	"STEP_STARTED": true, "STEP_FINISHED": true,
	"SUBAGENT_STARTED": true, "SUBAGENT_FINISHED": true, "SUBAGENT_ERROR": true,
	"REASONING_START": true, "REASONING_END": true, "REASONING_MESSAGE_START": true,
	"REASONING_MESSAGE_END": true, "REASONING_ENCRYPTED_VALUE": true,
	// AG-UI 0.x named the reasoning events THINKING_*.
	"THINKING_START": true, "THINKING_END": true,
	"THINKING_TEXT_MESSAGE_START": true, "THINKING_TEXT_MESSAGE_END": true,
}

// isAGUIType reports whether an event type is one of AG-UI's (for Detect).
func isAGUIType(typ string) bool {
	switch typ {
	case "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK",
		"REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CHUNK", "THINKING_TEXT_MESSAGE_CONTENT",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK", "TOOL_CALL_RESULT",
		"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR":
		return true
	}
	return aguiQuiet[typ]
}

func (d *aguiDecoder) Dialect() Dialect  { return DialectAGUI }
func (d *aguiDecoder) EndMarker() string { return "RUN_FINISHED" }
func (d *aguiDecoder) Close(func(Event)) {}

func (d *aguiDecoder) Decode(ev sse.Event, emit func(Event)) error {
	var e aguiEvent
	if err := eventError(e.decode(ev.Data)); err != nil {
		if aguiQuiet[e.Type] && errors.Is(err, ErrUnknownEvent) {
			return nil // STATE_DELTA's delta is a JSON Patch, not text
		}
		return err
	}
	if e.Type != "TOOL_CALL_CHUNK" && d.chunkCall != "" {
		// A call built of chunks ends where the chunks do.
		d.end(d.chunkCall, emit)
		d.chunkCall = ""
	}
	switch {
	case aguiQuiet[e.Type]:
	case e.Type == "RUN_STARTED":
		if d.run == "" {
			d.run = e.RunID
		}
	case e.Type == "TEXT_MESSAGE_START":
		d.role(e.MessageID, e.Role)
	case e.Type == "TEXT_MESSAGE_CONTENT":
		if !d.quiet[e.MessageID] {
			emit(Event{Kind: KindText, Text: e.Delta})
		}
	case e.Type == "TEXT_MESSAGE_CHUNK":
		if e.MessageID != "" {
			d.chunkMsg = e.MessageID
			d.role(e.MessageID, e.Role)
		}
		if !d.quiet[d.chunkMsg] && e.Delta != "" {
			emit(Event{Kind: KindText, Text: e.Delta})
		}
	case e.Type == "REASONING_MESSAGE_CONTENT" || e.Type == "REASONING_MESSAGE_CHUNK" || e.Type == "THINKING_TEXT_MESSAGE_CONTENT":
		if e.Delta != "" {
			emit(Event{Kind: KindThinking, Text: e.Delta})
		}
	case e.Type == "TOOL_CALL_START":
		c := d.open(e.ToolCallID)
		emit(Event{Kind: KindToolCallDelta, Index: c.index, ID: e.ToolCallID, Name: e.ToolCallName})
	case e.Type == "TOOL_CALL_CHUNK":
		id := e.ToolCallID
		if id == "" {
			id = d.chunkCall
		}
		if id == "" {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": a TOOL_CALL_CHUNK without a toolCallId and no call open", ErrUnknownToolCall)
		}
		if d.chunkCall != "" && id != d.chunkCall {
			d.end(d.chunkCall, emit)
		}
		d.chunkCall = id
		c, ok := d.calls[id]
		if !ok {
			c = d.open(id)
			emit(Event{Kind: KindToolCallDelta, Index: c.index, ID: id, Name: e.ToolCallName})
		}
		if e.Delta != "" && !c.done {
			c.args.WriteString(e.Delta)
			emit(Event{Kind: KindToolCallDelta, Index: c.index, Text: e.Delta})
		}
	case e.Type == "TOOL_CALL_ARGS":
		c, ok := d.calls[e.ToolCallID]
		if !ok {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": TOOL_CALL_ARGS for "+strconv.Quote(e.ToolCallID)+", which no TOOL_CALL_START opened", ErrUnknownToolCall)
		}
		if !c.done {
			c.args.WriteString(e.Delta)
			emit(Event{Kind: KindToolCallDelta, Index: c.index, Text: e.Delta})
		}
	case e.Type == "TOOL_CALL_END":
		if _, ok := d.calls[e.ToolCallID]; !ok {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": TOOL_CALL_END for "+strconv.Quote(e.ToolCallID)+", which no TOOL_CALL_START opened", ErrUnknownToolCall)
		}
		d.end(e.ToolCallID, emit)
	case e.Type == "TOOL_CALL_RESULT":
		c, ok := d.calls[e.ToolCallID]
		if !ok {
			return errtext.Wrap(ErrUnknownToolCall.Error()+": TOOL_CALL_RESULT for "+strconv.Quote(e.ToolCallID)+", a call that never started", ErrUnknownToolCall)
		}
		emit(Event{Kind: KindToolResult, Index: c.index, Text: aguiContent(e.Content)})
	case e.Type == "RUN_ERROR":
		d.usage(e.Usage, emit)
		typ, msg := e.Code, e.Message
		if typ == "" {
			typ = "error"
		}
		if msg == "" {
			msg = "the agent reported an error without a message"
		}
		emit(Event{Kind: KindError, Err: &ProviderError{Dialect: DialectAGUI, Type: typ, Message: msg}})
	case e.Type == "RUN_FINISHED" && d.run != "" && e.RunID != "" && e.RunID != d.run:
		// Another run, which this one invoked, ended; this one goes on.
	case e.Type == "RUN_FINISHED":
		d.finish(&e, emit)
	default:
		return errtext.Wrap(ErrUnknownEvent.Error()+": an AG-UI event of type "+strconv.Quote(e.Type), ErrUnknownEvent)
	}
	return nil
}

// finish reads RUN_FINISHED: its usage, then its outcome.
func (d *aguiDecoder) finish(e *aguiEvent, emit func(Event)) {
	d.usage(e.Usage, emit)
	outcome := "success"
	if e.Outcome != nil && e.Outcome.Type != "" {
		outcome = e.Outcome.Type
	}
	if e.Outcome != nil {
		emit(Event{Kind: KindFinish, Reason: outcome})
	}
	switch outcome {
	case "cancelled":
		emit(Event{Kind: KindAbort})
	case "interrupt":
		for _, in := range e.Outcome.Interrupts {
			emit(Event{Kind: KindApproval, ID: in.ID, CallID: in.ToolCallID, Reason: in.Reason, Text: in.Message})
		}
		emit(Event{Kind: KindEnd})
	default:
		emit(Event{Kind: KindEnd})
	}
}

// usage sums a run's usage entries, one per model it called.
func (d *aguiDecoder) usage(us []aguiUsage, emit func(Event)) {
	if len(us) == 0 {
		return
	}
	var sum Usage
	for _, u := range us {
		sum.InputTokens += u.InputTokens
		sum.OutputTokens += u.OutputTokens
		sum.ReasoningTokens += u.ReasoningTokens
		sum.TotalTokens += u.TotalTokens
	}
	emit(Event{Kind: KindUsage, Usage: sum})
}

// role notes a text message that is not the assistant's (an absent role
// is the assistant's).
func (d *aguiDecoder) role(id, role string) {
	if role == "" || role == "assistant" {
		return
	}
	if d.quiet == nil {
		d.quiet = make(map[string]bool)
	}
	d.quiet[id] = true
}

// open returns the call keyed by id, giving a new one the next index.
func (d *aguiDecoder) open(id string) *aguiCall {
	if c, ok := d.calls[id]; ok {
		return c
	}
	if d.calls == nil {
		d.calls = make(map[string]*aguiCall)
	}
	c := &aguiCall{index: len(d.calls)}
	d.calls[id] = c
	return c
}

// end completes the call id with the arguments it received (the empty
// object when none came), once.
func (d *aguiDecoder) end(id string, emit func(Event)) {
	c := d.calls[id]
	if c == nil || c.done {
		return
	}
	c.done = true
	args := c.args.String()
	if stdlite.TrimSpace(args) == "" {
		args = "{}"
	}
	emit(Event{Kind: KindToolCallDone, Index: c.index, Text: args})
}

// aguiContent is a tool result's content as text: the string as it came,
// or the text of its text parts; a list of media parts stays JSON.
func aguiContent(raw rawJSON) string {
	if raw == "" || raw == "null" {
		return ""
	}
	var s string
	var parts []aguiPart
	err := jsonx.Decode(string(raw), func(r *jsonx.Reader) {
		if r.Kind() == jsonx.String {
			r.Str(&s)
			return
		}
		jsonx.Slice(r, &parts, func(p *aguiPart) { p.read(r) })
	})
	if err != nil {
		return string(raw)
	}
	if s != "" {
		return s
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	if b.Len() == 0 {
		return string(raw)
	}
	return b.String()
}

//jsonx:reader
type aguiPart struct {
	_    incomparable
	Type string `json:"type"`
	Text string `json:"text"`
}
