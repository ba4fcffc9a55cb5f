package sink

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// A close reason is cut between characters, never inside one, and fits
// the close frame, for every length around the limit and characters of
// every UTF-8 width.
func TestCloseReasonsAreCutBetweenCharactersWithinTheFrame(t *testing.T) {
	for _, ch := range []string{"a", "é", "€", "😀"} {
		for n := 100; n <= 140; n++ {
			for pad := range 4 {
				s := strings.Repeat("x", pad) + strings.Repeat(ch, n)
				got := CloseReason(s)
				require.LessOrEqual(t, len(got), MaxCloseReason, "%q×%d", ch, n)
				require.True(t, utf8.ValidString(got), "%q×%d+%d: %q", ch, n, pad, got)
				if len(s) <= MaxCloseReason {
					require.Equal(t, s, got)
					continue
				}
				body, ok := strings.CutSuffix(got, "...")
				require.True(t, ok)
				require.True(t, strings.HasPrefix(s, body))
				require.Greater(t, len(body), MaxCloseReason-3-utf8.UTFMax, "cut no more than one character short")
			}
		}
	}
}
