// The Redis Streams store: a fleet of relays sharing one Redis resumes and
// stops any stream on any instance.

package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/stream"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
)

// Keys of one stream. They share the hash tag {id}, so that they live on
// one Redis Cluster node and a pipeline about one stream stays on it.
//
//   - log: a Redis stream, one entry per SSE event with the explicit id
//     <seq>-0 (field e: the encoded event, exactly the bytes clients get).
//     The entry that ends the stream carries end (the final state), msg and
//     uc (upstream cancelled); when no event comes with the end, it is the
//     entry <last seq>-1. An explicit id makes a second writer's append
//     fail instead of interleaving.
//   - meta: a hash (dialect, created, owner).
//   - lease: present while the instance generating the stream is alive.
//   - stop: the durable Stop flag, checked by the owner as it writes.
//   - watch: present while clients read the stream on other instances.
func logKey(id string) string   { return "trickle:{" + id + "}:log" }
func metaKey(id string) string  { return "trickle:{" + id + "}:meta" }
func leaseKey(id string) string { return "trickle:{" + id + "}:lease" }
func stopKey(id string) string  { return "trickle:{" + id + "}:stop" }
func watchKey(id string) string { return "trickle:{" + id + "}:watch" }

// cancelChannel is the pub/sub channel every instance listens on for Stop.
const cancelChannel = "trickle:cancel"

// RedisStore keeps stream logs in Redis Streams at url
// (redis://[:password@]HOST:PORT/DB, or rediss:// for TLS). Nothing is
// dialled before the server starts; a Redis that cannot be reached makes
// /healthz report not ready and new streams get 503 until it can.
func RedisStore(url string) (Store, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, &OptionError{Option: "RedisStore", Value: fmt.Sprintf("%q", url), Reason: "not a redis:// URL: " + err.Error()}
	}
	// RESP2: no push notifications (and no goroutine handling them); no
	// CLIENT SETINFO on connect; commands fail fast when Redis is down
	// rather than retrying behind a request.
	opts.Protocol = 2
	opts.DisableIdentity = true
	opts.MaxRetries = -1
	opts.DialTimeout = time.Second
	opts.ReadTimeout = 2 * time.Second
	opts.WriteTimeout = 2 * time.Second
	opts.PoolTimeout = 2 * time.Second
	opts.ContextTimeoutEnabled = true
	return &redisStore{opts: opts, addr: opts.Addr}, nil
}

type redisStore struct {
	opts *redis.Options
	addr string
	s    *Server
	rdb  *redis.Client // commands and pipelines
	// tail holds the blocking reads: one connection per stream followed
	// here (not per client: clients are fanned out from the local log).
	tail  *redis.Client
	ps    *redis.PubSub
	lease time.Duration
	block time.Duration // bound of one XREAD BLOCK

	healthy atomic.Bool
	errMu   sync.Mutex
	lastErr error

	writers []*storeWriter
	nextW   atomic.Uint32
	ctx     context.Context // cancelled by close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closed  atomic.Bool
	crashed atomic.Bool // tests: the process died (nothing more is written)
}

func (st *redisStore) String() string { return "redis at " + st.addr }

func (st *redisStore) bind(s *Server) error {
	if st.s != nil {
		return &OptionError{Option: "WithStore", Value: st, Reason: "a store serves one server"}
	}
	st.s = s
	// The client's own messages (reconnect attempts while Redis is down)
	// go to the relay's log at debug level: the relay says what matters
	// (store unavailable, reachable again) once, at its own level. The
	// client's logger is global: the first relay's log gets them.
	setClientLog.Do(func() { redis.SetLogger(clientLog{s.log}) })
	st.lease = s.cfg.lease
	st.block = min(max(st.lease/3, 10*time.Millisecond), time.Second)
	if st.opts.PoolSize == 0 {
		// Requests starting streams, the writers, the keeper, the lease
		// and grace checks share it: a burst of new streams must not wait
		// for a connection (Redis holds thousands).
		st.opts.PoolSize = 256
	}
	st.rdb = redis.NewClient(st.opts)
	topts := *st.opts
	topts.PoolSize = s.cfg.maxStreams + 16 // dialled lazily
	topts.ReadTimeout = st.block + 2*time.Second
	st.tail = redis.NewClient(&topts)
	st.ctx, st.cancel = context.WithCancel(context.Background())

	ctx, cancel := context.WithTimeout(st.ctx, time.Second)
	err := st.rdb.Ping(ctx).Err()
	cancel()
	if err != nil {
		st.markDown(err)
		s.log.Error("stream store unavailable at start; not ready until it answers", "store", st.String(), "err", err)
	} else {
		st.healthy.Store(true)
	}

	for range runtime.GOMAXPROCS(0) {
		w := &storeWriter{st: st, kick: make(chan struct{}, 1)}
		st.writers = append(st.writers, w)
		st.wg.Add(1)
		go w.run()
	}
	st.wg.Add(2)
	go st.keep()
	st.ps = st.rdb.Subscribe(st.ctx, cancelChannel)
	go st.listen()
	return nil
}

func (st *redisStore) durable() bool { return true }

func (st *redisStore) ready() error {
	if st.healthy.Load() {
		return nil
	}
	st.errMu.Lock()
	defer st.errMu.Unlock()
	return fmt.Errorf("%w (%s): %v", ErrStoreUnavailable, st, st.lastErr)
}

// markDown records that Redis failed; the first failure is logged.
func (st *redisStore) markDown(err error) {
	st.errMu.Lock()
	st.lastErr = err
	st.errMu.Unlock()
	if st.healthy.Swap(false) && !st.closed.Load() {
		st.s.log.Error("stream store unavailable", "store", st.String(), "err", err)
	}
}

func (st *redisStore) markUp() {
	if !st.healthy.Swap(true) {
		st.s.log.Info("stream store reachable again", "store", st.String())
	}
}

// unavailable wraps a failed call to Redis. Readiness is the keeper's to
// decide (one slow call on a loaded machine must not turn a relay away).
func (st *redisStore) unavailable(err error) error {
	return fmt.Errorf("%w (%s): %w", ErrStoreUnavailable, st, err)
}

func (st *redisStore) begin(ctx context.Context, l *streamlog.Log) error {
	// No check of ready() first: readiness is for the load balancer
	// (/healthz). A Redis that is down refuses the connection at once; one
	// that is only slow to answer the keeper (a loaded machine) still
	// takes the stream.
	p := st.rdb.Pipeline()
	p.HSet(ctx, metaKey(l.ID()), "dialect", l.Dialect(), "created", strconv.FormatInt(l.Created().UnixNano(), 10), "owner", st.s.instance)
	p.PExpire(ctx, metaKey(l.ID()), 2*st.s.cfg.retention+st.lease)
	p.Set(ctx, leaseKey(l.ID()), st.s.instance, st.lease)
	if _, err := p.Exec(ctx); err != nil {
		return st.unavailable(err)
	}
	l.Slot.Shard = int(st.nextW.Add(1) % uint32(len(st.writers)))
	return nil
}

func (st *redisStore) touch(l *streamlog.Log) {
	if l.LostLocked() {
		return
	}
	w := st.writers[l.Slot.Shard]
	w.mu.Lock()
	if !l.Slot.Queued {
		l.Slot.Queued = true
		w.list = append(w.list, l)
	}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// storeWriter appends the events of its share of the streams generated
// here: everything new since its last round trip goes in one pipeline, so
// a tick of the simulated clock (or of many upstreams) that emits events
// on a thousand streams costs one round trip, not a thousand.
type storeWriter struct {
	st    *redisStore
	mu    sync.Mutex
	list  []*streamlog.Log
	spare []*streamlog.Log
	kick  chan struct{}
}

func (w *storeWriter) run() {
	defer w.st.wg.Done()
	for {
		select {
		case <-w.kick:
			w.flush()
		case <-w.st.ctx.Done():
			w.flush() // the ends written by Shutdown
			return
		}
	}
}

// writeJob is what one flush writes for one stream.
type writeJob struct {
	l     *streamlog.Log
	upto  int
	adds  []*redis.StringCmd
	stop  *redis.IntCmd
	ended bool
}

func (w *storeWriter) flush() {
	st := w.st
	if st.crashed.Load() {
		return
	}
	w.mu.Lock()
	logs := w.list
	w.list, w.spare = w.spare[:0], logs
	for _, l := range logs {
		l.Slot.Queued = false
	}
	w.mu.Unlock()
	if len(logs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	p := st.rdb.Pipeline()
	cfg := &st.s.cfg
	jobs := make([]writeJob, 0, len(logs))
	for _, l := range logs {
		u, ok := l.TakeUnstored()
		if !ok {
			continue
		}
		j := writeJob{l: l, upto: u.First - 1 + len(u.Events), ended: u.Ended}
		key := logKey(l.ID())
		for i, ev := range u.Events {
			seq := u.First + i
			vals := []any{"e", ev}
			if j.ended && seq == j.upto {
				vals = append(vals, endFields(u)...)
			}
			j.adds = append(j.adds, p.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: strconv.Itoa(seq) + "-0", Values: vals,
				MaxLen: int64(cfg.maxEvents) + 2, Approx: true}))
		}
		if j.ended && len(u.Events) == 0 {
			j.adds = append(j.adds, p.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: strconv.Itoa(j.upto) + "-1", Values: endFields(u)}))
		}
		if j.ended {
			p.PExpire(ctx, key, cfg.retention)
			p.PExpire(ctx, metaKey(l.ID()), 2*cfg.retention)
			p.Del(ctx, leaseKey(l.ID()))
		} else if u.Running {
			// The Stop flag, in case its pub/sub message was lost.
			j.stop = p.Exists(ctx, stopKey(l.ID()))
		}
		jobs = append(jobs, j)
	}
	clear(logs)
	p.Exec(ctx) // each command's error is looked at below
	for _, j := range jobs {
		var failed error
		for _, c := range j.adds {
			if c.Err() != nil {
				failed = c.Err()
				break
			}
		}
		switch {
		case failed == nil && (j.stop == nil || j.stop.Err() == nil):
			j.l.Commit(j.upto)
			if j.stop != nil && j.stop.Val() > 0 {
				st.s.stop(j.l, "store flag")
			}
		case failed != nil && strings.Contains(failed.Error(), "equal or smaller"):
			j.l.StoreFailed("relay: another relay ended stream " + j.l.ID() + " in the stream store (this relay lost its lease: it was cut off from Redis for over " +
				st.lease.String() + "); send the request again")
		default:
			if failed == nil {
				failed = j.stop.Err()
			}
			j.l.StoreFailed(st.lostMessage(j.l.ID(), failed))
		}
	}
}

func (st *redisStore) lostMessage(id string, err error) string {
	return "relay: the stream store (" + st.String() + ") failed while writing stream " + id + ": " + err.Error() + "; send the request again"
}

// isConnError tells a Redis that cannot be reached from a command Redis
// refused.
func isConnError(err error) bool {
	var re redis.Error
	return !errors.As(err, &re) || strings.HasPrefix(err.Error(), "LOADING")
}

func endFields(u streamlog.Unstored) []any {
	uc := "0"
	if u.UpstreamCancelled {
		uc = "1"
	}
	return []any{"end", u.State, "msg", u.Message, "uc", uc}
}

// keep renews the leases of the streams generated here and checks that
// Redis answers; when it does not, the streams generated here end with a
// terminal error (their readers elsewhere could not follow them anyway).
func (st *redisStore) keep() {
	defer st.wg.Done()
	t := time.NewTicker(st.lease / 3)
	defer t.Stop()
	renewed := time.Now() // the leases were set by begin
	for {
		select {
		case <-st.ctx.Done():
			return
		case <-t.C:
		}
		owned := st.s.generatedHere()
		// One slow answer (a loaded machine) is no reason to give up:
		// the leases still run until renewed+lease.
		ctx, cancel := context.WithDeadline(st.ctx, renewed.Add(st.lease))
		p := st.rdb.Pipeline()
		p.Ping(ctx)
		cfg := &st.s.cfg
		for _, l := range owned {
			p.PExpire(ctx, leaseKey(l.ID()), st.lease)
			p.PExpire(ctx, logKey(l.ID()), cfg.retention+st.lease)
			p.PExpire(ctx, metaKey(l.ID()), 2*cfg.retention+st.lease)
		}
		_, err := p.Exec(ctx)
		cancel()
		if st.ctx.Err() != nil {
			return
		}
		if err == nil {
			renewed = time.Now()
			st.markUp()
			continue
		}
		st.markDown(err) // not ready: new streams get 503
		if time.Since(renewed) < st.lease {
			continue // the leases still run: try again at the next tick
		}
		// The leases have lapsed: readers elsewhere are told the streams
		// ended; so are the readers here.
		for _, l := range owned {
			l.StoreFailed(st.lostMessage(l.ID(), err))
		}
		renewed = time.Now() // new streams start with a fresh lease
	}
}

// generatedHere lists the running streams this instance generates and
// keeps in the store.
func (s *Server) generatedHere() []*streamlog.Log {
	s.mu.Lock()
	var all []*streamlog.Log
	for _, l := range s.streams {
		if !l.Followed() { // set before the log is listed, never changed
			all = append(all, l)
		}
	}
	s.mu.Unlock()
	// A log's state is read under its own lock, and never with the
	// server's held: a stream that ends takes the server's lock with its
	// own held (streamEnded).
	out := all[:0]
	for _, l := range all {
		if l.StoredRunning() {
			out = append(out, l)
		}
	}
	return out
}

// listen stops the streams generated here that another instance was asked
// to stop.
func (st *redisStore) listen() {
	defer st.wg.Done()
	for m := range st.ps.Channel() {
		if l := st.s.lookup(m.Payload); l != nil && !l.Followed() {
			st.s.stop(l, "another relay")
		}
	}
}

func (st *redisStore) requestStop(ctx context.Context, id string) error {
	p := st.rdb.Pipeline()
	p.Set(ctx, stopKey(id), "1", st.s.cfg.retention+st.lease)
	p.Publish(ctx, cancelChannel, id)
	if _, err := p.Exec(ctx); err != nil {
		return st.unavailable(err)
	}
	return nil
}

func (st *redisStore) watched(id string) bool {
	ctx, cancel := context.WithTimeout(st.ctx, st.block)
	defer cancel()
	n, err := st.rdb.Exists(ctx, watchKey(id)).Result()
	return err == nil && n > 0
}

var setClientLog sync.Once

// clientLog hands go-redis's messages to slog.
type clientLog struct{ log *slog.Logger }

func (c clientLog) Printf(ctx context.Context, format string, v ...any) {
	c.log.DebugContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}

func (st *redisStore) open(ctx context.Context, id string) (*streamlog.Log, error) {
	p := st.rdb.Pipeline()
	meta := p.HGetAll(ctx, metaKey(id))
	entries := p.XRange(ctx, logKey(id), "-", "+")
	lease := p.Exists(ctx, leaseKey(id))
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, st.unavailable(err)
	}
	m := meta.Val()
	if len(m) == 0 {
		return nil, errUnknown
	}
	msgs := entries.Val()
	if len(msgs) == 0 && lease.Val() == 0 {
		return nil, errExpired
	}
	created := time.Now()
	if ns, err := strconv.ParseInt(m["created"], 10, 64); err == nil {
		created = time.Unix(0, ns)
	}
	fctx, cancel := context.WithCancel(st.ctx)
	l := st.s.newFollowed(id, m["dialect"], created, cancel)
	last := "0-0"
	if len(msgs) > 0 {
		if seq, sub, _ := entryID(msgs[0].ID); seq > 1 || seq == 1 && sub != 0 {
			cancel()
			return nil, errTrimmed
		}
	}
	for _, msg := range msgs {
		ended, err := applyEntry(l, msg)
		if err != nil {
			cancel()
			return nil, err
		}
		last = msg.ID
		if ended {
			cancel()
			return l, nil
		}
	}
	st.wg.Add(1)
	go st.followLoop(fctx, l, last)
	return l, nil
}

func entryID(id string) (seq, sub int, err error) {
	a, b, _ := strings.Cut(id, "-")
	if seq, err = strconv.Atoi(a); err == nil {
		sub, err = strconv.Atoi(b)
	}
	return seq, sub, err
}

// applyEntry adds one store entry to a followed log; ended reports the
// stream's terminal entry.
func applyEntry(l *streamlog.Log, m redis.XMessage) (ended bool, err error) {
	seq, sub, err := entryID(m.ID)
	if err != nil {
		return false, fmt.Errorf("relay: stream %s: entry id %q in the store is not <seq>-<n>", l.ID(), m.ID)
	}
	if e, ok := m.Values["e"].(string); ok && sub == 0 {
		if err := l.AppendFollowed(seq, []byte(e)); err != nil {
			return false, err
		}
	}
	state, ok := m.Values["end"].(string)
	if !ok {
		return false, nil
	}
	msg, _ := m.Values["msg"].(string)
	uc, _ := m.Values["uc"].(string)
	l.EndFollowed(state, msg, uc == "1")
	return true, nil
}

// followLoop is the one reader of a stream on this instance: replay and
// live tail are the same XREAD BLOCK after the last entry, in a loop
// bounded by the block time, so that it notices in time that the stream's
// generator died (its lease lapsed) or that it is no longer needed.
func (st *redisStore) followLoop(ctx context.Context, l *streamlog.Log, last string) {
	defer st.wg.Done()
	var watched time.Time
	for ctx.Err() == nil {
		if now := time.Now(); l.Readers() > 0 && now.Sub(watched) >= st.block {
			// Tell the generating instance a client reads here, so its
			// disconnect grace does not cancel the answer.
			watched = now
			wctx, cancel := context.WithTimeout(ctx, st.block)
			st.rdb.Set(wctx, watchKey(l.ID()), "1", max(st.s.cfg.grace, 3*st.block))
			cancel()
		}
		res, err := st.tail.XRead(ctx, &redis.XReadArgs{Streams: []string{logKey(l.ID()), last}, Count: 1024, Block: st.block}).Result()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, redis.Nil) {
			if err := st.checkLease(ctx, l); err != nil {
				l.StoreFailed(st.followLost(l.ID(), err))
				return
			}
			continue
		}
		if err != nil {
			l.StoreFailed(st.followLost(l.ID(), err))
			return
		}
		for _, xs := range res {
			for _, msg := range xs.Messages {
				ended, err := applyEntry(l, msg)
				if err != nil {
					l.StoreFailed(err.Error() + "; send the request again")
					return
				}
				last = msg.ID
				if ended {
					return
				}
			}
		}
	}
}

func (st *redisStore) followLost(id string, err error) string {
	return "relay: lost the stream store (" + st.String() + ") while following stream " + id + ": " + err.Error() + "; send the request again"
}

// lapsedMessage is the terminal error of a stream whose generator died.
const lapsedMessage = "the relay generating this answer stopped"

// checkLease ends the stream in the store when its generator's lease has
// lapsed without a terminal entry: the one entry <next seq>-0 holds the
// error event and the end, so it is written whole or not at all, and it
// fails when the generator (or another follower) wrote that id first.
func (st *redisStore) checkLease(ctx context.Context, l *streamlog.Log) error {
	n, err := st.rdb.Exists(ctx, leaseKey(l.ID())).Result()
	if err != nil || n > 0 {
		return err
	}
	seq := l.Count() + 1
	msg := "relay: " + lapsedMessage + " (no news from it for over " + st.lease.String() + "); send the request again"
	ev := sse.AppendMessage(nil, sse.Message{ID: l.ID() + ":" + strconv.Itoa(seq), Event: StatusEvent, Data: statusData(stream.RelayFailed, msg)})
	err = st.rdb.XAdd(ctx, &redis.XAddArgs{Stream: logKey(l.ID()), ID: strconv.Itoa(seq) + "-0",
		Values: []any{"e", ev, "end", streamlog.StateFailed, "msg", msg, "uc", "0"}}).Err()
	if err != nil && !isConnError(err) {
		return nil // written first by someone else: the next read gets it
	}
	if err == nil {
		st.rdb.PExpire(ctx, logKey(l.ID()), st.s.cfg.retention)
		st.s.log.Warn("stream ended: its generator's lease lapsed", "stream", l.ID(), "events", seq-1)
	}
	return err
}

func (st *redisStore) close(ctx context.Context) {
	if st.closed.Swap(true) {
		return
	}
	st.cancel()
	st.ps.Close()
	st.tail.Close() // ends the blocking reads at once
	done := make(chan struct{})
	go func() { st.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		st.s.log.Warn("stream store: background work still running at close", "store", st.String())
	}
	st.rdb.Close()
}
