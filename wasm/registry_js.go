//go:build js && wasm

package wasm

// registry holds a page's elements in id order, so updates go out in a
// stable order. It is not generic on purpose (see host).
type registry struct {
	byID  map[int]*mount
	order []*mount
}

// Get returns element id, if there is one.
func (r *registry) Get(id int) (*mount, bool) {
	e, ok := r.byID[id]
	return e, ok
}

// Add adds e, in its place by id.
func (r *registry) Add(e *mount) {
	if r.byID == nil {
		r.byID = map[int]*mount{}
	}
	r.byID[e.ID()] = e
	i := len(r.order)
	for i > 0 && r.order[i-1].ID() > e.ID() {
		i--
	}
	r.order = append(r.order, nil)
	copy(r.order[i+1:], r.order[i:])
	r.order[i] = e
}

// Len is how many elements there are.
func (r *registry) Len() int { return len(r.order) }

// All is the elements in id order.
func (r *registry) All() []*mount { return r.order }

// Sweep forgets the elements that are gone.
func (r *registry) Sweep() {
	kept := r.order[:0]
	for _, e := range r.order {
		if e.Gone() {
			delete(r.byID, e.ID())
			continue
		}
		kept = append(kept, e)
	}
	clear(r.order[len(kept):])
	r.order = kept
}
