//go:build !linux

package sink

import (
	"errors"
	"net"
)

// nowWriter does not exist here: without it every send goes through the
// connection's blocking Write on the reader's goroutine.
type nowWriter struct{}

func newNowWriter(net.Conn) *nowWriter { return nil }

func (*nowWriter) writev(a, b, c []byte) (int, error) {
	return 0, errors.New("relay: no non-blocking writev on this platform")
}
