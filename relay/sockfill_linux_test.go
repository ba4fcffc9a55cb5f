package relay_test

import (
	"net"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// queuedBytes is how many received bytes wait unread in c's socket
// (TIOCINQ); ok is false where the platform cannot tell.
func queuedBytes(t *testing.T, c net.Conn) (n int, ok bool) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	require.NoError(t, err)
	var errno syscall.Errno
	require.NoError(t, rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}))
	require.Zero(t, errno, "ioctl TIOCINQ")
	return n, true
}
