//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The epoll client reads every stream from a few threads, each owning many
// non-blocking sockets through one epoll instance: a wake-up reads every
// socket that has data (one read(2) each) and hands the bytes to the same
// decoders as the goroutine client. There is no goroutine per stream, so
// no scheduler work per event: on the relay's 2 cores, what the load
// generator does not spend, the relay gets. Connecting (and resuming after
// a cut) uses blocking system calls on the ramp's goroutine, or on a
// goroutine of its own for a resume.

const hasEpoll = true

// epollClient is the Linux streamer.
type epollClient struct {
	loops    []*epollLoop
	next     atomic.Uint32
	sa       syscall.Sockaddr
	family   int
	deadline time.Time
	closed   atomic.Bool
	wg       sync.WaitGroup
}

// epollLoop is one thread's epoll instance and the streams it owns.
type epollLoop struct {
	c     *epollClient
	epfd  int
	mu    sync.Mutex
	conns map[int32]*epollStream
}

// epollStream is one stream over its connections.
type epollStream struct {
	c           *epollClient
	ctx         context.Context
	query, body string
	s           *scanner
	connected   *atomic.Int64
	done        func(error)
	attempt     int

	// The current connection.
	loop *epollLoop
	fd   int
	head []byte // the response head until it is complete
	dec  body   // nil until the head is read
}

func newEpollClient(loops int, deadline time.Time) (*epollClient, error) {
	ta, err := net.ResolveTCPAddr("tcp", *addr)
	if err != nil {
		return nil, err
	}
	c := &epollClient{deadline: deadline}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		c.sa, c.family = sa, syscall.AF_INET
	} else {
		sa := &syscall.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ta.IP)
		c.sa, c.family = sa, syscall.AF_INET6
	}
	for range max(loops, 1) {
		epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("epoll_create1: %w", err)
		}
		l := &epollLoop{c: c, epfd: epfd, conns: map[int32]*epollStream{}}
		c.loops = append(c.loops, l)
		c.wg.Go(l.run)
	}
	return c, nil
}

func (c *epollClient) start(ctx context.Context, query, body string, rec *streamRec, connected, wire *atomic.Int64, done func(error)) {
	st := &epollStream{c: c, ctx: ctx, query: query, body: body, s: &scanner{rec: rec, wire: wire}, connected: connected, done: done}
	c.open(st)
}

// open makes the stream's next connection and hands it to a loop.
func (c *epollClient) open(st *epollStream) {
	fd, err := c.dial(request(st.query, st.body, st.s.rec, st.attempt))
	if err != nil {
		st.connectionOver(endCut, err, true)
		return
	}
	st.fd, st.head, st.dec = fd, st.head[:0], nil
	l := c.loops[c.next.Add(1)%uint32(len(c.loops))]
	st.loop = l
	l.mu.Lock()
	l.conns[int32(fd)] = st
	l.mu.Unlock()
	if err := l.watch(fd); err != nil {
		l.forget(fd)
		st.connectionOver(endCut, err, true)
	}
}

// dial connects (blocking), sends req and leaves the socket non-blocking.
func (c *epollClient) dial(req []byte) (int, error) {
	fd, err := syscall.Socket(c.family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	// A blocking connect and send give up after 30 s, as net.DialTimeout.
	tv := syscall.NsecToTimeval(int64(30 * time.Second))
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	// Go's preemption signal interrupts blocking calls (EINTR); the
	// connection then goes on being made, and asking again says so.
	for start := time.Now(); ; {
		err := syscall.Connect(fd, c.sa)
		if err == nil || errors.Is(err, syscall.EISCONN) {
			break
		}
		if (errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.EALREADY)) && time.Since(start) < 30*time.Second {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		syscall.Close(fd)
		return -1, fmt.Errorf("connect to %s: %w", *addr, err)
	}
	for len(req) > 0 {
		n, err := syscall.Write(fd, req)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return -1, fmt.Errorf("sending the request: %w", err)
		}
		req = req[n:]
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

func (l *epollLoop) watch(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(fd)}
	return syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev)
}

func (l *epollLoop) forget(fd int) {
	l.mu.Lock()
	delete(l.conns, int32(fd))
	l.mu.Unlock()
	syscall.Close(fd) // also takes it out of the epoll set
}

// run waits for sockets with data and reads each once per wake-up (level
// triggered: what is left is reported again).
func (l *epollLoop) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	events := make([]syscall.EpollEvent, 512)
	ready := make([]*epollStream, 0, 512)
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.EpollWait(l.epfd, events, 100)
		if err != nil && !errors.Is(err, syscall.EINTR) {
			l.abort(fmt.Errorf("epoll_wait: %w", err))
			return
		}
		if l.c.closed.Load() {
			return
		}
		if time.Now().After(l.c.deadline) {
			l.abort(errors.New("the run's time limit was reached"))
			return
		}
		ready = ready[:0]
		l.mu.Lock()
		for _, ev := range events[:max(n, 0)] {
			if st := l.conns[ev.Fd]; st != nil {
				ready = append(ready, st)
			}
		}
		l.mu.Unlock()
		for _, st := range ready {
			l.read(st, buf)
		}
	}
}

// read reads what one socket has and feeds it to the stream's decoder.
func (l *epollLoop) read(st *epollStream, buf []byte) {
	n, err := syscall.Read(st.fd, buf)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		return
	}
	if n <= 0 {
		if err == nil {
			err = io.EOF
		}
		l.over(st, endCut, err)
		return
	}
	now := time.Now().UnixNano()
	st.s.wire.Add(int64(n))
	data := buf[:n]
	if st.dec == nil {
		st.head = append(st.head, data...)
		i := bytes.Index(st.head, []byte("\r\n\r\n"))
		if i < 0 {
			if len(st.head) > 4096 {
				l.over(st, endCut, errors.New("response head over 4 KiB"))
			}
			return
		}
		head, rest := st.head[:i+2], st.head[i+4:]
		if len(head) < 12 {
			l.over(st, endCut, fmt.Errorf("bad status line %q", head))
			return
		}
		code, _ := strconv.Atoi(string(head[9:12]))
		dec, err := acceptHead(code, head, st.s.rec)
		if err != nil {
			l.over(st, endCut, fmt.Errorf("%w: %s", err, rest))
			return
		}
		st.dec, data = dec, rest
	}
	if over, end, err := st.dec.feed(data, st.s, now); over {
		l.over(st, end, err)
		return
	}
	if d := st.s.stall; d > 0 {
		// Fault injection: stop reading this socket for a while.
		st.s.stall = 0
		fd := st.fd
		syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, fd, nil)
		time.AfterFunc(d, func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.conns[int32(fd)] == st {
				l.watch(fd)
			}
		})
	}
}

// over ends the stream's current connection.
func (l *epollLoop) over(st *epollStream, end endKind, err error) {
	l.forget(st.fd)
	st.connectionOver(end, err, true)
}

// connectionOver resumes (on a goroutine of its own: connecting blocks)
// when it may and should, or reports the stream's end.
func (st *epollStream) connectionOver(end endKind, err error, mayResume bool) {
	again, err := afterConnection(st.ctx, st.s, st.attempt, end, err, st.connected)
	if !again || !mayResume {
		if again {
			err = fmt.Errorf("stream %s after %d events: %w", st.s.rec.id, st.s.rec.last, err)
		}
		st.done(err)
		return
	}
	st.attempt++
	go st.c.open(st)
}

// abort ends every stream still open (the time limit, or epoll failed).
func (l *epollLoop) abort(err error) {
	l.mu.Lock()
	open := make([]*epollStream, 0, len(l.conns))
	for _, st := range l.conns {
		open = append(open, st)
	}
	l.mu.Unlock()
	for _, st := range open {
		l.forget(st.fd)
		st.connectionOver(endCut, err, false)
	}
}

// close stops the loops once every stream has ended.
func (c *epollClient) close() {
	c.closed.Store(true)
	c.wg.Wait()
	for _, l := range c.loops {
		syscall.Close(l.epfd)
	}
}
