package limit

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Keys of one identity (redis_rate prefixes its own with "rate:"):
//
//   - rate: the GCRA state redis_rate keeps.
//   - streams: a sorted set of the identity's running generations, each
//     a lease scored with when it lapses (ms, Redis's clock). The
//     instance generating it pushes that on every third of the lease; a
//     lapsed one (its instance died) no longer counts.
//   - tokens: the output tokens of one UTC day, expiring two days later.
func rateKey(key string) string        { return "trickle:limit:" + key }
func streamsKey(key string) string     { return "trickle:limit:{" + key + "}:streams" }
func tokensKey(key, day string) string { return "trickle:limit:{" + key + "}:tokens:" + day }

const tokensTTL = 48 * time.Hour
const callTimeout = 2 * time.Second

// acquire: ARGV lease, max, lease duration (ms). Lapsed leases are
// dropped first, so an instance that died frees its slots by itself.
var acquire = redis.NewScript(`
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// renew: ARGV lease duration (ms), then the leases this instance holds;
// one that lapsed meanwhile is not taken back (its slot may be another's).
var renew = redis.NewScript(`
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)

// refund: ARGV the rate's emission interval (seconds). It moves back the
// theoretical arrival time redis_rate keeps under KEYS[1], in redis_rate's
// own units (seconds since 2017-01-01, as its script counts them).
var refund = redis.NewScript(`
redis.replicate_commands()
local tat = redis.call('GET', KEYS[1])
if not tat then
  return 0
end
local t = redis.call('TIME')
local now = (t[1] - 1483228800) + (t[2] / 1000000)
local back = tonumber(tat) - tonumber(ARGV[1])
if back <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], back, 'EX', math.ceil(back - now))
end
return 1
`)

// reserve: ARGV n, budget, the key's time to live (s). It adds n to the
// day's count unless that is already budget or more, and returns what was
// spent before and 1 when it added n.
var reserve = redis.NewScript(`
local spent = tonumber(redis.call('GET', KEYS[1]) or '0')
if spent >= tonumber(ARGV[2]) then
  return {spent, 0}
end
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {spent, 1}
`)

// settle: ARGV n (may be negative), the key's time to live (s). It adds n
// to the day's count, never below 0.
var settle = redis.NewScript(`
local spent = tonumber(redis.call('GET', KEYS[1]) or '0') + tonumber(ARGV[1])
if spent < 0 then
  spent = 0
end
redis.call('SET', KEYS[1], spent, 'EX', ARGV[2])
return spent
`)

// Redis counts in Redis, shared by every relay using it: the request rate
// through go-redis's redis_rate, the running generations as leases, the
// day's tokens as a counter.
type Redis struct {
	rdb   *redis.Client
	rate  *redis_rate.Limiter
	lease time.Duration
	log   *slog.Logger

	mu       sync.Mutex
	held     map[string]map[string]struct{} // the leases this instance renews, by key
	renewing bool                           // the renewer runs
	crashed  atomic.Bool
	pending  sync.WaitGroup // releases and spends under way
}

// NewRedis counts in the Redis rdb talks to; a generation's slot outlives
// an instance that died by at most lease.
func NewRedis(rdb *redis.Client, lease time.Duration, log *slog.Logger) *Redis {
	return &Redis{rdb: rdb, rate: redis_rate.NewLimiter(rdb), lease: lease, log: log, held: map[string]map[string]struct{}{}}
}

// Allow counts the request in redis_rate's GCRA, N at once and one each
// Per/N after.
func (c *Redis) Allow(ctx context.Context, key string, n int, per time.Duration) (time.Duration, error) {
	res, err := c.rate.Allow(ctx, rateKey(key), redis_rate.Limit{Rate: n, Burst: n, Period: per})
	if err != nil {
		return 0, err
	}
	if res.Allowed > 0 {
		return 0, nil
	}
	return max(res.RetryAfter, time.Millisecond), nil
}

// Refund takes back one request of redis_rate's count (its key is
// "rate:" and the key Allow passed).
func (c *Redis) Refund(ctx context.Context, key string, n int, per time.Duration) error {
	interval := (per / time.Duration(n)).Seconds()
	return refund.Run(ctx, c.rdb, []string{"rate:" + rateKey(key)}, interval).Err()
}

// Acquire takes a slot and renews it until Release.
func (c *Redis) Acquire(ctx context.Context, key, lease string, max int) (bool, error) {
	ok, err := acquire.Run(ctx, c.rdb, []string{streamsKey(key)}, lease, max, c.lease.Milliseconds()).Int()
	if err != nil || ok == 0 {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[key] == nil {
		c.held[key] = map[string]struct{}{}
	}
	c.held[key][lease] = struct{}{}
	if !c.renewing {
		c.renewing = true
		go c.renewLoop()
	}
	return true, nil
}

// Release frees the slot, in the background.
func (c *Redis) Release(key, lease string) {
	c.mu.Lock()
	delete(c.held[key], lease)
	if len(c.held[key]) == 0 {
		delete(c.held, key)
	}
	c.mu.Unlock()
	c.background(func(ctx context.Context) error { return c.rdb.ZRem(ctx, streamsKey(key), lease).Err() })
}

// Spent is what key spent on day.
func (c *Redis) Spent(ctx context.Context, key, day string) (int64, error) {
	n, err := c.rdb.Get(ctx, tokensKey(key, day)).Int64()
	if err == redis.Nil {
		return 0, nil
	}
	return n, err
}

// Spend adds n to key's day (never below 0), in the background.
func (c *Redis) Spend(key, day string, n int64) {
	c.background(func(ctx context.Context) error {
		return settle.Run(ctx, c.rdb, []string{tokensKey(key, day)}, n, int64(tokensTTL/time.Second)).Err()
	})
}

// Reserve adds n to key's day unless it is already budget or more, in
// one script: the fleet's relays cannot all pass the check before any
// adds.
func (c *Redis) Reserve(ctx context.Context, key, day string, n, budget int64) (int64, bool, error) {
	res, err := reserve.Run(ctx, c.rdb, []string{tokensKey(key, day)}, n, budget, int64(tokensTTL/time.Second)).Int64Slice()
	if err != nil {
		return 0, false, err
	}
	return res[0], res[1] == 1, nil
}

// background runs a write that must not hold up its caller (a stream's
// end, under the stream's lock).
func (c *Redis) background(write func(ctx context.Context) error) {
	if c.crashed.Load() {
		return
	}
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if err := write(ctx); err != nil {
			// The lease lapses on its own; the tokens are lost.
			c.log.Warn("limit count not written to redis", "err", err)
		}
	}()
}

// Wait waits for the releases and spends under way.
func (c *Redis) Wait() { c.pending.Wait() }

// renewLoop renews the leases held here three times per lease, while
// there are any.
func (c *Redis) renewLoop() {
	tick := time.NewTicker(c.lease / 3)
	defer tick.Stop()
	for range tick.C {
		c.mu.Lock()
		if len(c.held) == 0 || c.crashed.Load() {
			c.renewing = false
			c.mu.Unlock()
			return
		}
		batch := make(map[string][]any, len(c.held))
		for key, leases := range c.held {
			args := []any{c.lease.Milliseconds()}
			for l := range leases {
				args = append(args, l)
			}
			batch[key] = args
		}
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		err := c.renew(ctx, batch)
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			// The first renewal, or Redis restarted: load the script.
			if err = renew.Load(ctx, c.rdb).Err(); err == nil {
				err = c.renew(ctx, batch)
			}
		}
		if err != nil {
			c.log.Warn("stream leases of the limits not renewed", "err", err)
		}
		cancel()
	}
}

// renew pushes the leases of batch on, in one round trip.
func (c *Redis) renew(ctx context.Context, batch map[string][]any) error {
	p := c.rdb.Pipeline()
	for key, args := range batch {
		renew.EvalSha(ctx, p, []string{streamsKey(key)}, args...)
	}
	_, err := p.Exec(ctx)
	return err
}

// Crash makes the counter behave as if its process had died: it writes
// nothing more, and its leases lapse (tests).
func (c *Redis) Crash() { c.crashed.Store(true) }
