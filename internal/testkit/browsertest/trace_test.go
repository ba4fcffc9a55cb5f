package browsertest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCountWorkTellsForcedWorkFromTheRenderingsOwn(t *testing.T) {
	mark := func(name string, ts float64) TraceEvent {
		return TraceEvent{Name: name, Cat: "blink.user_timing", Ph: "R", Pid: 7, Tid: 1, Ts: ts}
	}
	ev := func(name string, ts, dur float64) TraceEvent {
		return TraceEvent{Name: name, Cat: "devtools.timeline", Ph: "X", Pid: 7, Tid: 1, Ts: ts, Dur: dur}
	}
	events := []TraceEvent{
		ev("Layout", 10, 50), // before the start mark
		mark("s", 100),
		// A frame: the animation frame callback writes, then the
		// rendering's own style and layout, outside any script.
		ev("FireAnimationFrame", 1_000, 500),
		ev("UpdateLayoutTree", 1_600, 100),
		ev("Layout", 1_700, 200),
		// A scroll handler reads geometry after a write: forced, two
		// script events deep.
		ev("EventDispatch", 3_000, 1_000),
		ev("FunctionCall", 3_010, 900),
		ev("UpdateLayoutTree", 3_100, 100),
		ev("Layout", 3_200, 300),
		// Another thread's layout is not the page's.
		{Name: "Layout", Cat: "devtools.timeline", Ph: "X", Pid: 7, Tid: 2, Ts: 5_000, Dur: 100},
		mark("e", 10_000),
		ev("Layout", 10_100, 50), // after the end mark
	}
	w, err := CountWork(events, "s", "e")
	require.NoError(t, err)
	require.Equal(t, Work{StyleRecalcs: 2, Layouts: 2, ForcedStyle: 1, ForcedLayouts: 1, ScriptMs: w.ScriptMs}, w)
	// Script: 0.5 ms + 1 ms, less the 0.4 ms forced inside it.
	require.InDelta(t, 1.1, w.ScriptMs, 1e-9)
	_, err = CountWork(events, "s", "missing")
	require.ErrorContains(t, err, "missing")
}
