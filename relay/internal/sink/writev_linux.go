package sink

import (
	"net"
	"syscall"
	"unsafe"
)

// nowWriter writes on a connection's socket without waiting: one writev(2)
// on the non-blocking descriptor, whatever the socket takes. Go's own Write
// would park the goroutine on a full socket; this lets the goroutine that
// emitted an event send it and carry on, whatever the client does.
//
// It goes through syscall.RawConn, which holds the descriptor open (and
// the connection's write lock) for the call: a connection closed meanwhile
// makes the write fail, it can never land on a descriptor number the
// kernel has since given to another connection.
type nowWriter struct {
	rc    syscall.RawConn
	fn    func(uintptr) bool // w.call, bound once: no allocation per write
	iov   [3]syscall.Iovec
	n     int // iovecs in use
	wrote int
	errno syscall.Errno
}

// newNowWriter returns nil when conn has no socket of its own (TLS).
func newNowWriter(conn net.Conn) *nowWriter {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &nowWriter{rc: rc}
	w.fn = w.call
	return w
}

func (w *nowWriter) call(fd uintptr) bool {
	r, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&w.iov[0])), uintptr(w.n))
	w.wrote, w.errno = int(r), e
	return true // never wait for the socket: a full one is the caller's to handle
}

// writev writes a, b and c in one system call and returns how much the
// socket took; an error (EAGAIN included) means nothing was written.
func (w *nowWriter) writev(a, b, c []byte) (int, error) {
	w.n = 0
	for _, p := range [3][]byte{a, b, c} {
		if len(p) > 0 {
			w.iov[w.n].Base = &p[0]
			w.iov[w.n].SetLen(len(p))
			w.n++
		}
	}
	if w.n == 0 {
		return 0, nil
	}
	err := w.rc.Write(w.fn)
	w.iov = [3]syscall.Iovec{} // keep no reference to the caller's bytes
	if err != nil {
		return 0, err
	}
	if w.errno != 0 {
		return 0, w.errno
	}
	return w.wrote, nil
}
