package main

import (
	"math"
	"strings"
	"time"

	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wasm/element"
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

// simulation runs the widget's own Session (wasm/element: the pipeline,
// render.Document, a11y.Announcer and the patches the element applies) the
// way the element drives it, on a simulated clock: bytes are written as
// they arrive, one Frame per 60 Hz animation frame, End when the stream
// ends or the answer can no longer change, then frames until the announcer
// has nothing left to say. What it prints is the Patches: the settled HTML
// and the live tail as the element puts them on screen, the announcements
// as it writes them into the live region and the status region. Nothing
// sleeps; the output depends only on the input and the pace, never on how
// the bytes were cut.
type simulation struct {
	sess *element.Session

	t0, now, nextTick time.Time
	perToken          time.Duration
	tokens            int

	tail   string // the live tail on screen
	final  bool   // the final frame has run
	html   strings.Builder
	frames []replayFrame
	anns   []replayAnnouncement
}

func newSimulation(cfg element.Config, pace float64) (*simulation, error) {
	s := &simulation{t0: time.Unix(0, 0).UTC()}
	s.now, s.nextTick = s.t0, s.t0.Add(frameInterval)
	s.perToken = time.Duration(float64(time.Second) / pace)
	cfg.Now = func() time.Time { return s.now }
	cfg.OnEvent = func(e stream.Event) {
		if (e.Kind == stream.KindText || e.Kind == stream.KindThinking) && e.Text != "" {
			s.tokens++
		}
	}
	sess, err := element.NewSession(cfg)
	if err != nil {
		return nil, err
	}
	s.sess = sess
	return s, nil
}

// feed delivers one piece of the byte stream at the time its first token
// is due: the k-th token (from 0) arrives k/pace seconds after the start;
// a piece carrying no token arrives with the token before it. As the
// element does, it stops reading once the answer can no longer change (the
// end marker, an error event, the relay's status).
func (s *simulation) feed(piece []byte) {
	if s.sess.Ended() {
		return
	}
	s.advance(s.t0.Add(time.Duration(s.tokens) * s.perToken))
	if err := s.sess.WriteAt(piece, s.now); err != nil || s.sess.Terminal() {
		s.sess.End(nil)
	}
}

// advance moves the clock to target, running every animation frame on the
// way.
func (s *simulation) advance(target time.Time) {
	for !s.nextTick.After(target) {
		s.tick()
	}
	if target.After(s.now) {
		s.now = target
	}
}

// frame is one animation frame: the Session's Patch, recorded as the
// element applies it. A frame with nothing due changes nothing (the
// element would not have asked for it).
func (s *simulation) frame() {
	p := s.sess.Frame()
	at := s.ms(s.now)
	if p.TailChanged {
		s.tail = p.Tail
	}
	if p.Append != "" || p.TailChanged || p.Final {
		f := replayFrame{AtMS: at, Append: p.Append, Tail: s.tail, Final: p.Final}
		if p.Final {
			// The tail goes. With Unwrap the element keeps its nodes as
			// the last settled blocks instead of parsing the same HTML
			// again: on screen, the tail's HTML is appended.
			if p.Unwrap {
				f.Append += s.tail
			}
			s.tail, f.Tail, s.final = "", "", true
		}
		s.html.WriteString(f.Append)
		s.frames = append(s.frames, f)
	}
	for _, text := range p.Announce {
		s.anns = append(s.anns, replayAnnouncement{AtMS: at, Text: text})
	}
	if p.StatusChanged {
		s.anns = append(s.anns, replayAnnouncement{AtMS: at, Text: p.Status, Status: true})
	}
}

// finish ends the byte stream after the last piece (if the answer has not
// ended already), runs frames up to the final one, then the frames the
// announcer asks for until it has nothing left to say.
func (s *simulation) finish() {
	s.sess.End(nil)
	for !s.final {
		s.tick()
	}
	for idle := 0; idle < 3; { // bounded even if the announcer never drains
		due, ok := s.sess.NextAnnouncement()
		if !ok {
			return
		}
		// The element's timer asks for the first animation frame at or
		// after the due time.
		for s.nextTick.Before(due) {
			s.nextTick = s.nextTick.Add(frameInterval)
		}
		n := len(s.anns)
		s.tick()
		if len(s.anns) == n {
			idle++
		}
	}
}

// tick runs the next animation frame.
func (s *simulation) tick() {
	s.now = s.nextTick
	s.nextTick = s.nextTick.Add(frameInterval)
	s.frame()
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
