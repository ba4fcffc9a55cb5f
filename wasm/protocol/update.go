package protocol

import (
	"strconv"

	"github.com/trickle-dev/trickle/internal/htmlx"
	"github.com/trickle-dev/trickle/internal/jsonx"
)

// The keys of an update, the JSON object AppendJSON writes for one
// element in a frame or say message: what the page (answer.js, merge.js,
// host.js) reads. contract.js has each as UPDATE_<Name> (UpdateKeys).
const (
	UpdateID       = "id"       // the element
	UpdateReset    = "reset"    // true: a new answer starts
	UpdatePatch    = "p"        // the answer's patch (PatchKeys)
	UpdateThinking = "thinking" // reasoning text to append
	UpdateTools    = "tools"    // the tool-call panel's new HTML
	UpdateSources  = "sources"  // the sources part's HTML
	UpdateSay      = "say"      // the announcer log's new entries, as HTML
	UpdateSpeak    = "speak"    // the units to read aloud, in order
	UpdateStatus   = "status"   // the screen-reader status region's text
	UpdateShown    = "shown"    // the visible status line's text
	UpdateStalled  = "stalled"  // whether the stall notice shows
	UpdateText     = "text"     // the answer's new markdown
	UpdateState    = "state"    // the element's new status word
	UpdateStreamID = "sid"      // the relay's stream id
	UpdateMetrics  = "m"        // the metrics object
	UpdateEnd      = "end"      // how the answer ended (EndKeys)
	UpdateEvents   = "ev"       // events to dispatch: [name, detail] pairs
	UpdateN        = "n"        // the call whose promise settles
	UpdateResolve  = "resolve"  // the status word that settles it
	UpdateGone     = "gone"     // true: the element's Go side is released
	UpdateArrived  = "arr"      // when the oldest bytes rendered arrived (epoch ms)
)

// The keys of an update's answer patch (UpdatePatch): PATCH_<Name> in
// contract.js (PatchKeys).
const (
	PatchAppend = "a"      // settled HTML inserted before the tail
	PatchPath   = "path"   // the tail patch's path of child indexes
	PatchKeep   = "keep"   // children kept there; -1: the tail did not change
	PatchText   = "text"   // text appended to the last kept child
	PatchTrim   = "trim"   // UTF-16 code units deleted from its end first
	PatchHTML   = "html"   // HTML inserted at the element's end
	PatchFinal  = "final"  // true: the answer ended, the tail can go
	PatchUnwrap = "unwrap" // true: keep the tail's nodes, drop their wrapper
	PatchMarked = "marked" // the whole answer again, with citation markers
)

// The keys of an update's ending (UpdateEnd): END_<Name> in contract.js
// (EndKeys).
const (
	EndStatus  = "status" // how the answer ended
	EndNotice  = "notice" // the visible notice ("" for none)
	EndRetry   = "retry"  // whether the notice offers the retry button
	EndDetail  = "detail" // the technical chain, for the console
	EndMessage = "msg"    // the answer as an assistant message
	EndRows    = "rows"   // the metrics rows, [label, value] pairs
)

// Key is one key of an update, a patch or an ending: Name is its
// constant's name in contract.js after the prefix (UPDATE_, PATCH_,
// END_), Key what crosses the port.
type Key struct {
	Name, Key, Doc string
}

// UpdateKeys, PatchKeys and EndKeys are the tables of the update's,
// the patch's and the ending's keys, which gencontract writes into
// contract.js. TestTheKeyTablesAreWhatTheEncoderWrites holds them to
// AppendJSON.
var (
	UpdateKeys = []Key{
		{"ID", UpdateID, "the element"},
		{"RESET", UpdateReset, "true: a new answer starts; empty the parts, hide the notice"},
		{"PATCH", UpdatePatch, "the answer's patch (the PATCH_ keys)"},
		{"THINKING", UpdateThinking, "reasoning text to append to the thinking panel"},
		{"TOOLS", UpdateTools, "the tool-call panel's new HTML"},
		{"SOURCES", UpdateSources, "the sources part's HTML"},
		{"SAY", UpdateSay, "the announcer log's new entries, as HTML"},
		{"SPEAK", UpdateSpeak, "the units to read aloud, in order"},
		{"STATUS", UpdateStatus, "the screen-reader status region's new text"},
		{"SHOWN", UpdateShown, "the visible status line's new text"},
		{"STALLED", UpdateStalled, "whether the stall notice shows"},
		{"TEXT", UpdateText, "the answer's new markdown (el.text grows by it)"},
		{"STATE", UpdateState, "the element's new status word"},
		{"STREAM_ID", UpdateStreamID, "the relay's stream id"},
		{"METRICS", UpdateMetrics, "the metrics object"},
		{"END", UpdateEnd, "how the answer ended (the END_ keys)"},
		{"EVENTS", UpdateEvents, "the events to dispatch, [name, detail] pairs in order"},
		{"N", UpdateN, "the call whose promise settles"},
		{"RESOLVE", UpdateResolve, "the status word that settles it"},
		{"GONE", UpdateGone, "true: the element's Go side is released"},
		{"ARRIVED", UpdateArrived, "when the oldest bytes it renders arrived (epoch ms)"},
	}
	PatchKeys = []Key{
		{"APPEND", PatchAppend, "settled HTML, inserted once before the live tail"},
		{"PATH", PatchPath, "the tail patch's path: child node indexes from the tail"},
		{"KEEP", PatchKeep, "the children kept there (-1: the tail did not change)"},
		{"TEXT", PatchText, "text appended to the last kept child"},
		{"TRIM", PatchTrim, "UTF-16 code units deleted from the end of the last kept child before TEXT (absent: 0)"},
		{"HTML", PatchHTML, "HTML inserted at the element's end"},
		{"FINAL", PatchFinal, "true: the answer ended and the live tail can go"},
		{"UNWRAP", PatchUnwrap, "true: keep the tail's nodes, drop only their wrapper"},
		{"MARKED", PatchMarked, "the whole answer's HTML again, with its citation markers"},
	}
	EndKeys = []Key{
		{"STATUS", EndStatus, "how the answer ended (its status word)"},
		{"NOTICE", EndNotice, "the visible notice (\"\" for none)"},
		{"RETRY", EndRetry, "whether the retry button shows beside it"},
		{"DETAIL", EndDetail, "the technical chain, written to the console once"},
		{"MESSAGE", EndMessage, "the answer as an assistant message (el.message); without content, the page's text is its content"},
		{"ROWS", EndRows, "the metrics rows under show-metrics, [label, value] pairs"},
	}
)

// Update is what one element changes on the page: the page (answer.js)
// writes its announcements and status into the live regions the moment it
// arrives, and applies the rest in its next animation frame, in this
// order: Reset, the answer's patch, thinking, tools, Text, State,
// StreamID, Metrics, End, Events, then settles the promise of call N.
// Every Go→page message is a batch of updates (AppendFrame, AppendSay),
// written as JSON with jsonx (one string per message, parsed once on the
// page) under the Update, Patch and End keys.
type Update struct {
	// ID is the element.
	ID int
	// Reset: a new answer starts: empty the parts, hide the notice.
	Reset bool
	// Patch is the frame's change to the screen; HasPatch reports whether
	// there is one.
	Patch    Patch
	HasPatch bool
	// Text is the answer's new markdown since the last update (el.text
	// grows by it, in step with the DOM).
	Text string
	// State is the element's new status word (idle, streaming, complete,
	// stopped, incomplete, failed), "" when unchanged.
	State string
	// StreamID is the relay's stream id when SetStreamID.
	StreamID    string
	SetStreamID bool
	// Metrics is the metrics JSON object when it changed, else "".
	Metrics string
	// End shows how the answer ended (with the final patch).
	End *Ending
	// Events are dispatched on the element in order.
	Events []DOMEvent
	// N and Resolve settle the promise of call N with the status word
	// Resolve (when Resolve is not "").
	N       int
	Resolve string
	// Gone: the element's Go side is released; the page forgets it.
	Gone bool
	// Arrived is when the oldest bytes this update renders arrived, in
	// milliseconds since the epoch (0 when none): the page measures the
	// time from arrival to paint with it.
	Arrived float64
}

// Ending is how an answer ended, as the element shows it.
type Ending struct {
	Status string
	// Notice is the visible text ("" for none); Retry shows the retry
	// button beside it.
	Notice string
	Retry  bool
	// Detail is the technical chain of an answer that failed or ended
	// early ("" for none): the page writes it to the console, once.
	Detail string
	// Rows are the metrics shown under show-metrics (label, value), nil
	// without it.
	Rows [][2]string
	// Message is the answer as an assistant message, JSON (the element's
	// message property), "" for none. Without "content", the answer's
	// text as the page has it (el.text, the sum of the text updates) is
	// its content: the page puts it back, here and in trickle-end's
	// detail (element.AppendEndMessage).
	Message string
}

// DOMEvent is an event for the page to dispatch on the element: its name
// (one of Events) and its detail as a JSON object.
type DOMEvent struct {
	Name   string
	Detail string
}

// Patch is everything one frame changes on screen, in the order the DOM
// layer applies it. The DOM layer makes one call per non-empty field and
// nothing else; Append and TailPatch are the answer itself, applied in one
// call.
type Patch struct {
	// Append is newly settled HTML, inserted once before the live tail.
	Append string
	// Tail is the live tail's new HTML when TailChanged (Go's side only:
	// the page is sent TailPatch, the DOM work that turns the tail on
	// screen into it; a growing paragraph only gets its new words).
	Tail        string
	TailChanged bool
	TailPatch   TailPatch
	// Thinking is new reasoning text to append to the thinking panel.
	Thinking string
	// Tools replaces the tool-call panel's HTML when ToolsChanged.
	Tools        string
	ToolsChanged bool
	// Sources replaces the sources part's HTML when SourcesChanged: only
	// in the final frame, so the list comes once, whole, with the
	// answer's end.
	Sources        string
	SourcesChanged bool
	// Marked (only with Final, when the answer cites) is the whole
	// answer's HTML again with its citation markers, which replaces the
	// answer's content: a citation may name a passage long settled.
	Marked    string
	HasMarked bool
	// Announce are texts for the announcer log, in order; Speak the units
	// they join (sentences, block summaries), one an utterance for read
	// aloud.
	Announce, Speak []string
	// Status replaces the screen-reader status region's text when
	// StatusChanged. It follows the announcer: the end status comes only
	// after the answer's last sentence is spoken (by a11y.MinGap).
	Status        string
	StatusChanged bool
	// Shown replaces the visible status line's text when ShownChanged: the
	// element's state at once, never behind what is on screen ("Answer
	// complete." in the final frame, while Status may still wait for the
	// last sentence to be spoken).
	Shown        string
	ShownChanged bool
	// Stalled says whether the stall notice shows ("Waiting for the
	// model…" beside the caret), when StalledChanged: on when no delta has
	// come for a while during streaming, off with the next delta or the
	// end. The status region says it once (Status) and is cleared with it.
	Stalled        bool
	StalledChanged bool
	// Final: the answer has ended and everything is settled; the live tail
	// can go.
	Final bool
	// Unwrap (only with Final): the rest of the answer's settled HTML is
	// exactly the tail on screen (once this frame's TailPatch is applied),
	// so the DOM layer keeps the tail's nodes and drops only their wrapper,
	// instead of parsing the same HTML again and throwing the tail away —
	// the last frame of an answer whose blocks waited as pending (a
	// reference link's definition at the end) would otherwise re-parse
	// them all, and a selection in the tail would be lost.
	Unwrap bool
}

// TailPatch is the DOM work that turns the live tail on screen into its
// next HTML, as render.DiffTail computes it (a render.TailPatch converts
// to it): follow Path (child node indexes) from the tail to the element
// that changes, remove its children after the first Keep, delete the last
// Trim UTF-16 code units of child Keep-1 and append Text to it (it is a
// text node when either is set), then insert HTML at its end.
type TailPatch struct {
	Path []int
	Keep int
	Text string
	HTML string
	Trim int
}

// Empty reports whether the patch changes nothing.
func (p *Patch) Empty() bool {
	return p.Append == "" && !p.TailChanged && p.Thinking == "" && !p.ToolsChanged &&
		len(p.Announce) == 0 && !p.StatusChanged && !p.ShownChanged && !p.StalledChanged && !p.Final
}

// Empty reports whether the update changes nothing.
func (u *Update) Empty() bool {
	return !u.Reset && !u.HasPatch && u.Text == "" && u.State == "" && !u.SetStreamID &&
		u.Metrics == "" && u.End == nil && len(u.Events) == 0 && u.Resolve == "" && !u.Gone
}

// AnnouncementHTML is the announcer log's new entries: one paragraph per
// announcement, escaped.
func AnnouncementHTML(texts []string) string {
	n := 0
	for _, t := range texts {
		n += len(t) + 7
	}
	b := make([]byte, 0, n)
	for _, t := range texts {
		b = append(b, "<p>"...)
		b = append(b, htmlx.Escape(t)...)
		b = append(b, "</p>"...)
	}
	return string(b)
}

// AppendJSON appends the update as the JSON object the page reads.
func (u *Update) AppendJSON(b []byte) []byte {
	b = append(b, `{"`+UpdateID+`":`...)
	b = strconv.AppendInt(b, int64(u.ID), 10)
	if u.Reset {
		b = append(b, `,"`+UpdateReset+`":true`...)
	}
	if u.HasPatch {
		b = u.Patch.appendJSON(b)
	}
	if u.Text != "" {
		b = jsonx.AppendString(append(b, `,"`+UpdateText+`":`...), u.Text)
	}
	if u.State != "" {
		b = jsonx.AppendString(append(b, `,"`+UpdateState+`":`...), u.State)
	}
	if u.SetStreamID {
		b = jsonx.AppendString(append(b, `,"`+UpdateStreamID+`":`...), u.StreamID)
	}
	if u.Metrics != "" {
		b = append(append(b, `,"`+UpdateMetrics+`":`...), u.Metrics...)
	}
	if u.End != nil {
		b = u.End.appendJSON(append(b, `,"`+UpdateEnd+`":`...))
	}
	if len(u.Events) > 0 {
		b = append(b, `,"`+UpdateEvents+`":[`...)
		for i, ev := range u.Events {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = jsonx.AppendString(b, ev.Name)
			b = append(b, ',')
			b = append(b, ev.Detail...)
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	if u.Resolve != "" {
		b = strconv.AppendInt(append(b, `,"`+UpdateN+`":`...), int64(u.N), 10)
		b = jsonx.AppendString(append(b, `,"`+UpdateResolve+`":`...), u.Resolve)
	}
	if u.Gone {
		b = append(b, `,"`+UpdateGone+`":true`...)
	}
	if u.Arrived > 0 {
		b, _ = jsonx.AppendFloat(append(b, `,"`+UpdateArrived+`":`...), u.Arrived)
	}
	return append(b, '}')
}

// appendJSON appends the patch's members of its update: the answer's
// patch under UpdatePatch (when the answer changed), then the side
// panels and the live regions.
func (p *Patch) appendJSON(b []byte) []byte {
	if p.Append != "" || p.TailChanged || p.Final {
		keep := -1
		if p.TailChanged {
			keep = p.TailPatch.Keep
		}
		b = append(b, `,"`+UpdatePatch+`":{"`+PatchAppend+`":`...)
		b = jsonx.AppendString(b, p.Append)
		b = append(b, `,"`+PatchPath+`":[`...)
		if p.TailChanged {
			for i, n := range p.TailPatch.Path {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(n), 10)
			}
		}
		b = append(b, ']')
		b = strconv.AppendInt(append(b, `,"`+PatchKeep+`":`...), int64(keep), 10)
		if p.TailChanged {
			b = jsonx.AppendString(append(b, `,"`+PatchText+`":`...), p.TailPatch.Text)
			if p.TailPatch.Trim != 0 {
				b = strconv.AppendInt(append(b, `,"`+PatchTrim+`":`...), int64(p.TailPatch.Trim), 10)
			}
			b = jsonx.AppendString(append(b, `,"`+PatchHTML+`":`...), p.TailPatch.HTML)
		}
		if p.Final {
			b = append(b, `,"`+PatchFinal+`":true`...)
		}
		if p.Unwrap {
			b = append(b, `,"`+PatchUnwrap+`":true`...)
		}
		if p.HasMarked {
			b = jsonx.AppendString(append(b, `,"`+PatchMarked+`":`...), p.Marked)
		}
		b = append(b, '}')
	}
	if p.Thinking != "" {
		b = jsonx.AppendString(append(b, `,"`+UpdateThinking+`":`...), p.Thinking)
	}
	if p.ToolsChanged {
		b = jsonx.AppendString(append(b, `,"`+UpdateTools+`":`...), p.Tools)
	}
	if p.SourcesChanged {
		b = jsonx.AppendString(append(b, `,"`+UpdateSources+`":`...), p.Sources)
	}
	if len(p.Announce) > 0 {
		b = jsonx.AppendString(append(b, `,"`+UpdateSay+`":`...), AnnouncementHTML(p.Announce))
	}
	if len(p.Speak) > 0 {
		b = append(b, `,"`+UpdateSpeak+`":[`...)
		for i, t := range p.Speak {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonx.AppendString(b, t)
		}
		b = append(b, ']')
	}
	if p.StatusChanged {
		b = jsonx.AppendString(append(b, `,"`+UpdateStatus+`":`...), p.Status)
	}
	if p.ShownChanged {
		b = jsonx.AppendString(append(b, `,"`+UpdateShown+`":`...), p.Shown)
	}
	if p.StalledChanged {
		b = strconv.AppendBool(append(b, `,"`+UpdateStalled+`":`...), p.Stalled)
	}
	return b
}

// appendJSON appends the ending as the object under UpdateEnd.
func (e *Ending) appendJSON(b []byte) []byte {
	b = append(b, `{"`+EndStatus+`":`...)
	b = jsonx.AppendString(b, e.Status)
	b = jsonx.AppendString(append(b, `,"`+EndNotice+`":`...), e.Notice)
	b = strconv.AppendBool(append(b, `,"`+EndRetry+`":`...), e.Retry)
	if e.Detail != "" {
		b = jsonx.AppendString(append(b, `,"`+EndDetail+`":`...), e.Detail)
	}
	if e.Message != "" {
		b = append(append(b, `,"`+EndMessage+`":`...), e.Message...)
	}
	if e.Rows != nil {
		b = append(b, `,"`+EndRows+`":[`...)
		for i, r := range e.Rows {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			b = jsonx.AppendString(b, r[0])
			b = append(b, ',')
			b = jsonx.AppendString(b, r[1])
			b = append(b, ']')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// AppendFrame appends one frame message: {"t":"frame","u":[updates]}.
func AppendFrame(b []byte, updates []Update) []byte {
	b = append(b, `{"t":"`+TypeFrame+`","u":[`...)
	for i := range updates {
		if i > 0 {
			b = append(b, ',')
		}
		b = updates[i].AppendJSON(b)
	}
	return append(b, "]}"...)
}

// AppendSay appends a message of announcements alone: {"t":"say","u":[u]},
// which the page writes into the live regions at once, outside its frames
// (u holds only the patch's Announce and Status).
func AppendSay(b []byte, u *Update) []byte {
	b = append(b, `{"t":"`+TypeSay+`","u":[`...)
	b = u.AppendJSON(b)
	return append(b, "]}"...)
}
