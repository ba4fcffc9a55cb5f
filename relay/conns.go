// The per-address connection cap: how many connections one client
// address may hold open at once (WithMaxConnsPerAddr, Server.Listener).

package relay

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"

	"github.com/trickle-dev/trickle/relay/internal/apierr"
	"github.com/trickle-dev/trickle/relay/internal/auth"
	"github.com/trickle-dev/trickle/wire"
)

// Listener wraps ln so that the relay counts the connections each client
// address holds open (an IPv6 address by its /64) and refuses those over
// WithMaxConnsPerAddr: such a connection is accepted, its first request
// is answered 429 too_many_connections with Retry-After and
// "Connection: close", and it is closed. An answer in the relay's words
// rather than a reset: a browser's page then says why, and a proxy or
// load balancer does not count a dead backend. Serve the Handler on the
// listener it returns; without it (the Handler mounted in another
// server) there is no cap. With the cap lifted (0) ln is returned as it
// is.
func (s *Server) Listener(ln net.Listener) net.Listener {
	if s.cfg.maxConnsPerIP <= 0 {
		return ln
	}
	return &capListener{Listener: ln, s: s, conns: s.conns}
}

// conns counts the connections open per address, and knows the ones over
// the cap by their remote address (unique while they are open).
type conns struct {
	max int

	mu     sync.Mutex
	open   map[string]int      // address key → connections open
	over   map[string]struct{} // remote addresses of the connections over the cap
	logged map[string]struct{} // address keys whose refusal was logged, while over
}

func newConns(max int) *conns {
	return &conns{max: max, open: map[string]int{}, over: map[string]struct{}{}, logged: map[string]struct{}{}}
}

func addressKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	return auth.AddressKey(host)
}

// opened counts a new connection from remote and reports whether it is
// over the cap (and, the first time its address goes over, that its
// refusal is to be logged).
func (c *conns) opened(remote string) (over, log bool) {
	key := addressKey(remote)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open[key]++
	if c.open[key] <= c.max {
		return false, false
	}
	c.over[remote] = struct{}{}
	if _, done := c.logged[key]; !done {
		c.logged[key] = struct{}{}
		log = true
	}
	return true, log
}

func (c *conns) closed(remote string) {
	key := addressKey(remote)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.over, remote)
	if c.open[key]--; c.open[key] <= 0 {
		delete(c.open, key)
		delete(c.logged, key)
	}
}

// isOver reports whether the connection a request came on is over the
// cap.
func (c *conns) isOver(remote string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, over := c.over[remote]
	return over
}

type capListener struct {
	net.Listener
	s     *Server
	conns *conns
}

func (l *capListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	remote := nc.RemoteAddr().String()
	over, log := l.conns.opened(remote)
	if over {
		l.s.metrics.ConnsRefused.Add(1)
		if log {
			l.s.log.Warn("connections refused: the address holds the most connections open (--max-conns-per-addr); logged once while it stays over",
				"addr", addressKey(remote), "limit", l.conns.max)
		}
	}
	return &countedConn{Conn: nc, remote: remote, conns: l.conns}, nil
}

// countedConn gives its place back when it closes (once), hijacked or
// not.
type countedConn struct {
	net.Conn
	remote string
	conns  *conns
	once   sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.conns.closed(c.remote) })
	return c.Conn.Close()
}

// The wrapper hides none of the socket's powers: the relay's fast path
// writes on the descriptor without waiting (SyscallConn), ends a stream
// with a FIN behind the queued bytes (CloseWrite), as net/http does before
// closing a connection it refused, and serves files with sendfile
// (ReadFrom).

func (c *countedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

func (c *countedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

func (c *countedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// capConns answers every request that came on a connection over the cap
// with the refusal, and closes the connection after it.
func (s *Server) capConns(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.conns.max > 0 && s.conns.isOver(r.RemoteAddr) {
			w.Header().Set("Connection", "close")
			apierr.Write(w, wire.Error{Type: wire.TypeRateLimit, Code: wire.CodeTooManyConnections, RetryAfter: 1,
				Message: "relay: too many connections from your address (at most " + strconv.Itoa(s.conns.max) + " at once); close some and try again"})
			return
		}
		next.ServeHTTP(w, r)
	})
}
