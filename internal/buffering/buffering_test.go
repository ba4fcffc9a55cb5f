package buffering_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/buffering"
)

func TestJudge(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		tokens int
		spread time.Duration
		want   buffering.Verdict
	}{
		{"no token tells nothing", 0, 0, buffering.Unknown},
		{"one token tells nothing, however long it took", 1, time.Second, buffering.Unknown},
		{"two tokens a window apart streamed", 2, 50 * ms, buffering.Streamed},
		{"a short answer within the window could be a fast model", 8, 10 * ms, buffering.Unknown},
		{"one token fewer than the minimum, at once, is still unknown", buffering.MinTokens - 1, 0, buffering.Unknown},
		{"the minimum number of tokens at once is buffered", buffering.MinTokens, 0, buffering.Buffered},
		{"many tokens just inside the window are buffered", 5000, 50*ms - 1, buffering.Buffered},
		{"many tokens spread over the window streamed", 5000, 50 * ms, buffering.Streamed},
		{"a slow answer streamed", 200, 8 * time.Second, buffering.Streamed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, buffering.Judge(tc.tokens, tc.spread))
		})
	}
}

// The constants are what their comments say: 50 ms, and the token count a
// model at FastestStream needs the whole window to send.
func TestMinTokensIsWhatTheFastestStreamSendsInTheWindow(t *testing.T) {
	require.Equal(t, 50*time.Millisecond, buffering.Window)
	gaps := time.Duration(buffering.MinTokens-1) * time.Second / buffering.FastestStream
	require.Equal(t, buffering.Window, gaps)
}

// A genuine stream — tokens evenly spaced at any rate up to FastestStream —
// is never called buffered, whatever its length; the same tokens released
// together (spread anywhere under the window) are, once there are
// MinTokens of them.
func TestAGenuineStreamIsNeverBufferedAndAReleasedOneIsOnceLongEnough(t *testing.T) {
	for _, rate := range []int{5, 20, 60, 250, 999, buffering.FastestStream} {
		gap := time.Second / time.Duration(rate)
		for n := 0; n <= 3*buffering.MinTokens; n++ {
			spread := time.Duration(max(n-1, 0)) * gap
			require.NotEqual(t, buffering.Buffered, buffering.Judge(n, spread), "%d tokens at %d tokens/s", n, rate)
		}
	}
	for n := 0; n <= 3*buffering.MinTokens; n++ {
		for _, spread := range []time.Duration{0, time.Microsecond, 7 * time.Millisecond, buffering.Window - 1} {
			got := buffering.Judge(n, spread)
			if n >= buffering.MinTokens {
				require.Equal(t, buffering.Buffered, got, "%d tokens within %v", n, spread)
			} else {
				require.Equal(t, buffering.Unknown, got, "%d tokens within %v", n, spread)
			}
		}
	}
}

func TestVerdictNames(t *testing.T) {
	require.Equal(t, "unknown", buffering.Unknown.String())
	require.Equal(t, "streamed", buffering.Streamed.String())
	require.Equal(t, "buffered", buffering.Buffered.String())
}

func ExampleJudge() {
	// 400 tokens whose bytes all arrived within 3 ms: a proxy held them.
	fmt.Println(buffering.Judge(400, 3*time.Millisecond))
	// The same tokens over 6 s: streamed as generated.
	fmt.Println(buffering.Judge(400, 6*time.Second))
	// Ten tokens within 9 ms: a fast model could do that; too few to tell.
	fmt.Println(buffering.Judge(10, 9*time.Millisecond))
	// Output:
	// buffered
	// streamed
	// unknown
}

func TestAVerdictIsItsWordInJSON(t *testing.T) {
	for _, v := range []buffering.Verdict{buffering.Unknown, buffering.Streamed, buffering.Buffered} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, `"`+v.String()+`"`, string(b))
		var back buffering.Verdict
		require.NoError(t, json.Unmarshal(b, &back))
		require.Equal(t, v, back)
	}
	var v buffering.Verdict
	require.ErrorContains(t, json.Unmarshal([]byte(`"inconclusive"`), &v), `"inconclusive" is not a verdict`)
}
