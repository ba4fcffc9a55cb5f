package element

import (
	"slices"
	"sync"
)

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

// Registry holds a page's elements in id order, so updates go out in a
// stable order.
type Registry[E interface {
	ID() int
	Gone() bool
}] struct {
	byID  map[int]E
	order []E
}

// Get returns element id, if there is one.
func (r *Registry[E]) Get(id int) (E, bool) {
	e, ok := r.byID[id]
	return e, ok
}

// Add adds e, in its place by id.
func (r *Registry[E]) Add(e E) {
	if r.byID == nil {
		r.byID = map[int]E{}
	}
	r.byID[e.ID()] = e
	i, _ := slices.BinarySearchFunc(r.order, e.ID(), func(e E, id int) int { return e.ID() - id })
	r.order = slices.Insert(r.order, i, e)
}

// Len is how many elements there are.
func (r *Registry[E]) Len() int { return len(r.order) }

// All is the elements in id order.
func (r *Registry[E]) All() []E { return r.order }

// Sweep forgets the elements that are gone.
func (r *Registry[E]) Sweep() {
	r.order = slices.DeleteFunc(r.order, func(e E) bool {
		if e.Gone() {
			delete(r.byID, e.ID())
			return true
		}
		return false
	})
}
