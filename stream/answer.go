package stream

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trickle-dev/trickle/internal/errtext"
)

// Status is where an answer is in its life.
type Status int

// The statuses, in the order an answer goes through them. Complete,
// Stopped, Incomplete and Failed are terminal.
const (
	// Waiting: nothing meaningful has arrived yet.
	Waiting Status = iota
	// Streaming: the answer is arriving.
	Streaming
	// Complete: the dialect's end marker arrived.
	Complete
	// Stopped: the user stopped it (or the relay said it was stopped).
	Stopped
	// Incomplete: the stream ended without its end marker.
	Incomplete
	// Failed: the provider reported an error, the transport failed, or the
	// input could not be read.
	Failed
)

var statusNames = [...]string{"waiting", "streaming", "complete", "stopped", "incomplete", "failed"}

// String gives the status as a lowercase word ("complete", "incomplete"…).
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// Terminal reports whether nothing can change the answer any more.
func (s Status) Terminal() bool { return s >= Complete }

// maxProblems bounds how many skip diagnostics an Answer keeps: a hostile
// stream of garbage must not grow memory; the count keeps going.
const maxProblems = 32

// maxCitations bounds the citations an Answer keeps: a stream that cites
// without end must not grow memory without a bound.
const maxCitations = 1024

// Answer accumulates a streamed answer: text, thinking, tool calls, usage,
// finish reason and status. It is built by a Pipeline (or by Apply) and is
// not safe for concurrent use.
type Answer struct {
	text, thinking strings.Builder
	calls          []*callState
	callPos        map[int]int
	usage          *Usage
	sources        []Source
	sourceKeys     map[string]int
	citations      []Citation
	cited          map[[2]int]bool
	files          []File
	approvals      []Approval
	finish         string
	status         Status
	err            error
	skipped        int
	problems       []error
	events         int
}

// NewAnswer returns an empty answer, waiting.
func NewAnswer() *Answer { return &Answer{} }

// Text is the visible answer so far.
func (a *Answer) Text() string { return a.text.String() }

// Thinking is the model's reasoning (thinking / reasoning summary) so far.
func (a *Answer) Thinking() string { return a.thinking.String() }

// callState is a tool call with its arguments so far in a builder: a
// call streamed as many small deltas costs linear time, not quadratic.
type callState struct {
	ToolCall
	partial strings.Builder
}

// ToolCalls returns the tool calls in the order they were opened. A call's
// Arguments are set only once it is Complete.
func (a *Answer) ToolCalls() []ToolCall {
	out := make([]ToolCall, len(a.calls))
	for i, c := range a.calls {
		out[i] = c.ToolCall
		out[i].Partial = c.partial.String()
	}
	return out
}

// Usage returns the token counts, or nil when the stream reported none.
// TotalTokens is input+output when the provider did not give a total.
func (a *Answer) Usage() *Usage {
	if a.usage == nil {
		return nil
	}
	u := *a.usage
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return &u
}

// SetStopUsage gives a stopped answer that reported no usage what the
// relay counted as generated up to the Stop: a client that stops closes
// the stream, so the relay's stopped status, which carries the count, never
// reaches it; the relay answers the Stop's DELETE with it instead. It
// reports whether the answer took u (only a stopped answer without usage
// does).
func (a *Answer) SetStopUsage(u Usage) bool {
	if a.status != Stopped || a.usage != nil {
		return false
	}
	a.usage = &u
	return true
}

// Sources returns the sources the answer drew on, in the order they
// came, each once (a source repeated with the same id, or without an id at
// the same URL, is kept the first time).
func (a *Answer) Sources() []Source { return append([]Source(nil), a.sources...) }

// Citations returns the answer's citations in the order they came, each
// once (the same source at the same place is kept the first time).
func (a *Answer) Citations() []Citation { return append([]Citation(nil), a.citations...) }

// Files returns the files the answer carries, in the order they came.
func (a *Answer) Files() []File { return append([]File(nil), a.files...) }

// Approvals returns the backend's requests for the reader's answer (tool
// approvals, AG-UI interrupts), in the order they came.
func (a *Answer) Approvals() []Approval { return append([]Approval(nil), a.approvals...) }

// FinishReason is the provider's finish reason verbatim ("" if none came).
func (a *Answer) FinishReason() string { return a.finish }

// Status says where the answer is.
func (a *Answer) Status() Status { return a.status }

// Err explains a Stopped, Incomplete or Failed answer; nil otherwise.
func (a *Answer) Err() error { return a.err }

// Skipped counts the events that were skipped because they could not be
// understood (bad JSON, unknown event, unknown tool-call index…).
func (a *Answer) Skipped() int { return a.skipped }

// Problems returns the reasons for the first skipped events (at most 32),
// each a *DecodeError.
func (a *Answer) Problems() []error {
	out := make([]error, len(a.problems))
	copy(out, a.problems)
	return out
}

// Events counts the unified events applied so far.
func (a *Answer) Events() int { return a.events }

func (a *Answer) skip(err error) {
	a.skipped++
	if len(a.problems) < maxProblems {
		a.problems = append(a.problems, err)
	}
}

// end makes the answer terminal with status s unless it already is.
func (a *Answer) end(s Status, err error) {
	if a.status.Terminal() {
		return
	}
	a.status, a.err = s, err
}

// Apply folds one event into the answer. Events after a terminal status
// are ignored and Apply reports false; the Pipeline counts those as skips.
func (a *Answer) Apply(ev Event) bool {
	if a.status.Terminal() {
		return false
	}
	a.events++
	if a.status == Waiting && ev.Kind != KindKeepAlive {
		a.status = Streaming
	}
	switch ev.Kind {
	case KindText:
		a.text.WriteString(ev.Text)
	case KindThinking:
		a.thinking.WriteString(ev.Text)
	case KindToolCallDelta:
		c := a.call(ev.Index)
		if ev.ID != "" {
			c.ID = ev.ID
		}
		if ev.Name != "" {
			c.Name = ev.Name
		}
		if !c.Complete {
			c.partial.WriteString(ev.Text)
		}
	case KindToolCallDone:
		c := a.call(ev.Index)
		if ev.ID != "" {
			c.ID = ev.ID
		}
		if ev.Name != "" {
			c.Name = ev.Name
		}
		c.Arguments, c.Complete = ev.Text, true
		c.partial.Reset()
		c.partial.WriteString(ev.Text)
	case KindUsage:
		if a.usage == nil {
			a.usage = &Usage{}
		}
		a.usage.merge(ev.Usage)
	case KindFinish:
		a.finish = ev.Reason
	case KindError:
		err := ev.Err
		if err == nil {
			err = &ProviderError{Type: "error", Message: "unknown error"}
		}
		a.end(Failed, err)
	case KindToolResult:
		c := a.call(ev.Index)
		switch ev.Reason {
		case ToolResultError:
			c.OutputError = ev.Text
		case ToolResultDenied:
			c.Denied = true
		default:
			c.Output = ev.Text
		}
	case KindAbort:
		a.end(Stopped, ErrAborted)
	case KindSource:
		a.source(Source{ID: ev.ID, URL: ev.URL, Title: ev.Title, MediaType: ev.MediaType, Filename: ev.Name})
	case KindCitation:
		n := a.source(Source{ID: ev.ID, URL: ev.URL, Title: ev.Title, MediaType: ev.MediaType, Filename: ev.Name})
		if n == 0 {
			a.skip(errtext.Wrap(ErrUnknownEvent.Error()+": a citation that names no source", ErrUnknownEvent))
			break
		}
		a.cite(Citation{Source: n, End: a.citeAt(ev.Index), Quote: ev.Text})
	case KindFile:
		a.files = append(a.files, File{URL: ev.URL, MediaType: ev.MediaType})
	case KindApproval:
		a.approvals = append(a.approvals, Approval{ID: ev.ID, ToolCallID: ev.CallID, Reason: ev.Reason, Message: ev.Text})
	case KindEnd:
		a.end(Complete, nil)
	case KindStatus:
		// What a Stop cost, as the relay counted it: the provider's own
		// count, when one came, is the better one.
		if ev.Usage.OutputTokens > 0 && (a.usage == nil || a.usage.OutputTokens == 0) {
			if a.usage == nil {
				a.usage = &Usage{}
			}
			a.usage.OutputTokens, a.usage.Estimated = ev.Usage.OutputTokens, ev.Usage.Estimated
		}
		rerr := &RelayError{Status: ev.Reason, Message: ev.Text}
		if RelayStatus(ev.Reason) == RelayStopped {
			a.end(Stopped, rerr)
		} else {
			a.end(Failed, rerr)
		}
	}
	return true
}

// source adds src to the answer's sources unless it has it already (the
// same id, or, for sources without one, the same URL, or for documents
// with neither the same title and file name) and returns its number, 1
// for the first; 0 when src names nothing.
func (a *Answer) source(src Source) int {
	var key string
	switch {
	case src.ID != "":
		key = "id:" + src.ID
	case src.URL != "":
		key = "url:" + src.URL
	case src.Title != "" || src.Filename != "":
		key = "doc:" + src.Title + "\x00" + src.Filename
	default:
		return 0
	}
	if n, ok := a.sourceKeys[key]; ok {
		return n
	}
	if a.sourceKeys == nil {
		a.sourceKeys = make(map[string]int)
	}
	a.sources = append(a.sources, src)
	a.sourceKeys[key] = len(a.sources)
	return len(a.sources)
}

// citeAt is where a citation's marker goes: at, within the text and moved
// back to the start of the UTF-8 character it falls in; CiteHere (or any
// offset past the text) is the end of the text so far.
func (a *Answer) citeAt(at int) int {
	n := a.text.Len()
	if at < 0 || at > n {
		return n
	}
	text := a.text.String()
	for at > 0 && at < n && !utf8.RuneStart(text[at]) {
		at--
	}
	return at
}

// cite keeps c unless the answer already cites the same source at the
// same place (Gemini repeats its grounding in later chunks).
func (a *Answer) cite(c Citation) {
	key := [2]int{c.Source, c.End}
	if a.cited[key] {
		return
	}
	if len(a.citations) >= maxCitations {
		a.skip(errtext.Wrap(ErrUnknownEvent.Error()+": more than "+strconv.Itoa(maxCitations)+" citations", ErrUnknownEvent))
		return
	}
	if a.cited == nil {
		a.cited = make(map[[2]int]bool)
	}
	a.cited[key] = true
	a.citations = append(a.citations, c)
}

// call returns the tool call keyed by index, opening it if needed.
func (a *Answer) call(index int) *callState {
	if p, ok := a.callPos[index]; ok {
		return a.calls[p]
	}
	if a.callPos == nil {
		a.callPos = make(map[int]int)
	}
	a.callPos[index] = len(a.calls)
	c := &callState{ToolCall: ToolCall{Index: index}}
	a.calls = append(a.calls, c)
	return c
}
