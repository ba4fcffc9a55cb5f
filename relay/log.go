package relay

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trickle-dev/trickle/sse"
)

// Stream states, as /v1/streams/{id}/info reports them.
const (
	StateRunning   = "running"   // the generation is going on
	StateComplete  = "complete"  // the generator finished on its own
	StateStopped   = "stopped"   // a client asked to stop
	StateCancelled = "cancelled" // nobody came back within the grace period, or the relay shut down
	StateFailed    = "failed"    // the upstream (or an injected fault) failed
)

// StatusEvent is the SSE event type of the relay's own terminal events.
const StatusEvent = "trickle.status"

// genLog is one generation: an append-only log of encoded SSE events. The
// generator appends; every reader (SSE response, WebSocket, resume) keeps its
// own position and reads what is new, so a slow reader never holds up the
// generator or the other readers. Events are stored once, already encoded
// (`id: <stream>:<seq>` included), in one contiguous buffer: readers send
// slices of it without copying, and a resume replays exactly the bytes the
// first connection got.
type genLog struct {
	id      string
	plainID bool // id has no byte the encoder would drop (CR, LF, NUL) nor ':'
	srv     *Server
	created time.Time
	dialect string

	// dropAfter (fault injection) cuts the stream's first connection
	// after event number dropAfter; the generation goes on, and resumes
	// are not cut again.
	dropAfter int
	dropTaken bool

	mu   sync.Mutex
	buf  []byte // encoded events, back to back; never rewritten
	ends []int  // ends[i] is the end offset in buf of event seq i+1
	// waiters are the readers waiting for news; each is woken once, then
	// forgotten.
	waiters []waker

	state    string
	message  string // why it ended (stopped, failed, cancelled)
	finished time.Time
	cancel   func() // stops the generator; nil once it has ended
	// upstreamCancelled reports that the generator (simulated or real
	// upstream request) was cancelled before it ended by itself.
	upstreamCancelled bool

	readers int
	grace   *time.Timer
	lastTok time.Time
	tokens  int
}

func newLog(srv *Server, id, dialect string) *genLog {
	return &genLog{
		id:      id,
		plainID: !strings.ContainsAny(id, "\r\n\x00:"),
		srv:     srv,
		created: time.Now(),
		dialect: dialect,
		state:   StateRunning,
	}
}

// waker is a reader waiting for news; wake must not block. inline is true
// when the goroutine that appended the news calls it without the log's
// lock: the reader may then send, without blocking, on that goroutine.
type waker interface {
	wake(inline bool)
}

// wakeLocked wakes the readers waiting for news.
func (l *genLog) wakeLocked() {
	for i, w := range l.waiters {
		w.wake(false)
		l.waiters[i] = nil
	}
	l.waiters = l.waiters[:0]
}

// appendLocked encodes one event with the next id.
func (l *genLog) appendLocked(event, data string) {
	seq := len(l.ends) + 1
	if event == "" && data != "" && l.plainID && strings.IndexByte(data, '\n') < 0 && strings.IndexByte(data, '\r') < 0 {
		// Every token: the bytes sse.AppendMessage writes for an id that
		// needs no cleaning and one data line, without building the id
		// string or scanning the fields for line ends twice (a tenth of
		// the relay's own CPU per event at 10,000 streams went there).
		l.buf = append(l.buf, "id: "...)
		l.buf = append(l.buf, l.id...)
		l.buf = append(l.buf, ':')
		l.buf = strconv.AppendInt(l.buf, int64(seq), 10)
		l.buf = append(l.buf, "\ndata: "...)
		l.buf = append(l.buf, data...)
		l.buf = append(l.buf, '\n', '\n')
	} else {
		l.buf = sse.AppendMessage(l.buf, sse.Message{ID: l.id + ":" + strconv.Itoa(seq), Event: event, Data: data})
	}
	l.ends = append(l.ends, len(l.buf))
}

// emit appends one generator event. It reports false once the stream has
// ended (the generator must stop) and enforces the event and length limits.
func (l *genLog) emit(event, data string, token bool) bool {
	return l.emitAt(time.Now(), event, data, token, true)
}

// emitAt is emit for a generator that knows the time (the simulated
// model's clock has just read it). With inline false, the readers go on on
// goroutines of their own.
func (l *genLog) emitAt(now time.Time, event, data string, token, inline bool) bool {
	l.mu.Lock()
	if l.state != StateRunning {
		l.mu.Unlock()
		return false
	}
	cfg := &l.srv.cfg
	switch {
	case len(data) > cfg.maxEventBytes:
		l.finishLocked(StateFailed, "relay: event "+strconv.Itoa(len(l.ends)+1)+" of stream "+l.id+" is "+
			strconv.Itoa(len(data))+" bytes, over the limit of "+strconv.Itoa(cfg.maxEventBytes), true)
		l.mu.Unlock()
		return false
	case len(l.ends) >= cfg.maxEvents:
		l.finishLocked(StateFailed, "relay: stream "+l.id+" reached the limit of "+strconv.Itoa(cfg.maxEvents)+" events", true)
		l.mu.Unlock()
		return false
	}
	l.appendLocked(event, data)
	if token {
		m := l.srv.metrics
		if l.tokens == 0 {
			m.ttft.observe(now.Sub(l.created))
		} else {
			m.gap.observe(now.Sub(l.lastTok))
		}
		l.tokens++
		l.lastTok = now
		m.events.Add(1)
	}
	// The readers are woken after the lock is released: a reader that is
	// caught up then sends the event from here, at once, if its socket
	// takes it without blocking (most do: no goroutine is started per
	// event), and else goes on on a goroutine of its own.
	var few [4]waker
	woken := append(few[:0], l.waiters...)
	clear(l.waiters)
	l.waiters = l.waiters[:0]
	l.mu.Unlock()
	for _, w := range woken {
		w.wake(inline)
	}
	return true
}

// end is called by the generator when it has finished on its own.
func (l *genLog) end(state, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != StateRunning {
		return
	}
	l.cancel = nil // nothing left to cancel
	l.finishLocked(state, message, false)
}

// failLocked-style terminal: finishLocked records the end; with status it
// also appends the relay's trickle.status event so readers learn why.
func (l *genLog) finishLocked(state, message string, status bool) {
	if l.state != StateRunning {
		return
	}
	if l.cancel != nil {
		l.upstreamCancelled = true
		cancel := l.cancel
		l.cancel = nil
		// The generator's cancel takes its own locks; never call it with
		// ours held.
		defer func() { go cancel() }()
	}
	if status {
		b, _ := json.Marshal(struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		}{state, message})
		l.appendLocked(StatusEvent, string(b))
	}
	l.state, l.message, l.finished = state, message, time.Now()
	if l.grace != nil {
		l.grace.Stop()
		l.grace = nil
	}
	l.wakeLocked()
	l.srv.streamEnded(l)
}

// stop ends the stream at once (Stop, grace expiry, shutdown), cancelling
// the generator, with a terminal trickle.status event. It reports whether
// the stream was still running.
func (l *genLog) stop(state, message string) bool { return l.stopWith(state, message, true) }

// stopWith is stop; status false ends the log without the terminal event,
// so that readers see a plain end they can resume from (shutdown).
func (l *genLog) stopWith(state, message string, status bool) bool {
	l.mu.Lock()
	cancel := l.cancel
	l.cancel = nil
	running := l.state == StateRunning
	if running {
		l.upstreamCancelled = cancel != nil
		l.finishLocked(state, message, status)
	}
	l.mu.Unlock()
	if cancel != nil {
		cancel() // synchronously: Stop must reach the upstream at once
	}
	return running
}

// batch is what a reader gets from read: the encoded events after its
// position, with their end offsets (absolute in the log's buffer) so that a
// WebSocket can send one message per event.
type batch struct {
	data []byte
	ends []int
	base int // offset in the log's buffer of data[0]
}

// read returns the events after pos (at most up to event number limit when
// limit > 0), the new position, and whether the stream is over with nothing
// left to read. When there is nothing yet, w is woken on the next news.
func (l *genLog) read(pos, limit int, w waker) (b batch, next int, done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.ends)
	if limit > 0 && n > limit {
		n = limit
	}
	if pos < n {
		start := 0
		if pos > 0 {
			start = l.ends[pos-1]
		}
		// Slices of buf stay valid after later appends: bytes already
		// written are never changed, and a reallocation leaves the old
		// array to the readers holding it.
		return batch{data: l.buf[start:l.ends[n-1]], ends: l.ends[pos:n], base: start}, n, false
	}
	if l.state != StateRunning {
		return batch{}, pos, true
	}
	l.waiters = append(l.waiters, w)
	return batch{}, pos, false
}

// takeDrop returns the event number after which this reader's connection
// must be cut (0: never): only the first reader gets the fault.
func (l *genLog) takeDrop(pos int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropAfter == 0 || l.dropTaken || pos >= l.dropAfter {
		return 0
	}
	l.dropTaken = true
	return l.dropAfter
}

// count is the number of events so far.
func (l *genLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ends)
}

// attach registers a reader; it cancels a pending grace expiry.
func (l *genLog) attach() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readers++
	if l.grace != nil {
		l.grace.Stop()
		l.grace = nil
	}
}

// detach unregisters a reader. When the last one leaves a running stream,
// the grace period starts: disconnect is not Stop, but nobody coming back
// within it cancels the generation.
func (l *genLog) detach() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readers--
	if l.readers > 0 || l.state != StateRunning {
		return
	}
	grace := l.srv.cfg.grace
	l.grace = time.AfterFunc(grace, func() {
		if l.stop(StateCancelled, "relay: no client for "+grace.String()+" after a disconnect; generation cancelled") {
			l.srv.log.Info("stream cancelled", "stream", l.id, "reason", "disconnect grace expired", "grace", grace, "events", l.count())
		}
	})
}

// Info is the JSON answer of GET /v1/streams/{id}/info.
type Info struct {
	ID                string `json:"id"`
	State             string `json:"state"`
	Events            int    `json:"events"`
	UpstreamCancelled bool   `json:"upstream_cancelled"`
	Readers           int    `json:"readers"`
	Message           string `json:"message,omitempty"`
	// Created is when the generation started: the simulated model's
	// timings count from it (the load generator measures added latency
	// against it).
	Created time.Time `json:"created"`
}

func (l *genLog) info() Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Info{ID: l.id, State: l.state, Events: len(l.ends), UpstreamCancelled: l.upstreamCancelled,
		Readers: l.readers, Message: l.message, Created: l.created}
}
