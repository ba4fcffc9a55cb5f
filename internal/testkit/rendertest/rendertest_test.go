package rendertest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/rendertest"
)

func TestTokenCutsAreIncreasingTokensOfOneToSevenBytesEndingAtTheEnd(t *testing.T) {
	for n := range 200 {
		text := string(make([]byte, n))
		for seed := range uint32(20) {
			cuts := rendertest.TokenCuts(text, seed)
			require.Equal(t, cuts, rendertest.TokenCuts(text, seed), "the same seed cuts the same way")
			if n == 0 {
				require.Empty(t, cuts)
				continue
			}
			prev := 0
			for _, c := range cuts {
				require.Greater(t, c, prev)
				require.LessOrEqual(t, c-prev, 7)
				prev = c
			}
			require.Equal(t, n, cuts[len(cuts)-1])
		}
	}
	text := string(make([]byte, 1000))
	require.NotEqual(t, rendertest.TokenCuts(text, 1), rendertest.TokenCuts(text, 2), "seeds differ")
}

func TestEveryByteIsEveryPrefix(t *testing.T) {
	require.Equal(t, []int{0}, rendertest.EveryByte(""))
	require.Equal(t, []int{0, 1, 2, 3}, rendertest.EveryByte("abc"))
}

func TestTheSpecAndGoldmarksCasesAreRead(t *testing.T) {
	spec := rendertest.Spec(t)
	require.Equal(t, 1, spec[0].Example)
	require.NotEmpty(t, spec[0].Section)
	for i, ex := range spec {
		require.Equal(t, i+1, ex.Example, "numbered in order")
	}
	cases := rendertest.GoldmarkCases(t, "extension/_test/table.txt")
	require.Greater(t, len(cases), 10)
	require.Contains(t, cases[0], "|", "a table case is markdown with a table")
}
