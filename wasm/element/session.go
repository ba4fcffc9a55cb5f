package element

import (
	"errors"
	"time"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/protocol"
)

// Config is what a Session needs to know about the element.
type Config struct {
	// Dialect is the stream dialect (stream.DialectAuto when empty).
	Dialect stream.Dialect
	// ContentType is the response's Content-Type, when known.
	ContentType string
	// Announce is the a11y mode ("": a11y.DefaultMode).
	Announce a11y.Mode
	// Policy is the link and image safety policy for rendering.
	Policy render.Policy
	// Render are extra render options, after RenderOptions' own.
	Render []render.Option
	// FootnotePrefix goes before every footnote id and the links to it
	// (render.WithFootnotePrefix): unique per element on a page.
	FootnotePrefix string
	// Highlight asks for syntax highlighting (the element's highlight
	// attribute): the Highlighter options, when this build has them.
	Highlight bool
	// Words are what the session shows and speaks (English when nil): the
	// page's strings.
	Words *Strings
	// Now is the clock (time.Now when nil); tests pass a fake one.
	Now func() time.Time
	// OnEvent, when set, sees every event the pipeline decodes, after the
	// session has counted it (`trickle replay` paces its simulated clock by
	// the tokens).
	OnEvent func(stream.Event)
}

// Session runs one element's answers: bytes in (Write), patches out (Frame).
// It joins stream.Pipeline, render.Document and a11y.Announcer and keeps the
// metrics. It is the widget's logic without the browser; the DOM layer only
// moves bytes in and patches out. Not safe for concurrent use.
type Session struct {
	cfg  Config
	now  func() time.Time
	pipe *stream.Pipeline
	doc  *render.Document
	ann  *a11y.Announcer
	// renderOpts are the document's options, for the marked rendering.
	renderOpts []render.Option
	rec        Recorder

	pipeOpts []stream.Option // each answer's pipeline and announcer, as
	annOpts  []a11y.Option   // NewSession checked them

	at           time.Time         // when the bytes being written arrived
	rendered     string            // text given to the document so far
	tail         string            // live tail HTML on screen
	differ       render.TailDiffer // diffs each tail against the last, parsing each once
	thinkingSeen int               // bytes of thinking already on screen
	tools        string            // tool panel HTML on screen
	status       string            // status region text on screen
	shown        string            // visible status line text on screen
	asked        bool              // an answer began: Begin (not only NewSession's), bytes or End
	firstToken   bool              // a text delta arrived since the last TookFirstToken
	ended        bool              // End was called
	finished     bool              // the final frame was produced

	stalled   bool          // the stall notice shows
	stallWait time.Duration // StallAfter as of the last frame
	stallGaps int           // answer deltas when stallWait was computed
}

// StallNotice is what the stall notice says in English (Strings.Stalled),
// on screen and once in the status region.
const StallNotice = protocol.EnglishStalled

// MinStall is the shortest silence that counts as a stall: below it, a
// model that pauses between sentences would flash the notice.
const MinStall = 1500 * time.Millisecond

// StallAfter is how long a streaming answer may go without a delta before
// the stall notice shows: max(MinStall, 3 × the answer's p95 gap), so a
// model that is slow all along is not called stalled for its usual pace.
func StallAfter(p95 time.Duration) time.Duration { return max(MinStall, 3*p95) }

// NewSession returns a session ready for Begin. A Config that sets an
// option its package refuses is that package's *OptionError (the widget
// names the element's attribute: see AttributeError).
func NewSession(cfg Config) (*Session, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if cfg.Words == nil {
		cfg.Words = &English
	}
	s := &Session{cfg: cfg, now: now}
	s.renderOpts = s.options()
	doc, err := render.NewDocument(s.renderOpts...)
	if err != nil {
		return nil, err
	}
	s.doc = doc
	if err := s.begin(); err != nil {
		return nil, err
	}
	s.asked = false // ready, but no answer yet: nothing to show
	return s, nil
}

// Begin starts a new answer, forgetting the previous one.
func (s *Session) Begin() {
	if err := s.begin(); err != nil {
		// NewSession's first answer was built from the same options.
		panic("widget: options NewSession accepted were refused: " + err.Error())
	}
}

func (s *Session) begin() error {
	pipe, err := stream.NewPipeline(s.pipeOpts...)
	if err != nil {
		return err
	}
	ann, err := a11y.New(s.annOpts...)
	if err != nil {
		return err
	}
	s.asked = true
	s.pipe, s.ann = pipe, ann
	s.doc.Reset()
	s.rec.Start(s.now())
	s.rendered, s.tail, s.tools, s.status, s.shown = "", "", "", "", ""
	s.differ.Reset()
	s.thinkingSeen = 0
	s.firstToken, s.ended, s.finished = false, false, false
	s.stalled, s.stallWait, s.stallGaps = false, MinStall, 0
	s.ann.Start()
	return nil
}

// StartAt places the answer's start — what the metrics count from — at
// t: when the page called ask(), which can be before the Session exists
// (a call queued while the widget booted, a message on its way to the
// worker).
func (s *Session) StartAt(t time.Time) { s.rec.Start(t) }

// ToldFirst records that the page's early view told the page of the
// answer's first token, d after the start (Recorder.ToldFirst).
func (s *Session) ToldFirst(d time.Duration) { s.rec.ToldFirst(d) }

func (s *Session) event(ev stream.Event) {
	switch {
	case ev.Kind == stream.KindText && ev.Text != "":
		if s.rec.Token(s.at) {
			s.firstToken = true
		}
	case ev.Kind == stream.KindThinking && ev.Text != "":
		s.rec.Thinking(s.at)
	}
	if s.cfg.OnEvent != nil {
		s.cfg.OnEvent(ev)
	}
}

// Write feeds response bytes (any cut) to the pipeline, arriving now.
func (s *Session) Write(chunk []byte) error { return s.WriteAt(chunk, s.now()) }

// WriteAt is Write for bytes that arrived at the given time (the widget
// hands over, once per frame, the chunks that arrived since the last one,
// each with its arrival time, so the metrics stay those of the network).
func (s *Session) WriteAt(chunk []byte, at time.Time) error {
	s.asked = true
	s.at = at
	s.rec.Bytes(len(chunk), at)
	_, err := s.pipe.Write(chunk)
	return err
}

// Respond gives the session the headers of the response whose body comes
// next (see ResponseHead): they choose the framing of a first body (a
// text/plain one is the answer's text) and bound a text body's length.
func (s *Session) Respond(r stream.Response) { s.pipe.Respond(r) }

// ResponseHead reads what the pipeline takes from a fetch response's
// headers (header is Headers.get, "" for a header that is absent). The
// Content-Length counts only for a same-origin response (type "basic"):
// across origins the page cannot read Content-Encoding unless the server
// exposes it, and a compressed body's length is not the one the body
// reads as.
func ResponseHead(responseType string, header func(name string) string) stream.Response {
	r := stream.ResponseOf(header)
	if responseType != "basic" {
		r.ContentLength = -1
	}
	return r
}

// Reconnect prepares for a resumed connection: the byte-level decoder starts
// over, the answer and the last event id stay.
func (s *Session) Reconnect() {
	s.rec.Reconnect()
	s.pipe.Reconnect()
}

// ErrStoppedByUser is passed to End when the user pressed Stop.
var ErrStoppedByUser = stream.ErrStopped

// End ends the answer: nil for a clean end of the byte stream (complete only
// if the end marker came), ErrStoppedByUser for Stop, anything else for a
// transport failure. The next Frame is the final one.
func (s *Session) End(err error) {
	if s.ended {
		return
	}
	s.ended, s.asked = true, true
	switch {
	case err == nil:
		_ = s.pipe.Close() // the status (complete / incomplete) says it
	case errors.Is(err, ErrStoppedByUser):
		s.pipe.Stop()
	case errors.Is(err, ErrIdle):
		s.pipe.Cut(err) // incomplete, not failed: the connection went silent

	default:
		s.pipe.Fail(err)
	}
	s.rec.End(s.now())
}

// Show makes the session's answer the stored one, ended as its status
// says: the next Frame is its final one, the same HTML as if it had
// streamed.
func (s *Session) Show(m Stored) {
	s.asked = true
	evs, end := m.events()
	for _, ev := range evs {
		s.pipe.Answer().Apply(ev)
	}
	s.End(end)
}

// Ended reports whether End was called.
func (s *Session) Ended() bool { return s.ended }

// Terminal reports whether the answer can no longer change (the pipeline saw
// an end marker, an error or a relay status, or End was called).
func (s *Session) Terminal() bool { return s.ended || s.pipe.Answer().Status().Terminal() }

// TookFirstToken reports once that the first text arrived.
func (s *Session) TookFirstToken() bool {
	f := s.firstToken
	s.firstToken = false
	return f
}

// Status is where the answer is: stream.Waiting, Streaming, Complete,
// Stopped, Incomplete or Failed (its String is the word the element's
// data-status, events and ask() give the page).
func (s *Session) Status() stream.Status { return s.pipe.Answer().Status() }

// Answer is the answer so far, for reading (tool calls, usage, finish
// reason, problems); the session alone feeds it.
func (s *Session) Answer() *stream.Answer { return s.pipe.Answer() }

// Dialect names the stream's dialect, or stream.DialectAuto while it is
// not known.
func (s *Session) Dialect() stream.Dialect { return s.pipe.Dialect() }

// Err explains a stopped, incomplete or failed answer.
func (s *Session) Err() error { return s.pipe.Answer().Err() }

// Text is the markdown so far.
func (s *Session) Text() string { return s.pipe.Answer().Text() }

// LastEventID is the id of the last event received (for resume).
func (s *Session) LastEventID() string { return s.pipe.LastEventID() }

// Retry is the reconnection time the server asked for with retry: (0 when
// it did not).
func (s *Session) Retry() time.Duration { return s.pipe.Retry() }

// Metrics is the measurement so far.
func (s *Session) Metrics() Metrics { return s.rec.Snapshot() }

// RecordFrame adds one frame's duration to the metrics.
func (s *Session) RecordFrame(d time.Duration) { s.rec.Frame(d) }

// Dirty reports whether a frame would change something now.
func (s *Session) Dirty() bool {
	a := s.pipe.Answer()
	return (s.ended && !s.finished) || s.shownStatus() != s.shown || len(a.Text()) != len(s.rendered) ||
		len(a.Thinking()) != s.thinkingSeen || s.toolsHTML() != s.tools ||
		s.stalled != s.stallDue(s.now())
}

// NextAnnouncement is when the session wants a frame although no byte came:
// the announcer's next due time, or the moment the stall notice is due,
// whichever is first.
func (s *Session) NextAnnouncement() (time.Time, bool) {
	due, ok := s.ann.NextDue()
	if at, on := s.stallAt(); on && !s.stalled && (!ok || at.Before(due)) {
		return at, true
	}
	return due, ok
}

// stallAt is when the stall notice is due if no delta comes: only while the
// answer streams (a delta has come, no end yet).
func (s *Session) stallAt() (time.Time, bool) {
	last := s.rec.LastDelta()
	if last.IsZero() || s.Terminal() {
		return time.Time{}, false
	}
	return last.Add(s.stallWait), true
}

// stallDue reports whether the stall notice should show at now.
func (s *Session) stallDue(now time.Time) bool {
	at, on := s.stallAt()
	return on && !now.Before(at)
}

// updateStall recomputes StallAfter from the gaps so far (once a frame, and
// only when there are new gaps) and turns the notice on or off.
func (s *Session) updateStall(p *protocol.Patch) {
	// p95 moves slowly: recomputed when the deltas grew by a sixteenth,
	// so a long answer does not merge its gaps every frame.
	if n := s.rec.tokens; n-s.stallGaps >= max(1, s.stallGaps/16) {
		s.stallGaps = n
		s.stallWait = StallAfter(s.rec.GapP95())
	}
	due := s.stallDue(s.now())
	if due == s.stalled {
		return
	}
	s.stalled, p.Stalled, p.StalledChanged = due, due, true
	stall := s.cfg.Words.Stalled
	switch {
	case due:
		s.status, p.Status, p.StatusChanged = stall, stall, true
	case s.status == stall && !p.StatusChanged:
		s.status, p.Status, p.StatusChanged = "", "", true
	}
}

// Frame computes what changed since the last frame. After End it produces
// the final frame: everything settled, the tail gone, the status announced.
func (s *Session) Frame() protocol.Patch {
	var p protocol.Patch
	if s.finished {
		s.poll(&p)
		return p
	}
	a := s.pipe.Answer()
	// The text only grows: its length says whether it changed, without
	// comparing up to the whole answer every frame.
	if text := a.Text(); len(text) != len(s.rendered) {
		s.rendered = text
		s.apply(&p, s.doc.Update(text))
	}
	if th := a.Thinking(); len(th) > s.thinkingSeen {
		p.Thinking = th[s.thinkingSeen:]
		s.thinkingSeen = len(th)
	}
	if tools := s.toolsHTML(); tools != s.tools {
		s.tools, p.Tools, p.ToolsChanged = tools, tools, true
	}
	if s.ended {
		s.finished = true
		o := s.Outcome()
		if o.Status == stream.Stopped {
			// Before the document's last frame settles the sentence the
			// stop cut: the reader hears what was whole, then the status.
			s.ann.StopWith(o.Spoken())
		}
		if f := s.doc.Finish(); f.Append != "" && f.Append == s.tail {
			p.Unwrap = true
			s.tail = ""
			s.ann.Frame(f.Settled, f.TailBlocks, f.Final)
		} else {
			s.apply(&p, f)
		}
		p.Final = true
		s.sources(&p, a)
		spoken := o.Spoken()
		if said := sourcesSaid(len(a.Sources()), s.cfg.Words); said != "" {
			spoken += " " + said
		}
		s.ann.EndWith(spoken) // nothing once StopWith ended it
	}
	s.show(&p)
	s.updateStall(&p)
	s.poll(&p)
	return p
}

// sources puts the answer's sources, and its content again with the
// citation markers, in the final patch.
func (s *Session) sources(p *protocol.Patch, a *stream.Answer) {
	if html := SourcesHTML(a.Sources(), s.cfg.Policy, s.cfg.Words); html != "" {
		p.Sources, p.SourcesChanged = html, true
	}
	if ms := Markers(a); len(ms) > 0 {
		if html, err := render.Convert(render.Mark(a.Text(), ms, s.renderOpts...), s.renderOpts...); err == nil {
			p.Marked, p.HasMarked = html, true
		}
	}
}

func (s *Session) apply(p *protocol.Patch, f render.Frame) {
	p.Append += f.Append
	if f.Tail != s.tail {
		p.TailPatch = protocol.TailPatch(s.differ.Diff(f.Tail)) // render.DiffTail(s.tail, f.Tail)
		s.tail, p.Tail, p.TailChanged = f.Tail, f.Tail, true
	}
	s.ann.Frame(f.Settled, f.TailBlocks, f.Final)
}

// shownStatus is the visible status line for where the answer is: "Assistant
// is responding." until the final frame, then how it ended in a few
// words (the notice says why; the screen reader hears both).
func (s *Session) shownStatus() string {
	if !s.asked {
		return "" // an element that was never asked shows no status
	}
	if s.finished {
		return s.Outcome().Shown()
	}
	return s.cfg.Words.Responding
}

// Outcome is how the answer ended, and why, in the session's words.
func (s *Session) Outcome() Outcome {
	st, err := s.Status(), s.Err()
	r, code := Explain(st, err, s.Answer(), s.rec.bytes)
	return Outcome{Status: st, Err: err, Reason: r, HTTPStatus: code, Words: s.cfg.Words}
}

// show puts the visible status in the patch when it changed.
func (s *Session) show(p *protocol.Patch) {
	if want := s.shownStatus(); want != s.shown {
		s.shown, p.Shown, p.ShownChanged = want, want, true
	}
}

func (s *Session) poll(p *protocol.Patch) {
	for _, a := range s.ann.Poll() {
		if a.Status {
			if a.Text != s.status {
				s.status, p.Status, p.StatusChanged = a.Text, a.Text, true
			}
			continue
		}
		p.Announce = append(p.Announce, a.Text)
		p.Speak = append(p.Speak, a.Units...)
	}
}

func (s *Session) toolsHTML() string { return ToolsHTML(s.pipe.Answer().ToolCalls(), s.cfg.Words) }
