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
	done := make(chan struct{})
	next := make([]int, posters)
	got, batches := 0, 0
	go func() { wg.Wait(); b.Post([2]int{-1, 0}) }()
	b.Run(done, func(m *[2]int) {
		if m[0] < 0 {
			close(done)
			return
		}
		require.Equal(t, next[m[0]], m[1], "poster %d's messages in order", m[0])
		next[m[0]]++
		got++
	}, func() { batches++ })
	require.Equal(t, posters*each, got)
	require.Positive(t, batches)
}
