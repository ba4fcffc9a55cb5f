package relay_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/relay"
)

// sharedStore is the Redis URL every relay of the package's tests uses
// when TRICKLE_TEST_STORE=redis (make test runs the package twice: with
// the memory store, then with Redis); empty for the memory store.
var sharedStore string

// testLease is the lease of the relays in tests: short, so that a dead
// relay is noticed quickly, yet long enough for a loaded machine to renew
// it in time.
const testLease = time.Second

// redisServer is a redis-server a test started on a free loopback port,
// without persistence; it is stopped by its PID.
type redisServer struct {
	cmd  *exec.Cmd
	port int
	dir  string
	logf *os.File
}

// redisBinary finds redis-server, or says what to install; under CI=true
// a missing server fails the test rather than skipping it.
func redisBinary() (string, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not found (Debian: apt-get install -y redis-server): %w", err)
	}
	return path, nil
}

func needRedis(t testing.TB) string {
	t.Helper()
	path, err := redisBinary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return path
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// launchRedis starts redis-server on port (0: a free one) and waits until
// it answers.
func launchRedis(bin, dir string, port int) (*redisServer, error) {
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		port = p
	}
	logf, err := os.Create(filepath.Join(dir, "redis-"+strconv.Itoa(port)+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--protected-mode", "yes")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	r := &redisServer{cmd: cmd, port: port, dir: dir, logf: logf}
	rdb := redis.NewClient(&redis.Options{Addr: r.addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return r, nil
		}
		if time.Now().After(deadline) {
			r.stop()
			b, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("redis-server on port %d did not answer within 10 s: %v\n%s", port, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }
func (r *redisServer) url() string  { return "redis://" + r.addr() + "/0" }

// stop kills the server (by its PID) and waits for it.
func (r *redisServer) stop() {
	if r.cmd.Process != nil {
		r.cmd.Process.Signal(syscall.SIGKILL)
		r.cmd.Wait()
	}
	r.logf.Close()
}

// startRedis runs a redis-server for one test.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin := needRedis(t)
	r, err := launchRedis(bin, t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(r.stop)
	return r
}

// restart starts the server again on the same port, empty (no
// persistence): what a Redis restart without persistence is.
func (r *redisServer) restart(t testing.TB) {
	t.Helper()
	bin := needRedis(t)
	again, err := launchRedis(bin, r.dir, r.port)
	require.NoError(t, err)
	*r = *again
}

// redisClient is a client to look at or change what a store wrote.
func redisClient(t testing.TB, r *redisServer) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: r.addr(), Protocol: 2, DisableIdentity: true})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// storeOptions are the options that put a relay on the Redis at url.
func storeOptions(t testing.TB, url string) []relay.Option {
	t.Helper()
	st, err := relay.RedisStore(url)
	require.NoError(t, err)
	return []relay.Option{relay.WithStore(st), relay.WithLease(testLease)}
}

// setUpSharedStore starts the package's redis-server when
// TRICKLE_TEST_STORE=redis; the returned func stops it.
func setUpSharedStore() (func(), error) {
	switch os.Getenv("TRICKLE_TEST_STORE") {
	case "", "memory":
		return func() {}, nil
	case "redis":
	default:
		return nil, fmt.Errorf("TRICKLE_TEST_STORE=%q: want memory or redis", os.Getenv("TRICKLE_TEST_STORE"))
	}
	bin, err := redisBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "trickle-redis-")
	if err != nil {
		return nil, err
	}
	r, err := launchRedis(bin, dir, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	sharedStore = r.url()
	fmt.Fprintf(os.Stderr, "relay tests: stream store redis at %s\n", r.addr())
	return func() { r.stop(); os.RemoveAll(dir) }, nil
}
