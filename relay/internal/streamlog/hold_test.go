package streamlog

import (
	"testing"
	"time"

	"github.com/trickle-dev/trickle/wire"

	"github.com/stretchr/testify/require"
)

// quietHost is a Host that records nothing.
type quietHost struct{}

func (quietHost) Token(bool, time.Duration) {}
func (quietHost) Touch(*Log)                {}
func (quietHost) Ended(*Log, wire.State)    {}
func (quietHost) Watched(string) bool       { return false }
func (quietHost) DropFollowed(*Log)         {}

// keeper is a Holder that keeps everything until the test releases it.
type keeper struct{ ended, dropped bool }

func (k *keeper) Hold(time.Time, string, string, bool) {}
func (k *keeper) HoldEnd(wire.State, string)           { k.ended = true }
func (k *keeper) Drop()                                { k.dropped = true }

// A generation that ended on its own while its end was held is not
// cancelled by a Stop (or a withheld sentence) before the end is
// released; one still running is.
func TestAStopWhileTheEndIsHeldCancelsOnlyARunningGenerator(t *testing.T) {
	for _, c := range []struct {
		name      string
		ended     bool
		cancelled bool
	}{{"running", false, true}, {"ended on its own", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			l := New(&Config{MaxEventSize: 1 << 10, MaxEvents: 10, Grace: time.Minute}, quietHost{}, "s", "openai")
			k := &keeper{}
			l.SetHolder(k)
			calls := 0
			l.SetCancel(func() { calls++ })
			require.True(t, l.Emit("", `{"choices":[{"delta":{"content":"Hi."}}]}`, true))
			if c.ended {
				l.End(StateComplete, "")
				require.True(t, k.ended)
			}
			require.True(t, l.Stop(StateWithheld, "withheld"))
			require.True(t, k.dropped)
			require.Equal(t, c.cancelled, l.Info().UpstreamCancelled)
			require.Equal(t, map[bool]int{true: 1, false: 0}[c.cancelled], calls)
		})
	}
}
