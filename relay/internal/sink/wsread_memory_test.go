package sink

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// A payload is read whole whatever the size of the reads it arrives in,
// for every size around the allocation step.
func TestAPayloadIsReadWholeHoweverItArrives(t *testing.T) {
	for _, n := range []int{0, 1, payloadStep - 1, payloadStep, payloadStep + 1, 3*payloadStep + 7, 1 << 20} {
		want := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		for _, chunk := range []int{1, 7, 4096, 1 << 20} {
			if chunk == 1 && n > 4*payloadStep {
				continue
			}
			got, err := readPayload(&trickler{b: want, chunk: chunk}, n)
			require.NoError(t, err, "n=%d chunk=%d", n, chunk)
			require.Equal(t, want, got, "n=%d chunk=%d", n, chunk)
		}
		_, err := readPayload(bytes.NewReader(want[:n/2]), n)
		if n/2 > 0 {
			require.ErrorIs(t, err, io.ErrUnexpectedEOF, "a payload cut short, n=%d", n)
		}
	}
}

// trickler reads b at most chunk bytes at a time.
type trickler struct {
	b     []byte
	chunk int
}

func (t *trickler) Read(p []byte) (int, error) {
	if len(t.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, t.b[:min(len(t.b), t.chunk, len(p))])
	t.b = t.b[n:]
	return n, nil
}

// stalled gives its bytes, then blocks until released: a client that sent
// a frame's header and nothing more.
type stalled struct {
	b       []byte
	blocked chan<- struct{}
	release <-chan struct{}
}

func (s *stalled) Read(p []byte) (int, error) {
	if len(s.b) > 0 {
		n := copy(p, s.b)
		s.b = s.b[n:]
		return n, nil
	}
	s.blocked <- struct{}{}
	<-s.release
	return 0, io.EOF
}

// Clients that each send a masked frame header declaring a megabyte and
// then nothing cost the relay what they sent, not what they declared:
// 200 of them hold under 10 MB of heap (they held 200 MiB when the
// payload was allocated on the header's word).
func TestAFrameHeaderAloneDoesNotReserveItsDeclaredLength(t *testing.T) {
	const clients = 200
	header := []byte{finBit | opText, 0x80 | 127, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3, 4} // 1 MiB, mask 01020304
	blocked := make(chan struct{}, clients)
	release := make(chan struct{})
	done := make(chan error, clients)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for range clients {
		r := (&Frames{}).NewReader(bufio.NewReaderSize(&stalled{b: header, blocked: blocked, release: release}, 64), 1<<20)
		go func() {
			_, _, err := r.ReadMessage()
			done <- err
		}()
	}
	for range clients {
		<-blocked
	}
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	close(release)
	for range clients {
		require.ErrorIs(t, <-done, io.EOF, "the connection ended before any of the payload")
	}
	grew := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d stalled frames: heap grew %d bytes (%d a client)", clients, grew, grew/clients)
	require.Less(t, grew, int64(10<<20), "heap held by %d frame headers", clients)
}
