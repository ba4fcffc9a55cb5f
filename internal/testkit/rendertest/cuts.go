// Package rendertest holds what the markdown tests share: the cuts a model
// stream makes in a text, for the project's central contract (every chunk
// cut gives the same result), and the outside oracle's inputs, the
// CommonMark spec examples and goldmark's own extra and extension cases,
// read from the goldmark module the build uses.
//
// It imports nothing of Trickle's, so the render package's own tests can
// use it.
package rendertest

// EveryByte returns the cuts 0..len(text): every prefix.
func EveryByte(text string) []int {
	cuts := make([]int, 0, len(text)+1)
	for i := 0; i <= len(text); i++ {
		cuts = append(cuts, i)
	}
	return cuts
}

// TokenCuts cuts text like a model stream: prefix lengths, increasing,
// tokens of 1 to 7 bytes, the last one len(text). The sizes come from a
// xorshift sequence started at seed, so a failure reproduces.
func TokenCuts(text string, seed uint32) []int {
	var cuts []int
	x := seed | 1
	for i := 0; i < len(text); {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		i += 1 + int(x%7)
		cuts = append(cuts, min(i, len(text)))
	}
	return cuts
}
