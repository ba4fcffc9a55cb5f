package sse

import (
	"errors"
	"io"
	"time"

	"github.com/trickle-dev/trickle/internal/errtext"
)

// readSize is how much the Decoder asks its reader for at a time.
const readSize = 32 << 10

// Decoder is the pull decoder: it reads an event stream from an io.Reader and
// returns one event per Next call. It is a Parser underneath, so it has the
// same cut invariance, bounds and error reporting.
type Decoder struct {
	r     io.Reader
	p     *Parser
	buf   []byte
	queue []item
	head  int
	done  error // sticky: io.EOF, an ErrIncomplete error or a read error
	retry int   // last applied reconnection time in ms, -1 if none
}

// item is one thing Next returns, in stream order.
type item struct {
	ev  Event
	err error
}

// decoderSink is the Decoder's Handler, kept unexported so that Decoder's own
// method set stays the pull API.
type decoderSink struct{ d *Decoder }

func (s decoderSink) Event(e Event) { s.d.queue = append(s.d.queue, item{ev: e}) }
func (s decoderSink) Retry(ms int)  { s.d.retry = ms }

// Dropped queues the drop in its place among the events.
func (s decoderSink) Dropped(err error) { s.d.queue = append(s.d.queue, item{err: err}) }

// NewDecoder returns a Decoder reading from r. An option value that cannot
// work is an *OptionError (matching ErrBadOption) naming it.
func NewDecoder(r io.Reader, opts ...Option) (*Decoder, error) {
	d := &Decoder{r: r, retry: -1}
	p, err := NewParser(decoderSink{d}, opts...)
	if err != nil {
		return nil, err
	}
	d.p = p
	return d, nil
}

// Next returns the next event. At a clean end of the stream it returns
// io.EOF; when the stream ends in the middle of an event it returns an error
// wrapping ErrIncomplete (the partial event is discarded). An error wrapping
// ErrEventTooLarge reports a dropped event and is not final: call Next again
// for the events after it. Any other error is the reader's, wrapped.
func (d *Decoder) Next() (Event, error) {
	for {
		if d.head < len(d.queue) {
			it := d.queue[d.head]
			d.queue[d.head] = item{}
			d.head++
			return it.ev, it.err
		}
		d.queue, d.head = d.queue[:0], 0
		if d.done != nil {
			return Event{}, d.done
		}
		if d.buf == nil {
			d.buf = make([]byte, readSize)
		}
		n, err := d.r.Read(d.buf)
		if n > 0 {
			// Errors arrive through onErr, already queued in order.
			_, _ = d.p.Write(d.buf[:n])
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if cerr := d.p.Close(); cerr != nil {
				d.done = cerr
			} else {
				d.done = io.EOF
			}
		default:
			d.done = errtext.Wrap("sse: reading the stream: "+errtext.Text(err), err)
		}
	}
}

// LastEventID returns the last event ID string (see Parser.LastEventID).
func (d *Decoder) LastEventID() string { return d.p.LastEventID() }

// Retry returns the reconnection time set by the last valid "retry" field
// read so far, and false when there was none.
func (d *Decoder) Retry() (time.Duration, bool) {
	if d.retry < 0 {
		return 0, false
	}
	return time.Duration(d.retry) * time.Millisecond, true
}

// Reset makes d read the stream of a new connection from r, as
// Parser.Reset does: whatever was unread or unfinished is dropped, and the
// last event ID (what the reconnection sent as Last-Event-ID) and the retry
// value are kept.
func (d *Decoder) Reset(r io.Reader) {
	d.r = r
	d.p.Reset()
	clear(d.queue)
	d.queue, d.head, d.done = d.queue[:0], 0, nil
}
