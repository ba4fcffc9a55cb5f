// Package holdback is the relay's sentence-level hold-back: a gate between
// a generation and its stream log that holds the answer's events until a
// checker has cleared every sentence of the text they carry. Sentences are
// the a11y package's units (what a screen reader would be told as one
// piece), read from the events' text in the stream's dialect (package
// stream): the gate parses the held answer's markdown with render (a
// Document per stream, no HTML), and the checker gets each sentence's
// rendered text, normalised (Normalize), and its source. A blocked sentence ends the answer with the "withheld" status
// and cancels the generation: no client, and no resume, ever gets it or
// anything after it. It never writes to a client itself.
package holdback

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"
	"github.com/trickle-dev/trickle/wire"
)

// Hold puts l behind a gate of its own (before its generation starts);
// rid is the id of the request that started it. A nil Gates holds nothing.
func (g *Gates) Hold(l *streamlog.Log, rid string) {
	if g == nil {
		return // no hold-back
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &gate{gates: g, log: l, rid: rid, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1)}
	d := stream.Dialect(l.Dialect())
	if d == "" || d == stream.DialectAuto {
		d = stream.DialectOpenAI // what the relay speaks when a request names no dialect
	}
	var err error
	if t.dec, err = stream.NewDecoder(d); err == nil {
		t.doc, err = render.NewDocument()
	}
	if err != nil {
		// Text the gate cannot read is text it cannot check: run fails
		// closed, and the operator learns why.
		t.dec, t.doc = nil, nil
		g.log.Error("hold-back cannot read the stream; its answer is withheld", "stream", l.ID(), "request_id", rid, "dialect", d, "err", err)
	}
	l.SetHolder(t)
	go t.run()
}

// event is one generator event the gate holds.
type event struct {
	event, data string
	token       bool
	start, end  int  // the answer's length before and after its text is added
	last        bool // it carries the dialect's end marker
}

// gate holds one stream's events (streamlog.Holder).
type gate struct {
	gates *Gates
	log   *streamlog.Log
	rid   string
	dec   stream.Decoder

	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{}

	mu       sync.Mutex
	queue    []event // taken from the generator, not yet read
	ended    bool    // the generator ended (HoldEnd)
	endState wire.State
	endMsg   string

	// The run goroutine's.
	held     []event // read, not yet released, in order
	answer   strings.Builder
	doc      *render.Document
	units    a11y.Sentences
	cleared  int  // the answer's bytes cleared by the checker
	finished bool // doc.Finish was called: every unit is known
}

func (t *gate) Hold(_ time.Time, ev, data string, token bool) {
	t.mu.Lock()
	t.queue = append(t.queue, event{event: ev, data: data, token: token})
	t.mu.Unlock()
	t.poke()
}

func (t *gate) HoldEnd(state wire.State, message string) {
	t.mu.Lock()
	if !t.ended {
		t.ended, t.endState, t.endMsg = true, state, message
	}
	t.mu.Unlock()
	t.poke()
}

func (t *gate) Drop() { t.cancel() }

func (t *gate) poke() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run reads what the generator gave, checks each sentence it completes
// and releases the events whose text is cleared, until the end.
func (t *gate) run() {
	defer t.cancel()
	if t.dec == nil || t.doc == nil {
		// Text the gate cannot read is text it cannot check: fail closed.
		t.log.Stop(wire.StateWithheld, wire.WithheldMessage)
		return
	}
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-t.wake:
		}
		t.mu.Lock()
		batch := t.queue
		t.queue = nil
		ended, state, msg := t.ended, t.endState, t.endMsg
		t.mu.Unlock()
		last := false
		for _, e := range batch {
			t.read(&e)
			last = last || e.last
			t.held = append(t.held, e)
		}
		var units []a11y.Unit
		if !t.finished {
			text := t.answer.String()
			if len(batch) > 0 {
				f := t.doc.Update(text)
				units = t.units.Frame(f.Settled, f.TailBlocks, false)
			}
			if last || ended {
				// The end of the answer is a hard boundary: what is
				// left is its last units.
				f := t.doc.Finish()
				units = append(units, t.units.Frame(f.Settled, nil, true)...)
				t.finished = true
			}
		}
		for _, u := range units {
			if !t.clear(u.End, u.Text) {
				return
			}
		}
		if t.finished && !t.clear(t.answer.Len(), "") {
			return // the incomplete tail
		}
		if !t.release() {
			return
		}
		if ended && len(t.held) == 0 {
			t.log.ReleaseEnd(state, msg)
			return
		}
	}
}

// read adds the text e carries to the answer, in the stream's dialect.
func (t *gate) read(e *event) {
	typ := e.event
	if typ == "" {
		typ = "message"
	}
	e.start = t.answer.Len()
	t.dec.Decode(sse.Event{Type: typ, Data: e.data}, func(ev stream.Event) {
		switch ev.Kind {
		case stream.KindText:
			t.answer.WriteString(ev.Text)
		case stream.KindEnd:
			e.last = true
		}
	})
	e.end = t.answer.Len()
}

// clear checks the answer's text from the cleared part up to end, whose
// rendered text is rendered (the a11y unit's; "" for the incomplete tail,
// which is checked as its source); it reports false when the answer was
// withheld (or the stream ended).
func (t *gate) clear(end int, rendered string) bool {
	if end <= t.cleared {
		return true
	}
	text := t.answer.String()
	sentence := text[t.cleared:end]
	if rendered == "" {
		rendered = sentence
	}
	if strings.TrimSpace(sentence) != "" {
		if !t.check(Request{Text: Normalize(rendered), Sentence: sentence, Context: text[:t.cleared], StreamID: t.log.ID(), RequestID: t.rid}) {
			t.releaseCleared()
			t.log.Stop(wire.StateWithheld, wire.WithheldMessage)
			return false
		}
	}
	t.cleared = end
	return t.release()
}

// check asks the checker about one sentence and reports whether it goes
// out.
func (t *gate) check(r Request) bool {
	g := t.gates
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.ctx, g.timeout)
	allow, err := g.checker.Check(ctx, r)
	cancel()
	if t.ctx.Err() != nil {
		return false // the stream ended meanwhile: no verdict to count
	}
	wait := time.Since(start)
	switch {
	case errors.Is(err, ErrNoAllow):
		g.observe(string(VerdictBlock), wait)
		g.log.Warn("hold-back checker answered without allow: blocked; answer withheld", "stream", r.StreamID, "request_id", r.RequestID, "err", err)
		return false
	case err != nil:
		g.observe(string(VerdictError), wait)
		g.log.Warn("hold-back checker failed", "stream", r.StreamID, "request_id", r.RequestID, "allow_on_error", g.allowOnError, "err", err)
		return g.allowOnError
	case allow:
		g.observe(string(VerdictAllow), wait)
	default:
		g.observe(string(VerdictBlock), wait)
		g.log.Info("hold-back blocked a sentence; answer withheld", "stream", r.StreamID, "request_id", r.RequestID)
	}
	return allow
}

// releaseCleared releases the cleared start of the first held event when
// its text runs on past the cleared part (a token such as "k. Wh" ends
// one sentence and starts the next): a withheld sentence must not take
// the end of the cleared one before it away from the reader.
func (t *gate) releaseCleared() {
	if len(t.held) == 0 {
		return
	}
	e := t.held[0]
	if e.start >= t.cleared || e.end <= t.cleared {
		return
	}
	if data, ok := cut(e.data, t.answer.String()[e.start:e.end], t.cleared-e.start); ok {
		t.log.Release(e.event, data, e.token)
	}
}

// release appends the held events whose text is all cleared, in order; it
// reports false once the stream has ended.
func (t *gate) release() bool {
	n := 0
	for _, e := range t.held {
		if e.end > t.cleared {
			break
		}
		if !t.log.Release(e.event, e.data, e.token) {
			return false
		}
		n++
	}
	t.held = append(t.held[:0], t.held[n:]...)
	return true
}
