// Following a stream another relay generates: the replay and the live
// tail, and the end written for a generator whose lease lapsed.

package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trickle-dev/trickle/relay/internal/streamlog"
	"github.com/trickle-dev/trickle/relay/store"
	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wire"
)

// Follow replays the stream from Redis and follows it live.
func (st *Store) Follow(ctx context.Context, id string) (store.Follower, error) {
	p := st.rdb.Pipeline()
	meta := p.HGetAll(ctx, metaKey(id))
	entries := p.XRange(ctx, logKey(id), "-", "+")
	lease := p.Exists(ctx, leaseKey(id))
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, st.unavailable(err)
	}
	m := meta.Val()
	if len(m) == 0 {
		return nil, store.ErrUnknown
	}
	msgs := entries.Val()
	if len(msgs) == 0 && lease.Val() == 0 {
		return nil, store.ErrExpired
	}
	created := time.Now()
	if ns, err := strconv.ParseInt(m["created"], 10, 64); err == nil {
		created = time.Unix(0, ns)
	}
	fctx, cancel := context.WithCancel(st.ctx)
	l := st.h.NewFollower(id, m["dialect"], created, cancel)
	if o, ok := l.(store.OwnedFollower); ok && m["identity"] != "" {
		o.SetOwner(m["identity"])
	}
	last := "0-0"
	if len(msgs) > 0 {
		if seq, sub, _ := entryID(msgs[0].ID); seq > 1 || seq == 1 && sub != 0 {
			cancel()
			return nil, store.ErrTrimmed
		}
	}
	for _, msg := range msgs {
		ended, err := applyEntry(l, id, msg)
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
	go st.followLoop(fctx, l, id, m["dialect"], last)
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
func applyEntry(l store.Follower, id string, m redis.XMessage) (ended bool, err error) {
	seq, sub, err := entryID(m.ID)
	if err != nil {
		return false, fmt.Errorf("relay: stream %s: entry id %q in the store is not <seq>-<n>", id, m.ID)
	}
	if e, ok := m.Values["e"].(string); ok && sub == 0 {
		if err := l.Append(seq, []byte(e)); err != nil {
			return false, err
		}
	}
	state, ok := m.Values["end"].(string)
	if !ok {
		return false, nil
	}
	msg, _ := m.Values["msg"].(string)
	uc, _ := m.Values["uc"].(string)
	tok, _ := m.Values["tok"].(string)
	est, _ := m.Values["est"].(string)
	n, _ := strconv.Atoi(tok) // absent (an older relay's end): 0
	l.End(state, msg, uc == "1", store.Usage{CompletionTokens: n, Estimated: est == "1"})
	return true, nil
}

// followLoop is the one reader of a stream on this instance: replay and
// live tail are the same XREAD BLOCK after the last entry, in a loop
// bounded by the block time, so that it notices in time that the stream's
// generator died (its lease lapsed) or that it is no longer needed.
func (st *Store) followLoop(ctx context.Context, l store.Follower, id, dialect, last string) {
	defer st.wg.Done()
	var watched time.Time
	for ctx.Err() == nil {
		if now := time.Now(); l.Readers() > 0 && now.Sub(watched) >= st.block {
			// Tell the generating instance a client reads here, so its
			// disconnect grace does not cancel the answer.
			watched = now
			wctx, cancel := context.WithTimeout(ctx, st.block)
			st.rdb.Set(wctx, watchKey(id), "1", max(st.cfg.Grace, 3*st.block))
			cancel()
		}
		res, err := st.tail.XRead(ctx, &redis.XReadArgs{Streams: []string{logKey(id), last}, Count: 1024, Block: st.block}).Result()
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, redis.Nil) {
			if err := st.checkLease(ctx, l, id, dialect); err != nil {
				l.Lost(st.followLost(id, err))
				return
			}
			continue
		}
		if err != nil {
			l.Lost(st.followLost(id, err))
			return
		}
		for _, xs := range res {
			for _, msg := range xs.Messages {
				ended, err := applyEntry(l, id, msg)
				if err != nil {
					l.Lost(err.Error() + "; send the request again")
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

func (st *Store) followLost(id string, err error) string {
	return "relay: lost the stream store (" + st.String() + ") while following stream " + id + ": " + err.Error() + "; send the request again"
}

// lapsedMessage is the terminal error of a stream whose generator died.
const lapsedMessage = "the relay generating this answer stopped"

// checkLease ends the stream in the store when its generator's lease has
// lapsed without a terminal entry: the one entry <next seq>-0 holds the
// error event and the end, so it is written whole or not at all, and it
// fails when the generator (or another follower) wrote that id first.
func (st *Store) checkLease(ctx context.Context, l store.Follower, id, dialect string) error {
	n, err := st.rdb.Exists(ctx, leaseKey(id)).Result()
	if err != nil || n > 0 {
		return err
	}
	seq := l.Events() + 1
	msg := "relay: " + lapsedMessage + " (no news from it for over " + st.lease.String() + "); send the request again"
	ev := sse.AppendMessage(nil, sse.Message{ID: id + ":" + strconv.Itoa(seq), Event: wire.StatusEvent, Data: streamlog.StatusData(wire.StatusFailed, msg, nil)})
	ev = streamlog.AppendProviderEnd(ev, dialect, wire.StatusFailed, msg)
	err = st.rdb.XAdd(ctx, &redis.XAddArgs{Stream: logKey(id), ID: strconv.Itoa(seq) + "-0",
		Values: []any{"e", ev, "end", string(wire.StateFailed), "msg", msg, "uc", "0"}}).Err()
	if err != nil && !isConnError(err) {
		return nil // written first by someone else: the next read gets it
	}
	if err == nil {
		st.rdb.PExpire(ctx, logKey(id), st.cfg.Retention)
		st.log.Warn("stream ended: its generator's lease lapsed", "stream", id, "events", seq-1)
	}
	return err
}
