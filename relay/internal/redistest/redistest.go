// Package redistest starts redis-server for tests: on a free loopback
// port, without persistence, stopped by its PID.
package redistest

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
)

// Server is a redis-server a test started on a free loopback port,
// without persistence; it is stopped by its PID.
type Server struct {
	cmd  *exec.Cmd
	Port int
	Dir  string
	logf *os.File
}

// Binary finds redis-server, or says what to install; under CI=true
// a missing server fails the test rather than skipping it.
func Binary() (string, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not found (Debian: apt-get install -y redis-server): %w", err)
	}
	return path, nil
}

// Need is Binary, or skips the test (fails it under CI=true).
func Need(t testing.TB) string {
	t.Helper()
	path, err := Binary()
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

// Launch starts redis-server on port (0: a free one) and waits until
// it answers.
func Launch(bin, dir string, port int) (*Server, error) {
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
	r := &Server{cmd: cmd, Port: port, Dir: dir, logf: logf}
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
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
			r.Stop()
			b, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("redis-server on port %d did not answer within 10 s: %v\n%s", port, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }
func (r *Server) URL() string  { return "redis://" + r.Addr() + "/0" }

// Stop kills the server (by its PID) and waits for it.
func (r *Server) Stop() {
	if r.cmd.Process != nil {
		r.cmd.Process.Signal(syscall.SIGKILL)
		r.cmd.Wait()
	}
	r.logf.Close()
}

// Start runs a redis-server for one test, stopped at its end.
func Start(t testing.TB) *Server {
	t.Helper()
	r, err := Launch(Need(t), t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}
