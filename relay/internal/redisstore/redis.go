// Package redisstore is the relay's Redis Streams store (store.Store): a
// fleet of relays sharing one Redis resumes and stops any stream on any
// instance (docs/fleet.md). It stores the encoded events the relay hands
// it, as they are, and never encodes one but the terminal event of a
// stream whose generator died.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trickle-dev/trickle/relay/internal/limit"
	"github.com/trickle-dev/trickle/relay/store"
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
//   - meta: a hash (dialect, created, owner: the instance generating it,
//     identity: the identity that made it, with auth on).
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

// callTimeout bounds a request's own calls to Redis.
const callTimeout = 2 * time.Second

// New keeps stream logs in Redis Streams at url
// (redis://[:password@]HOST:PORT/DB, or rediss:// for TLS). Nothing is
// dialled before Bind; a Redis that cannot be reached makes Ready fail
// until it can.
func New(url string) (*Store, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
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
	return &Store{opts: opts, addr: opts.Addr}, nil
}

// Store is the Redis Streams store.
type Store struct {
	opts *redis.Options
	addr string
	h    store.Host
	cfg  store.Settings
	log  *slog.Logger
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
	ctx     context.Context // cancelled by close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closed  atomic.Bool
	crashed atomic.Bool // tests: the process died (nothing more is written)
}

func (st *Store) String() string { return "redis at " + st.addr }

// Client is the store's client of its Redis, once bound: the relay's
// limits count there too.
func (st *Store) Client() *redis.Client { return st.rdb }

// Limits counts the relay's limits in this Redis (store.LimitStore):
// every relay using it shares them. It is called after Bind.
func (st *Store) Limits() store.Counter { return limit.NewRedis(st.rdb, st.cfg.Lease, st.log) }

// Bind connects the store to its relay and starts the writers, the lease
// keeper and the Stop listener.
func (st *Store) Bind(h store.Host) error {
	if st.h != nil {
		return errors.New("a store serves one relay")
	}
	st.h, st.cfg, st.log = h, h.Settings(), h.Logger()
	// The client's own messages (reconnect attempts while Redis is down)
	// go to the relay's log at debug level: the relay says what matters
	// (store unavailable, reachable again) once, at its own level. The
	// client's logger is global: the first relay's log gets them.
	setClientLog.Do(func() { redis.SetLogger(clientLog{st.log}) })
	st.lease = st.cfg.Lease
	st.block = min(max(st.lease/3, 10*time.Millisecond), time.Second)
	if st.opts.PoolSize == 0 {
		// Requests starting streams, the writers, the keeper, the lease
		// and grace checks share it: a burst of new streams must not wait
		// for a connection (Redis holds thousands).
		st.opts.PoolSize = 256
	}
	st.rdb = redis.NewClient(st.opts)
	topts := *st.opts
	topts.PoolSize = st.cfg.MaxStreams + 16 // dialled lazily
	topts.ReadTimeout = st.block + 2*time.Second
	st.tail = redis.NewClient(&topts)
	st.ctx, st.cancel = context.WithCancel(context.Background())

	ctx, cancel := context.WithTimeout(st.ctx, time.Second)
	err := st.rdb.Ping(ctx).Err()
	cancel()
	if err != nil {
		st.markDown(err)
		st.log.Error("stream store unavailable at start; not ready until it answers", "store", st.String(), "err", err)
	} else {
		st.healthy.Store(true)
	}

	for range runtime.GOMAXPROCS(0) {
		w := &storeWriter{st: st, kick: make(chan struct{}, 1), list: map[store.Stream]struct{}{}}
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

// Durable is true: readers get only what Redis holds.
func (st *Store) Durable() bool { return true }

// Ready is nil while Redis answers.
func (st *Store) Ready() error {
	if st.healthy.Load() {
		return nil
	}
	st.errMu.Lock()
	defer st.errMu.Unlock()
	return fmt.Errorf("%w (%s): %v", store.ErrUnavailable, st, st.lastErr)
}

// markDown records that Redis failed; the first failure is logged.
func (st *Store) markDown(err error) {
	st.errMu.Lock()
	st.lastErr = err
	st.errMu.Unlock()
	if st.healthy.Swap(false) && !st.closed.Load() {
		st.log.Error("stream store unavailable", "store", st.String(), "err", err)
	}
}

func (st *Store) markUp() {
	if !st.healthy.Swap(true) {
		st.log.Info("stream store reachable again", "store", st.String())
	}
}

// unavailable wraps a failed call to Redis. Readiness is the keeper's to
// decide (one slow call on a loaded machine must not turn a relay away).
func (st *Store) unavailable(err error) error {
	return fmt.Errorf("%w (%s): %w", store.ErrUnavailable, st, err)
}

// Begin records the stream's meta and takes its lease.
func (st *Store) Begin(ctx context.Context, l store.Stream) error {
	// No check of ready() first: readiness is for the load balancer
	// (/healthz). A Redis that is down refuses the connection at once; one
	// that is only slow to answer the keeper (a loaded machine) still
	// takes the stream.
	p := st.rdb.Pipeline()
	p.HSet(ctx, metaKey(l.ID()), "dialect", l.Dialect(), "created", strconv.FormatInt(l.Created().UnixNano(), 10), "owner", st.h.Instance())
	if o, ok := l.(store.Owned); ok && o.Owner() != "" {
		p.HSet(ctx, metaKey(l.ID()), "identity", o.Owner())
	}
	p.PExpire(ctx, metaKey(l.ID()), 2*st.cfg.Retention+st.lease)
	p.Set(ctx, leaseKey(l.ID()), st.h.Instance(), st.lease)
	if _, err := p.Exec(ctx); err != nil {
		return st.unavailable(err)
	}
	return nil
}

// Append queues l for its writer (the one its id hashes to).
func (st *Store) Append(l store.Stream) {
	h := fnv.New32a()
	io.WriteString(h, l.ID())
	w := st.writers[h.Sum32()%uint32(len(st.writers))]
	w.mu.Lock()
	w.list[l] = struct{}{}
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// keep renews the leases of the streams generated here and checks that
// Redis answers; when it does not, the streams generated here end with a
// terminal error (their readers elsewhere could not follow them anyway).
func (st *Store) keep() {
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
		owned := st.h.Generated()
		// One slow answer (a loaded machine) is no reason to give up:
		// the leases still run until renewed+lease.
		ctx, cancel := context.WithDeadline(st.ctx, renewed.Add(st.lease))
		p := st.rdb.Pipeline()
		p.Ping(ctx)
		cfg := &st.cfg
		for _, l := range owned {
			p.PExpire(ctx, leaseKey(l.ID()), st.lease)
			p.PExpire(ctx, logKey(l.ID()), cfg.Retention+st.lease)
			p.PExpire(ctx, metaKey(l.ID()), 2*cfg.Retention+st.lease)
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
			l.Lost(st.lostMessage(l.ID(), err))
		}
		renewed = time.Now() // new streams start with a fresh lease
	}
}

// listen stops the streams generated here that another instance was asked
// to stop.
func (st *Store) listen() {
	defer st.wg.Done()
	for m := range st.ps.Channel() {
		st.h.StopLocal(m.Payload, "another relay")
	}
}

// Stop sets the stream's Stop flag and tells every relay.
func (st *Store) Stop(ctx context.Context, id string) error {
	p := st.rdb.Pipeline()
	p.Set(ctx, stopKey(id), "1", st.cfg.Retention+st.lease)
	p.Publish(ctx, cancelChannel, id)
	if _, err := p.Exec(ctx); err != nil {
		return st.unavailable(err)
	}
	return nil
}

// Watched reports that a relay following the stream has readers.
func (st *Store) Watched(id string) bool {
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

// Close ends the background work after a last write of what is pending.
func (st *Store) Close(ctx context.Context) {
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
		st.log.Warn("stream store: background work still running at close", "store", st.String())
	}
	st.rdb.Close()
}

// Crash makes the store behave as if its process had died: it writes
// nothing more (no events, no ends, no lease renewal). For tests.
func (st *Store) Crash() {
	st.crashed.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st.Close(ctx)
}
