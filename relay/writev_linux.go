package relay

import (
	"net"
	"syscall"
	"unsafe"
)

// socketFD is conn's socket for writevNow (-1 when it has none, as a TLS
// connection). The descriptor stays the connection's: only the reader
// that owns the connection writes on it, and only before it closes it.
func socketFD(conn net.Conn) int {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if rc.Control(func(s uintptr) { fd = int(s) }) != nil {
		return -1
	}
	return fd
}

// writevNow writes a, b and c in one writev(2) on a non-blocking socket,
// without waiting: it returns how much the socket took (an error, EAGAIN
// included, means nothing). Go's own Write would park the goroutine on a
// full socket; this lets the goroutine that emitted an event send it and
// carry on, whatever the client does.
func writevNow(fd int, a, b, c []byte) (int, error) {
	var iov [3]syscall.Iovec
	n := 0
	for _, p := range [][]byte{a, b, c} {
		if len(p) > 0 {
			iov[n].Base = &p[0]
			iov[n].SetLen(len(p))
			n++
		}
	}
	w, _, errno := syscall.Syscall(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
	if errno != 0 {
		return 0, errno
	}
	return int(w), nil
}
