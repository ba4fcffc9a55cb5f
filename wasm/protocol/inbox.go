package protocol

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// An inbox batch is what trickle.js's Inbox.take hands Go once per frame:
// the bytes of every network chunk (or WebSocket message) that arrived
// since the last frame, with each chunk's length and arrival time. Reading
// the body in JavaScript and crossing into Go once per frame, instead of
// once per chunk, is what keeps the widget's per-chunk cost near zero.
//
// Layout, little-endian: float64 performance.now() at the take; uint32
// chunk count n; n × (uint32 length, float64 arrival performance.now());
// then the bytes of all chunks, in order.

// ErrInboxBatch means the batch does not follow that layout: a loader and a
// .wasm from different builds.
var ErrInboxBatch = errors.New("trickle: malformed inbox batch from trickle.js (loader and .wasm from different builds?)")

// InboxChunk is one chunk of a batch.
type InboxChunk struct {
	Data []byte
	At   time.Time
}

// ParseInbox splits a batch into chunks, placing their arrival times on
// Go's clock: now is Go's time.Now() right after the take, so a chunk that
// arrived d milliseconds before the take arrived at now - d. into is reused.
func ParseInbox(b []byte, now time.Time, into []InboxChunk) ([]InboxChunk, error) {
	if len(b) < 12 {
		return into, ErrInboxBatch
	}
	le := binary.LittleEndian
	took := math.Float64frombits(le.Uint64(b))
	n := int(le.Uint32(b[8:]))
	head := 12 + 12*n
	if n < 0 || n > len(b) || head > len(b) {
		return into, ErrInboxBatch
	}
	data := b[head:]
	for i := 0; i < n; i++ {
		m := b[12+12*i:]
		size := int(le.Uint32(m))
		arrived := math.Float64frombits(le.Uint64(m[4:]))
		if size > len(data) {
			return into, ErrInboxBatch
		}
		ago := time.Duration((took - arrived) * float64(time.Millisecond))
		into = append(into, InboxChunk{Data: data[:size:size], At: now.Add(-max(ago, 0))})
		data = data[size:]
	}
	if len(data) != 0 {
		return into, ErrInboxBatch
	}
	return into, nil
}

// AppendInbox appends the batch trickle-worker.js's Inbox.take writes for
// chunks taken at took (performance.now()), chunk i having arrived at
// arrived[i].
func AppendInbox(b []byte, took float64, chunks [][]byte, arrived []float64) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, math.Float64bits(took))
	b = le.AppendUint32(b, uint32(len(chunks)))
	for i, c := range chunks {
		b = le.AppendUint32(b, uint32(len(c)))
		b = le.AppendUint64(b, math.Float64bits(arrived[i]))
	}
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b
}
