package element

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Posts from many goroutines all reach the loop, each poster's in its
// order, and the loop runs after each batch.
func TestAMailboxDropsNothingAndKeepsEachPostersOrder(t *testing.T) {
	const posters, each = 8, 500
	b := NewMailbox[[2]int]()
	var wg sync.WaitGroup
	for p := range posters {
		wg.Go(func() {
			for i := range each {
				b.Post([2]int{p, i})
			}
		})
	}
	next := make([]int, posters)
	got, batches := 0, 0
	go func() { wg.Wait(); b.Post([2]int{-1, 0}) }()
	b.Run(func(m *[2]int) {
		if m[0] < 0 {
			b.Close()
			return
		}
		require.Equal(t, next[m[0]], m[1], "poster %d's messages in order", m[0])
		next[m[0]]++
		got++
	}, func() { batches++ })
	require.Equal(t, posters*each, got)
	require.Positive(t, batches)
}

// Close ends a loop that waits, from another goroutine, and one that is
// in a batch after that batch: what was posted before is handled.
func TestClosingAMailboxEndsItsLoop(t *testing.T) {
	b := NewMailbox[int]()
	ended := make(chan struct{})
	go func() {
		b.Run(func(*int) {}, func() {})
		close(ended)
	}()
	b.Close()
	<-ended

	b = NewMailbox[int]()
	var got []int
	b.Post(1)
	b.Post(2)
	b.Run(func(m *int) {
		got = append(got, *m)
		if *m == 1 {
			b.Close()
		}
	}, func() {})
	require.Equal(t, []int{1, 2}, got, "the batch Close was called in is handled whole")
}
