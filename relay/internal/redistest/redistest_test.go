package redistest

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestAStartedServerAnswersAndStopEndsIt: Start gives a redis-server on
// a loopback port of its own that answers at once, Launch on the same
// directory and port brings it back (the relay's tests restart Redis
// so), and Stop kills it: the port then refuses connections.
func TestAStartedServerAnswersAndStopEndsIt(t *testing.T) {
	r := Start(t)
	require.NotZero(t, r.Port)
	ping := func(s *Server) error {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return rdb.Ping(ctx).Err()
	}
	require.NoError(t, ping(r))
	require.Equal(t, "redis://127.0.0.1:"+strconv.Itoa(r.Port)+"/0", r.URL())

	r.Stop()
	_, err := net.DialTimeout("tcp", r.Addr(), time.Second)
	require.Error(t, err, "a stopped server's port refuses connections")

	again, err := Launch(Need(t), r.Dir, r.Port)
	require.NoError(t, err)
	defer again.Stop()
	require.NoError(t, ping(again), "launched again on the same port")
}
