package element

import "sync"

// Mailbox is the one queue of a host loop: any goroutine (a JavaScript
// callback, a timer) posts to it without blocking, nothing posted is ever
// dropped, and one loop takes what was posted in batches, in order. So
// everything the loop owns needs no lock.
type Mailbox[T any] struct {
	mu     sync.Mutex
	queue  []T
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
	select {
	case b.signal <- struct{}{}:
	default:
	}
}

// Run is the loop: for each batch of what was posted, handle is called on
// each message in order, then after once. It returns when done is closed
// (never, for the page's loop: done may be nil).
func (b *Mailbox[T]) Run(done <-chan struct{}, handle func(*T), after func()) {
	var batch []T
	var zero T
	for {
		select {
		case <-b.signal:
		case <-done:
			return
		}
		b.mu.Lock()
		batch, b.queue = b.queue, batch[:0]
		b.mu.Unlock()
		for i := range batch {
			handle(&batch[i])
			batch[i] = zero
		}
		after()
	}
}
