// The writers: the events of the streams generated here, into Redis in
// one pipeline per round trip.

package redisstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/trickle-dev/trickle/relay/store"
)

// storeWriter appends the events of its share of the streams generated
// here: everything new since its last round trip goes in one pipeline, so
// a tick of the simulated clock (or of many upstreams) that emits events
// on a thousand streams costs one round trip, not a thousand.
type storeWriter struct {
	st    *Store
	mu    sync.Mutex
	list  map[store.Stream]struct{} // the streams with news
	spare map[store.Stream]struct{}
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
	l     store.Stream
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
	if w.spare == nil {
		w.spare = map[store.Stream]struct{}{}
	}
	w.list, w.spare = w.spare, logs
	w.mu.Unlock()
	if len(logs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p := st.rdb.Pipeline()
	cfg := &st.cfg
	jobs := make([]writeJob, 0, len(logs))
	for l := range logs {
		u, ok := l.Unstored()
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
				MaxLen: int64(cfg.MaxEvents) + 2, Approx: true}))
		}
		if j.ended && len(u.Events) == 0 {
			j.adds = append(j.adds, p.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: strconv.Itoa(j.upto) + "-1", Values: endFields(u)}))
		}
		if j.ended {
			p.PExpire(ctx, key, cfg.Retention)
			p.PExpire(ctx, metaKey(l.ID()), 2*cfg.Retention)
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
			j.l.Stored(j.upto)
			if j.stop != nil && j.stop.Val() > 0 {
				st.h.StopLocal(j.l.ID(), "store flag")
			}
		case failed != nil && strings.Contains(failed.Error(), "equal or smaller"):
			j.l.Lost("relay: another relay ended stream " + j.l.ID() + " in the stream store (this relay lost its lease: it was cut off from Redis for over " +
				st.lease.String() + "); send the request again")
		default:
			if failed == nil {
				failed = j.stop.Err()
			}
			j.l.Lost(st.lostMessage(j.l.ID(), failed))
		}
	}
}

func (st *Store) lostMessage(id string, err error) string {
	return "relay: the stream store (" + st.String() + ") failed while writing stream " + id + ": " + err.Error() + "; send the request again"
}

// isConnError tells a Redis that cannot be reached from a command Redis
// refused.
func isConnError(err error) bool {
	var re redis.Error
	return !errors.As(err, &re) || strings.HasPrefix(err.Error(), "LOADING")
}

func endFields(u store.Unstored) []any {
	uc := "0"
	if u.UpstreamCancelled {
		uc = "1"
	}
	est := "0"
	if u.Usage.Estimated {
		est = "1"
	}
	return []any{"end", u.State, "msg", u.Message, "uc", uc, "tok", strconv.Itoa(u.Usage.CompletionTokens), "est", est}
}
