package main

import (
	"math"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/stream"
)

// frameInterval is one animation frame at 60 Hz: the widget renders at most
// once per frame, never per token.
const frameInterval = time.Second / 60

// defaultPace is the replay speed without --pace: 40 tokens per frame, as
// fast as the frame loop lets a person see anything.
const defaultPace = 40 * 60

// replayFrame is one rendered frame, as --frames prints it.
type replayFrame struct {
	AtMS   float64 `json:"at_ms"`
	Append string  `json:"append"`
	Tail   string  `json:"tail"`
	Final  bool    `json:"final"`
}

// replayAnnouncement is one thing a screen reader is given to say.
type replayAnnouncement struct {
	AtMS   float64 `json:"at_ms"`
	Text   string  `json:"text"`
	Status bool    `json:"status,omitempty"`
}

// simulation runs the widget's frame loop on a simulated clock: the
// pipeline's answer is rendered by render.Document once per 60 Hz frame and
// the rendered blocks feed a11y.Announcer, which is polled every frame and
// whenever it says something is due. Nothing sleeps; the output depends
// only on the input and the pace, never on how the bytes were cut.
type simulation struct {
	pipe *stream.Pipeline
	doc  *render.Document
	ann  *a11y.Announcer

	t0, now, nextTick time.Time
	perToken          time.Duration
	tokens            int

	rendered string // the text given to the document so far
	tail     string
	html     strings.Builder
	frames   []replayFrame
	anns     []replayAnnouncement
}

func newSimulation(dialect, announce string, pace float64) *simulation {
	s := &simulation{t0: time.Unix(0, 0).UTC()}
	s.now, s.nextTick = s.t0, s.t0.Add(frameInterval)
	s.perToken = time.Duration(float64(time.Second) / pace)
	s.pipe = stream.NewPipeline(stream.WithDialect(dialect), stream.WithEventHandler(func(e stream.Event) {
		if (e.Kind == stream.KindText || e.Kind == stream.KindThinking) && e.Text != "" {
			s.tokens++
		}
	}))
	s.doc = render.NewDocument()
	s.ann = a11y.New(a11y.WithMode(announce), a11y.WithClock(func() time.Time { return s.now }))
	s.ann.Start()
	return s
}

// feed delivers one piece of the byte stream at the time its first token
// is due: the k-th token (from 0) arrives k/pace seconds after the start;
// a piece carrying no token arrives with the token before it.
func (s *simulation) feed(piece []byte) {
	s.advance(s.t0.Add(time.Duration(s.tokens) * s.perToken))
	s.pipe.Write(piece)
}

// advance moves the clock to target, running every frame tick and every
// announcement timer on the way, in time order.
func (s *simulation) advance(target time.Time) {
	for {
		step, isTick := s.nextTick, true
		if due, ok := s.ann.NextDue(); ok && due.After(s.now) && due.Before(step) {
			step, isTick = due, false
		}
		if step.After(target) {
			break
		}
		s.now = step
		if isTick {
			s.nextTick = s.nextTick.Add(frameInterval)
			s.tick()
		} else {
			s.poll()
		}
	}
	if target.After(s.now) {
		s.now = target
	}
}

// tick is one animation frame: render what changed, then poll.
func (s *simulation) tick() {
	if text := s.pipe.Answer().Text(); text != s.rendered {
		s.rendered = text
		s.apply(s.doc.Update(text))
	}
	s.poll()
}

func (s *simulation) apply(f render.Frame) {
	s.html.WriteString(f.Append)
	if f.Append != "" || f.Tail != s.tail || f.Final {
		s.frames = append(s.frames, replayFrame{AtMS: s.ms(s.now), Append: f.Append, Tail: f.Tail, Final: f.Final})
	}
	s.tail = f.Tail
	s.ann.Frame(f.Settled, f.TailBlocks, f.Final)
}

func (s *simulation) poll() {
	for _, a := range s.ann.Poll() {
		s.anns = append(s.anns, replayAnnouncement{AtMS: s.ms(a.At), Text: a.Text, Status: a.Status})
	}
}

// finish ends the byte stream after the last piece and runs the final
// frame at the next tick, then lets every waiting announcement go out.
func (s *simulation) finish() {
	_ = s.pipe.Close()
	s.advance(s.nextTick.Add(-1))
	s.now = s.nextTick
	if text := s.pipe.Answer().Text(); text != s.rendered {
		s.rendered = text
		s.apply(s.doc.Update(text))
	}
	s.apply(s.doc.Finish())
	a := s.pipe.Answer()
	s.ann.End(a.Status(), a.Err())
	s.poll()
	for idle := 0; idle < 3; { // bounded even if the announcer never drains
		due, ok := s.ann.NextDue()
		if !ok {
			break
		}
		if due.After(s.now) {
			s.now = due
		}
		n := len(s.anns)
		s.poll()
		if len(s.anns) == n {
			idle++
		}
	}
}

func (s *simulation) ms(t time.Time) float64 {
	return math.Round(float64(t.Sub(s.t0))/1e4) / 100
}

// splitLines cuts b after every line end (LF or CR). Events are dispatched
// only at line ends, so each piece yields at most one event's tokens, and
// the simulated arrival times do not depend on --chunk.
func splitLines(b []byte, emit func([]byte)) {
	start := 0
	for i, c := range b {
		if c == '\n' || c == '\r' {
			emit(b[start : i+1])
			start = i + 1
		}
	}
	if start < len(b) {
		emit(b[start:])
	}
}
