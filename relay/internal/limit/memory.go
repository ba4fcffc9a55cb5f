package limit

import (
	"context"
	"sync"
	"time"
)

// Memory counts in this process: one relay's own limits.
type Memory struct {
	mu    sync.Mutex
	now   func() time.Time
	tat   map[string]time.Time // each key's GCRA theoretical arrival time
	held  map[string]map[string]struct{}
	spent map[string]spent
	// sweepAt is the size of tat and spent at which the entries that
	// count for nothing any more are dropped: a client changing address
	// for every request must not grow them without bound.
	sweepAt int
	freed   signal // fired by Release: a request waiting for a slot retries
}

type spent struct {
	day string
	n   int64
}

// NewMemory makes an empty Memory.
func NewMemory() *Memory {
	return &Memory{now: time.Now, tat: map[string]time.Time{}, held: map[string]map[string]struct{}{}, spent: map[string]spent{}, sweepAt: 1024}
}

// Allow is the generic cell rate algorithm, as redis_rate computes it in
// Redis: each request moves key's theoretical arrival time one interval
// (Per/N) on; a request is allowed while that time stays within N
// intervals of now.
func (m *Memory) Allow(_ context.Context, key string, n int, per time.Duration) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	interval := per / time.Duration(n)
	tat := m.tat[key]
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	if allowAt := next.Add(-time.Duration(n) * interval); now.Before(allowAt) {
		return allowAt.Sub(now), nil
	}
	m.tat[key] = next
	m.sweep(now)
	return 0, nil
}

// Refund moves key's theoretical arrival time one interval back.
func (m *Memory) Refund(_ context.Context, key string, n int, per time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	tat, ok := m.tat[key]
	if !ok {
		return nil
	}
	if tat = tat.Add(-per / time.Duration(n)); tat.After(m.now()) {
		m.tat[key] = tat
	} else {
		delete(m.tat, key)
	}
	return nil
}

// Wait does nothing: Memory writes nothing in the background.
func (m *Memory) Wait() {}

// Acquire takes a slot; a process that dies takes its slots with it.
func (m *Memory) Acquire(_ context.Context, key, lease string, max int) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[key]
	if len(h) >= max {
		return false, nil
	}
	if h == nil {
		h = map[string]struct{}{}
		m.held[key] = h
	}
	h[lease] = struct{}{}
	return true, nil
}

// Release frees a slot.
func (m *Memory) Release(key, lease string) {
	m.mu.Lock()
	delete(m.held[key], lease)
	if len(m.held[key]) == 0 {
		delete(m.held, key)
	}
	m.mu.Unlock()
	m.freed.fire()
}

// Spent is what key spent on day.
func (m *Memory) Spent(_ context.Context, key, day string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.spent[key]; s.day == day {
		return s.n, nil
	}
	return 0, nil
}

// Spend adds n to key's day; only the latest day is kept.
func (m *Memory) Spend(key, day string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spent[key]
	switch {
	case day < s.day:
		return // a day gone by counts for nothing any more
	case day > s.day:
		s = spent{day: day}
	}
	s.n = max(0, s.n+n)
	m.spent[key] = s
	m.sweep(m.now())
}

// Reserve adds n to key's day unless it is already budget or more.
func (m *Memory) Reserve(_ context.Context, key, day string, n, budget int64) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spent[key]
	switch {
	case day < s.day:
		return 0, true, nil // a day gone by: nothing to hold against
	case day > s.day:
		s = spent{day: day}
	}
	if s.n >= budget {
		return s.n, false, nil
	}
	before := s.n
	s.n += n
	m.spent[key] = s
	m.sweep(m.now())
	return before, true, nil
}

// sweep drops, once the maps have doubled since the last sweep, the rates
// back at rest and the counts of days gone.
func (m *Memory) sweep(now time.Time) {
	if len(m.tat)+len(m.spent) < m.sweepAt {
		return
	}
	today := day(now)
	for k, t := range m.tat {
		if !t.After(now) {
			delete(m.tat, k)
		}
	}
	for k, s := range m.spent {
		if s.day != today {
			delete(m.spent, k)
		}
	}
	m.sweepAt = max(1024, 2*(len(m.tat)+len(m.spent)))
}
