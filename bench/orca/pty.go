package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// A lineTTY is a pseudo-terminal whose far end a program opens as a file
// by name, and whose output is copied, as it comes, into a file of ours.
//
// Orca opens its --debug-file with Python's open(), which buffers a file
// in blocks of 8 KiB but a terminal by line: given a plain file, the last
// thing Orca said may sit in its buffer until it says more (or exits).
// Given a terminal, every line is written when it ends.
type lineTTY struct {
	master, slave *os.File
	Path          string // the far end, /dev/pts/N
	done          chan struct{}
}

func ioctl(fd uintptr, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

// newLineTTY opens a pseudo-terminal in raw output mode (no "\n" to
// "\r\n") and copies what is written to its far end into out.
func newLineTTY(out io.Writer) (*lineTTY, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("opening /dev/ptmx: %w", err)
	}
	var unlock int32
	if err := ioctl(m.Fd(), syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		m.Close()
		return nil, fmt.Errorf("unlockpt: %w", err)
	}
	var n uint32
	if err := ioctl(m.Fd(), syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		m.Close()
		return nil, fmt.Errorf("ptsname: %w", err)
	}
	path := fmt.Sprintf("/dev/pts/%d", n)
	// The lab keeps the far end open itself: a terminal whose far end is
	// closed by everyone reads as ended (EIO), and Orca opens it later.
	s, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, err
	}
	var t syscall.Termios
	if err := ioctl(s.Fd(), syscall.TCGETS, unsafe.Pointer(&t)); err == nil {
		t.Oflag &^= syscall.OPOST
		t.Lflag &^= syscall.ECHO | syscall.ICANON
		_ = ioctl(s.Fd(), syscall.TCSETS, unsafe.Pointer(&t))
	}
	p := &lineTTY{master: m, slave: s, Path: path, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_, _ = io.Copy(out, m)
	}()
	return p, nil
}

// Close closes both ends; the copy ends with them.
func (p *lineTTY) Close() {
	p.slave.Close()
	p.master.Close()
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
	}
}
