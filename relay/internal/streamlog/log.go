// Package streamlog is the relay's generation log and its readers: one
// append-only log of encoded SSE events per stream, which the generator
// appends to and every reader (an SSE response, a WebSocket, a resume)
// reads from its own position, sending to a Sink. It never touches a
// socket itself and never talks to a store: a Host does.
package streamlog

import (
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wire"
)

// Stream states (package wire has the contract), named here for the
// log's own code and its tests.
const (
	StateRunning   = wire.StateRunning
	StateComplete  = wire.StateComplete
	StateStopped   = wire.StateStopped
	StateCancelled = wire.StateCancelled
	StateFailed    = wire.StateFailed
	StateWithheld  = wire.StateWithheld
)

// Config is what every log of a server shares.
type Config struct {
	MaxEventSize int // an event's data over it fails the stream
	MaxEvents    int // a stream's events beyond it fail the stream
	MaxBytes     int // a stream's log beyond it fails the stream (0: no bound)
	// Retain, when set, is asked (with the log's lock held; it must not
	// take it) for n more bytes of the relay's budget for every log: false
	// refuses them, and the stream fails as over MaxBytes. force takes
	// them whatever the budget (the terminal event, a followed stream's);
	// a negative n (with force) gives bytes back.
	Retain func(l *Log, n int, force bool) bool
	Grace  time.Duration // a stream without readers runs this long
	Logger *slog.Logger
}

// Host is what a log tells the server keeping it. Its methods are called
// with the log's lock held, unless they say otherwise, and must not block.
type Host interface {
	// Token records a model event: the time since the start for the
	// first, the gap since the last for the others.
	Token(first bool, d time.Duration)
	// Touch tells the store that a gated log has news (events, the end).
	Touch(l *Log)
	// Ended is called once when a log generated here ends, with its state.
	Ended(l *Log, state wire.State)
	// Watched reports (without the lock) that clients on other instances
	// read the stream, so that the disconnect grace must not cancel it.
	Watched(id string) bool
	// DropFollowed (without the lock) forgets a followed log nobody read
	// for the grace period.
	DropFollowed(l *Log)
}

// Log is one generation: an append-only log of encoded SSE events. The
// generator appends; every reader (SSE response, WebSocket, resume) keeps its
// own position and reads what is new, so a slow reader never holds up the
// generator or the other readers. Events are stored once, already encoded
// (`id: <stream>:<seq>` included), back to back in segments of about a
// megabyte: readers send slices of them without copying, and a resume
// replays exactly the bytes the first connection got.
type Log struct {
	id      string
	plainID bool // id has no byte the encoder would drop (CR, LF, NUL) nor ':'
	cfg     *Config
	host    Host
	created time.Time
	dialect string

	// dropAfter (fault injection) cuts the stream's first connection
	// after event number dropAfter; the generation goes on, and resumes
	// are not cut again.
	dropAfter int
	dropTaken bool

	mu sync.Mutex
	// The encoded events, back to back, never rewritten: sealed segments
	// of at least segmentSize bytes, then buf, the segment appended to,
	// which starts at offset base of the log. An event lies whole in one
	// segment. A long stream so grows a segment at a time: never one
	// array copied into one twice its size, the old one left to readers
	// (a 64 MiB log took three times that).
	sealed []segment
	base   int
	buf    []byte
	ends   []int // ends[i] is the end offset in the log of event seq i+1
	// waiters are the readers waiting for news; each is woken once, then
	// forgotten.
	waiters []Waker

	state wire.State
	// endedCh is closed when the stream ends; made by the first WaitEnded
	// of a running stream.
	endedCh  chan struct{}
	message  string // why it ended (stopped, failed, cancelled)
	finished time.Time
	cancel   func() // stops the generator; nil once it has ended
	// upstreamCancelled reports that the generator (simulated or real
	// upstream request) was cancelled before it ended by itself.
	upstreamCancelled bool

	readers int
	grace   *time.Timer
	// noResume: the client will not resume (X-Trickle-Resume: off), so
	// its last reader leaving cancels the generation at once.
	noResume bool
	// estimated: tokens counts events, not known tokens (EstimateTokens).
	estimated bool
	lastTok   time.Time
	tokens    int
	fromText  int    // tokens estimated from the text's bytes (EstimateAtLeast)
	owner     string // the identity that made the stream (SetOwner)
	// reported: the output tokens the model reported (its usage), which
	// replace the count of events (ReportTokens).
	reported int
	// onEnd, when set, learns what the generation cost when it ends.
	onEnd func(store.Usage)

	// With a durable store (Redis): readers get only the events the store
	// holds, so that whatever a client has, any instance can resume after.
	gated   bool
	durable int  // events the store has acknowledged
	lost    bool // the store failed this stream: nothing more goes to it
	// The store's writer owns these (under l.mu).
	stored    int  // events handed to the store
	endStored bool // the terminal entry was handed to the store
	// follow is set when the stream is generated by another instance and
	// this log follows it from the store: it stops the following.
	follow func()
	// retained is what the relay's budget counts of this log
	// (Config.Retain): added to as it grows, taken back when it is
	// forgotten.
	retained atomic.Int64
	credit   int // bytes of retained not used yet (retainStep)
	// holder, when set, takes the generator's events before they are
	// appended (hold-back); it is set before the generation starts.
	holder Holder
}

// New makes the log of a stream generated here; dialect is the dialect
// its events are in.
func New(cfg *Config, h Host, id, dialect string) *Log {
	return &Log{
		id:      id,
		plainID: !strings.ContainsAny(id, "\r\n\x00:"),
		cfg:     cfg,
		host:    h,
		created: time.Now(),
		dialect: dialect,
		state:   StateRunning,
	}
}

// AddRetained adds n to what the relay's budget counts of this log.
func (l *Log) AddRetained(n int64) { l.retained.Add(n) }

// TakeRetained returns what the relay's budget counts of this log, and
// counts nothing of it any more (the log is forgotten).
func (l *Log) TakeRetained() int64 { return l.retained.Swap(0) }

// GiveBackRetained takes up to n from what the budget counts of this log
// and returns how much it took: less when the log was forgotten meanwhile
// (its bytes already given back).
func (l *Log) GiveBackRetained(n int64) int64 {
	for {
		cur := l.retained.Load()
		m := min(cur, n)
		if l.retained.CompareAndSwap(cur, cur-m) {
			return m
		}
	}
}

// ID is the stream's id.
func (l *Log) ID() string { return l.id }

// Dialect is the dialect of the stream's events.
func (l *Log) Dialect() string { return l.dialect }

// Created is when the generation started.
func (l *Log) Created() time.Time { return l.created }

// Followed reports that another instance generates the stream.
func (l *Log) Followed() bool { return l.follow != nil }

// Unfollow stops following a followed stream.
func (l *Log) Unfollow() {
	if l.follow != nil {
		l.follow()
	}
}

// Gate makes readers get only the events the store holds (Commit); it is
// called before any reader can see the log.
func (l *Log) Gate() { l.gated = true }

// SetDropAfter sets the fault injection (before any reader sees the log).
func (l *Log) SetDropAfter(n int) { l.dropAfter = n }

// DropAfter is the fault injection's event count (0: none).
func (l *Log) DropAfter() int { return l.dropAfter }

// SetCancel sets what stops the generator.
func (l *Log) SetCancel(cancel func()) {
	l.mu.Lock()
	l.cancel = cancel
	l.mu.Unlock()
}

// Waker is a reader waiting for news; wake must not block. inline is true
// when the goroutine that appended the news calls it without the log's
// lock: the reader may then send, without blocking, on that goroutine.
type Waker interface {
	Wake(inline bool)
}

// wakeLocked wakes the readers waiting for news.
func (l *Log) wakeLocked() {
	for i, w := range l.waiters {
		w.Wake(false)
		l.waiters[i] = nil
	}
	l.waiters = l.waiters[:0]
}

// segment is a sealed part of a log: data starts at offset base.
type segment struct {
	base int
	data []byte
}

// segmentSize is the size past which the segment appended to is sealed
// and a new one begun.
const segmentSize = 1 << 20

// sizeLocked is the log's length in bytes.
func (l *Log) sizeLocked() int { return l.base + len(l.buf) }

// sealLocked begins a new segment when the one appended to is full:
// called between events, so that an event lies whole in one segment.
func (l *Log) sealLocked() {
	if len(l.buf) < segmentSize {
		return
	}
	l.sealed = append(l.sealed, segment{base: l.base, data: l.buf})
	l.base += len(l.buf)
	l.buf = make([]byte, 0, segmentSize)
}

// sliceLocked is the log's bytes from start up to at most end, within the
// segment holding start: the caller asks again for the rest.
func (l *Log) sliceLocked(start, end int) []byte {
	if start >= l.base {
		return l.buf[start-l.base : end-l.base]
	}
	i := sort.Search(len(l.sealed), func(i int) bool { return l.sealed[i].base > start }) - 1
	sg := l.sealed[i]
	return sg.data[start-sg.base : min(end, sg.base+len(sg.data))-sg.base]
}

// appendLocked encodes one event with the next id.
func (l *Log) appendLocked(event, data string) {
	l.sealLocked()
	seq := len(l.ends) + 1
	if event == "" && data != "" && l.plainID && strings.IndexByte(data, '\n') < 0 && strings.IndexByte(data, '\r') < 0 {
		// Every token: the bytes sse.AppendMessage writes for an id that
		// needs no cleaning and one data line, without building the id
		// string or scanning the fields for line ends twice (see
		// BenchmarkAppendToken; the fast path's share of the relay's CPU
		// per event shows in bench/load's profile).
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
	l.ends = append(l.ends, l.sizeLocked())
}

// eventOverhead is what an event costs besides its bytes in the buffer:
// its end offset.
const eventOverhead = 8

// retainStep is how much of the relay's budget a log takes ahead of its
// events, so that most events cost the budget nothing (no shared counter
// touched per token); what is left of it is given back at the end.
const retainStep = 4 << 10

// chargeLocked asks the relay's budget (Config.Retain) for the bytes the
// buffer grew by since it was was long, and one event's overhead, out of
// what the log took ahead when it can.
func (l *Log) chargeLocked(was int, force bool) bool {
	if l.cfg.Retain == nil {
		return true
	}
	n := len(l.buf) - was + eventOverhead
	if n <= l.credit {
		l.credit -= n
		return true
	}
	need := n - l.credit
	switch {
	case force:
		l.cfg.Retain(l, need, true)
	case l.cfg.Retain(l, need+retainStep, false):
		l.credit = retainStep
		return true
	case !l.cfg.Retain(l, need, false):
		return false
	}
	l.credit = 0
	return true
}

// giveBackLocked returns to the relay's budget what the log took ahead
// and did not use (at its end).
func (l *Log) giveBackLocked() {
	if l.credit > 0 && l.cfg.Retain != nil {
		l.cfg.Retain(l, -l.credit, true)
	}
	l.credit = 0
}

// Emit appends one generator event. It reports false once the stream has
// ended (the generator must stop) and enforces the event and length limits.
func (l *Log) Emit(event, data string, token bool) bool {
	return l.EmitAt(time.Now(), event, data, token, true)
}

// emitAt appends one event: EmitAt's work, or a held event's release.
func (l *Log) emitAt(now time.Time, event, data string, token, inline bool) bool {
	l.mu.Lock()
	if l.state != StateRunning {
		l.mu.Unlock()
		return false
	}
	cfg := l.cfg
	switch {
	case len(data) > cfg.MaxEventSize:
		l.finishLocked(StateFailed, "relay: event "+strconv.Itoa(len(l.ends)+1)+" of stream "+l.id+" is "+
			strconv.Itoa(len(data))+" bytes, over the limit of "+strconv.Itoa(cfg.MaxEventSize), true)
		l.mu.Unlock()
		return false
	case len(l.ends) >= cfg.MaxEvents:
		l.finishLocked(StateFailed, "relay: stream "+l.id+" reached the limit of "+strconv.Itoa(cfg.MaxEvents)+" events", true)
		l.mu.Unlock()
		return false
	case cfg.MaxBytes > 0 && l.sizeLocked()+len(data) > cfg.MaxBytes:
		l.finishLocked(StateFailed, "relay: stream "+l.id+" reached the limit of "+strconv.Itoa(cfg.MaxBytes)+" bytes", true)
		l.mu.Unlock()
		return false
	}
	l.sealLocked()
	was, wasEnds := len(l.buf), len(l.ends)
	l.appendLocked(event, data)
	if !l.chargeLocked(was, false) {
		// Nothing of the event was read: readers see only what the lock
		// lets them.
		l.buf, l.ends = l.buf[:was], l.ends[:wasEnds]
		l.finishLocked(StateFailed, "relay: stream "+l.id+" cannot grow: the relay's memory for streams is full", true)
		l.mu.Unlock()
		return false
	}
	if token {
		if l.tokens == 0 {
			l.host.Token(true, now.Sub(l.created))
		} else {
			l.host.Token(false, now.Sub(l.lastTok))
		}
		l.tokens++
		l.lastTok = now
	}
	if l.gated {
		// The readers are woken when the store holds the event.
		l.host.Touch(l)
		l.mu.Unlock()
		return true
	}
	// The readers are woken after the lock is released: a reader that is
	// caught up then sends the event from here, at once, if its socket
	// takes it without blocking (most do: no goroutine is started per
	// event), and else goes on on a goroutine of its own.
	var few [4]Waker
	woken := append(few[:0], l.waiters...)
	clear(l.waiters)
	l.waiters = l.waiters[:0]
	l.mu.Unlock()
	for _, w := range woken {
		w.Wake(inline)
	}
	return true
}

// end records the generator's end: End's work, or a held end's release.
func (l *Log) end(state wire.State, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state != StateRunning {
		return
	}
	l.cancel = nil // nothing left to cancel
	l.finishLocked(state, message, false)
}

// finishLocked records the end; with status it also appends the relay's
// trickle.status event so readers learn why.
func (l *Log) finishLocked(state wire.State, message string, status bool) {
	if l.state != StateRunning {
		return
	}
	if l.holder != nil {
		l.holder.Drop()
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
		// The state is the status word: stopped and failed are
		// wire.StatusStopped and wire.StatusFailed; cancelled (grace
		// expiry) is written as it is, for a resume's log.
		var u *store.Usage
		if state == StateStopped || state == StateCancelled {
			// What a Stop cost: what was generated up to it, which no
			// SDK reports after an abort.
			uu := l.usageLocked()
			u = &uu
		}
		l.sealLocked()
		was := len(l.buf)
		l.appendLocked(wire.StatusEvent, StatusData(wire.Status(state), message, u))
		l.buf = AppendProviderEnd(l.buf, l.dialect, wire.Status(state), message)
		l.ends[len(l.ends)-1] = l.sizeLocked()
		l.chargeLocked(was, true)
	}
	l.state, l.message, l.finished = state, message, time.Now()
	l.giveBackLocked()
	if l.endedCh != nil {
		close(l.endedCh)
	}
	if l.onEnd != nil {
		l.onEnd(l.spentLocked())
	}
	if l.grace != nil && l.follow == nil {
		l.grace.Stop()
		l.grace = nil
	}
	if l.gated {
		l.host.Touch(l)
	}
	l.wakeLocked()
	if l.follow != nil {
		if l.readers == 0 {
			l.dropLaterLocked()
		}
		return
	}
	l.host.Ended(l, state)
}

// Stop ends the stream at once (Stop, grace expiry, shutdown), cancelling
// the generator, with a terminal trickle.status event. It reports whether
// the stream was still running.
func (l *Log) Stop(state wire.State, message string) bool { return l.StopWith(state, message, true) }

// StopWith is Stop; status false ends the log without the terminal event,
// so that readers see a plain end they can resume from (shutdown).
func (l *Log) StopWith(state wire.State, message string, status bool) bool {
	if l.follow != nil {
		return false // generated elsewhere: the store stops it
	}
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

// Batch is what a reader gets from Read: the encoded events after its
// position, with their end offsets (absolute in the log's buffer) so that a
// WebSocket can send one message per event.
type Batch struct {
	Data []byte
	Ends []int
	Base int // offset in the log's buffer of Data[0]
}

// Read returns the events after pos (at most up to event number limit when
// limit > 0), the new position, and whether the stream is over with nothing
// left to read. When there is nothing yet, w is woken on the next news.
func (l *Log) Read(pos, limit int, w Waker) (b Batch, next int, done bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.ends)
	if l.gated && l.durable < n {
		n = l.durable
	}
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
		// array to the readers holding it. A batch ends with its
		// segment: the reader asks again for the rest.
		data := l.sliceLocked(start, l.ends[n-1])
		if end := start + len(data); end < l.ends[n-1] {
			n = pos + sort.SearchInts(l.ends[pos:n], end) + 1
		}
		return Batch{Data: data, Ends: l.ends[pos:n], Base: start}, n, false
	}
	if l.state != StateRunning && (!l.gated || l.durable >= len(l.ends)) {
		return Batch{}, pos, true
	}
	l.waiters = append(l.waiters, w)
	return Batch{}, pos, false
}

// TakeDrop returns the event number after which this reader's connection
// must be cut (0: never): only the first reader gets the fault.
func (l *Log) TakeDrop(pos int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropAfter == 0 || l.dropTaken || pos >= l.dropAfter {
		return 0
	}
	l.dropTaken = true
	return l.dropAfter
}

// Count is the number of events so far.
func (l *Log) Count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ends)
}

// Attach registers a reader; it cancels a pending grace expiry.
func (l *Log) Attach() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.readers++
	if l.grace != nil {
		l.grace.Stop()
		l.grace = nil
	}
}

// NoResume says the stream's client will not resume: when its last
// reader leaves, the generation is cancelled at once, with no grace
// period.
func (l *Log) NoResume() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noResume = true
}

// Detach unregisters a reader. When the last one leaves a running stream,
// the grace period starts: disconnect is not Stop, but nobody coming back
// within it cancels the generation. A stream whose client will not
// resume (NoResume) is cancelled at once.
func (l *Log) Detach() {
	l.mu.Lock()
	l.readers--
	if l.readers == 0 && l.follow == nil && l.state == StateRunning && l.noResume {
		l.mu.Unlock()
		if l.Stop(StateCancelled, "relay: the client disconnected and will not resume; generation cancelled") {
			l.cfg.Logger.Info("stream cancelled", "stream", l.id, "reason", "disconnect without resume", "events", l.Count())
		}
		return
	}
	defer l.mu.Unlock()
	if l.readers > 0 {
		return
	}
	if l.follow != nil {
		l.dropLaterLocked()
		return
	}
	if l.state != StateRunning {
		return
	}
	grace := l.cfg.Grace
	l.grace = time.AfterFunc(grace, func() {
		if l.host.Watched(l.id) {
			// Its client went on reading on another instance.
			l.mu.Lock()
			if l.readers == 0 && l.state == StateRunning {
				l.grace.Reset(grace)
			}
			l.mu.Unlock()
			return
		}
		if l.Stop(StateCancelled, "relay: no client for "+grace.String()+" after a disconnect; generation cancelled") {
			l.cfg.Logger.Info("stream cancelled", "stream", l.id, "reason", "disconnect grace expired", "grace", grace, "events", l.Count())
		}
	})
}

// Readers is the number of readers reading l now.
func (l *Log) Readers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.readers
}
