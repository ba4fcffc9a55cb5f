package relay

import (
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A connection the per-address cap counts keeps every power of its
// socket the relay and net/http look for: the fast write path's
// descriptor (without it every write would go the slow way), the
// half-close, sendfile.
func TestACountedConnectionKeepsItsSocketsPowers(t *testing.T) {
	s, err := New(WithMaxConnsPerAddr(4))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	capped := s.Listener(ln)
	defer capped.Close()
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	c, err := capped.Accept()
	require.NoError(t, err)
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	require.True(t, ok, "syscall.Conn")
	rc, err := sc.SyscallConn()
	require.NoError(t, err)
	require.NotNil(t, rc)
	_, ok = c.(interface{ CloseWrite() error })
	require.True(t, ok, "CloseWrite")
	_, ok = c.(io.ReaderFrom)
	require.True(t, ok, "io.ReaderFrom")
	require.Equal(t, 1, s.conns.open["127.0.0.1"])
	require.NoError(t, c.Close())
	c.Close() // a second close (its error is the socket's)
	require.Empty(t, s.conns.open, "closed twice, counted once")
}
