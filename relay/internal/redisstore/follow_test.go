package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay/internal/redistest"
	"github.com/trickle-dev/trickle/relay/store"
)

// host is the relay as the store sees it, generating one stream or none;
// its followers report their end on ended.
type host struct {
	lease     time.Duration
	mu        sync.Mutex
	generated []store.Stream
	ended     chan string // "state: message" or "lost: message"
	followers []*follower
}

func newHost(lease time.Duration) *host { return &host{lease: lease, ended: make(chan string, 8)} }

func (h *host) Instance() string     { return "test-instance" }
func (h *host) Logger() *slog.Logger { return slog.New(slog.DiscardHandler) }
func (h *host) Settings() store.Settings {
	return store.Settings{Retention: time.Minute, Grace: time.Minute, Lease: h.lease, MaxEvents: 100, MaxStreams: 4}
}
func (h *host) Generated() []store.Stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]store.Stream(nil), h.generated...)
}
func (h *host) StopLocal(string, string) {}
func (h *host) NewFollower(id, dialect string, created time.Time, unfollow func()) store.Follower {
	f := &follower{h: h}
	h.mu.Lock()
	h.followers = append(h.followers, f)
	h.mu.Unlock()
	return f
}

type follower struct {
	h      *host
	mu     sync.Mutex
	events [][]byte
}

func (f *follower) Append(seq int, event []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if seq != len(f.events)+1 {
		return fmt.Errorf("event %d where %d was due", seq, len(f.events)+1)
	}
	f.events = append(f.events, event)
	return nil
}
func (f *follower) End(state, message string, _ bool, _ store.Usage) {
	f.h.ended <- state + ": " + message
}
func (f *follower) Lost(message string) { f.h.ended <- "lost: " + message }
func (f *follower) Events() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.events)
}
func (f *follower) Readers() int { return 1 }

// bound is a store bound to h on a redis-server of its own, and a client
// of that Redis to set the scene with.
func bound(t *testing.T, h *host) (*Store, *redis.Client, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	st, err := New(srv.URL())
	require.NoError(t, err)
	require.NoError(t, st.Bind(h))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st.Close(ctx)
	})
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { rdb.Close() })
	return st, rdb, srv
}

// scene writes a stream's meta and the entries given (id → event), with
// or without a live lease.
func scene(t *testing.T, rdb *redis.Client, id, dialect string, lease bool, entries ...[2]string) {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, rdb.HSet(ctx, metaKey(id), "dialect", dialect, "created", "1700000000000000000", "owner", "other").Err())
	for _, e := range entries {
		require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: logKey(id), ID: e[0], Values: []any{"e", e[1]}}).Err())
	}
	if lease {
		require.NoError(t, rdb.Set(ctx, leaseKey(id), "other", time.Minute).Err())
	}
}

func TestFollowSaysClearlyWhyAStreamCannotBeFollowed(t *testing.T) {
	st, rdb, _ := bound(t, newHost(time.Minute))
	scene(t, rdb, "expired", "openai", false)
	scene(t, rdb, "trimmed", "openai", true, [2]string{"3-0", "id: trimmed:3\ndata: c\n\n"})
	scene(t, rdb, "trimmed-sub", "openai", true, [2]string{"1-1", "x"})
	for id, want := range map[string]error{
		"never-was":   store.ErrUnknown,
		"expired":     store.ErrExpired,
		"trimmed":     store.ErrTrimmed,
		"trimmed-sub": store.ErrTrimmed,
	} {
		_, err := st.Follow(t.Context(), id)
		require.ErrorIs(t, err, want, id)
	}
}

func TestFollowReplaysAnEndedStreamWithoutFollowingIt(t *testing.T) {
	h := newHost(time.Minute)
	st, rdb, _ := bound(t, h)
	scene(t, rdb, "s", "openai", false, [2]string{"1-0", "id: s:1\ndata: a\n\n"})
	require.NoError(t, rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: logKey("s"), ID: "1-1",
		Values: []any{"end", "complete", "msg", "", "uc", "0", "tok", "7", "est", "0"}}).Err())
	f, err := st.Follow(t.Context(), "s")
	require.NoError(t, err)
	require.Equal(t, "complete: ", <-h.ended)
	require.Equal(t, 1, f.Events())
}

func TestAnEntryIDTheStoreCannotReadIsAnErrorThatNamesIt(t *testing.T) {
	_, err := applyEntry(&follower{h: newHost(time.Minute)}, "s", redis.XMessage{ID: "x-y"})
	require.EqualError(t, err, `relay: stream s: entry id "x-y" in the store is not <seq>-<n>`)
}

func TestAFollowerOfAStreamWhoseGeneratorDiedIsToldInItsDialect(t *testing.T) {
	h := newHost(30 * time.Millisecond)
	st, rdb, _ := bound(t, h)
	scene(t, rdb, "s", "anthropic", true, [2]string{"1-0", "event: content_block_delta\nid: s:1\ndata: {}\n\n"})
	_, err := st.Follow(t.Context(), "s")
	require.NoError(t, err)
	require.NoError(t, rdb.Del(t.Context(), leaseKey("s")).Err()) // the generator died
	end := <-h.ended
	require.True(t, strings.HasPrefix(end, "failed: relay: "+lapsedMessage), end)

	msgs, err := rdb.XRange(t.Context(), logKey("s"), "2-0", "2-0").Result()
	require.NoError(t, err)
	require.Len(t, msgs, 1, "the end is written once, for every follower")
	ev := msgs[0].Values["e"].(string)
	require.Contains(t, ev, "id: s:2\n")
	require.Contains(t, ev, "event: trickle.status\n")
	require.Contains(t, ev, "event: error\n", "Anthropic's SDKs hear their own error")
	ttl, err := rdb.PTTL(t.Context(), logKey("s")).Result()
	require.NoError(t, err)
	require.Positive(t, ttl, "kept for the retention")
}

func TestAStoreWhoseRedisDiesSaysSoToFollowersAndReadiness(t *testing.T) {
	h := newHost(300 * time.Millisecond)
	st, rdb, srv := bound(t, h)
	require.NoError(t, st.Ready())
	require.Equal(t, "redis at "+srv.Addr(), st.String())
	require.NotNil(t, st.Client())
	scene(t, rdb, "s", "openai", true, [2]string{"1-0", "id: s:1\ndata: a\n\n"})
	_, err := st.Follow(t.Context(), "s")
	require.NoError(t, err)

	srv.Stop()
	end := <-h.ended
	require.True(t, strings.HasPrefix(end, "lost: relay: lost the stream store (redis at "+srv.Addr()+") while following stream s"), end)
	require.True(t, strings.HasSuffix(end, "; send the request again"), end)

	_, err = st.Follow(t.Context(), "s")
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.ErrorIs(t, st.Stop(t.Context(), "s"), store.ErrUnavailable)
	require.Eventually(t, func() bool { return st.Ready() != nil }, 10*time.Second, 5*time.Millisecond,
		"the keeper finds Redis gone")
	require.ErrorIs(t, st.Ready(), store.ErrUnavailable)
	require.ErrorContains(t, st.Ready(), srv.Addr())
}

func TestConnectionErrorsAreToldFromRefusals(t *testing.T) {
	require.True(t, isConnError(fmt.Errorf("dial tcp: connection refused")))
	require.True(t, isConnError(redis.ErrClosed))
	require.False(t, isConnError(redis.Nil), "a Redis answer, not a lost connection")
}

func TestABadURLIsRefusedBeforeAnythingIsDialled(t *testing.T) {
	_, err := New("http://127.0.0.1:1")
	require.Error(t, err)
	st, err := New("redis://127.0.0.1:1/0")
	require.NoError(t, err)
	require.Equal(t, "redis at 127.0.0.1:1", st.String())
}
