package element

import "sync"

// Mailbox is the one queue of a host loop: any goroutine (a JavaScript
// callback, a timer) posts to it without blocking, nothing posted is ever
// dropped, and one loop takes what was posted in batches, in order. So
// everything the loop owns needs no lock.
type Mailbox[T any] struct {
	mu     sync.Mutex
	queue  []T
	closed bool
	signal chan struct{}
}

// NewMailbox returns an empty mailbox.
func NewMailbox[T any]() *Mailbox[T] {
	return &Mailbox[T]{signal: make(chan struct{}, 1)}
}

// Post queues m and wakes the loop.
func (b *Mailbox[T]) Post(m T) {
	b.mu.Lock()
	b.queue = append(b.queue, m)
	b.mu.Unlock()
	b.wake()
}

// Close ends Run after the batch it is in, or at once when it waits (the
// page's loop is never closed).
func (b *Mailbox[T]) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.wake()
}

// wake signals the loop, without blocking: one signal pending is enough,
// since the loop takes everything queued when it wakes.
func (b *Mailbox[T]) wake() {
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

// Run is the loop: for each batch of what was posted, handle is called on
// each message in order, then after once. It returns when the mailbox is
// closed (Close). It waits on one channel, not a select of two: a select
// links the runtime's selectgo (13 KB of code) into the widget, which
// has no other.
func (b *Mailbox[T]) Run(handle func(*T), after func()) {
	var batch []T
	var zero T
	for {
		<-b.signal
		b.mu.Lock()
		batch, b.queue = b.queue, batch[:0]
		closed := b.closed
		b.mu.Unlock()
		if closed && len(batch) == 0 {
			return
		}
		for i := range batch {
			handle(&batch[i])
			batch[i] = zero
		}
		after()
		b.mu.Lock()
		closed = b.closed
		b.mu.Unlock()
		if closed {
			return
		}
	}
}
