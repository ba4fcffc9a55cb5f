//go:build !(js && wasm)

package e2e_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// An answer's frames do their DOM work in the page's animation frame and
// leave style and layout to the browser's own pass after it: no script of
// the widget reads geometry or the selection after a write, which would
// make the browser recalculate style and lay out in the middle of the
// frame, a second time (a forced layout). Counted in a Chrome trace of the
// page's main thread while a 20 KB answer streams: every style
// recalculation and layout inside a script event is forced.
//
// Two kinds are allowed, and counted by the page: the final frame's
// scroll to the end (before ask() resolves, so that the answer is in view
// when the page hears of it), and one in the frame after each write to the
// live regions, which are written as Go's messages arrive, between frames
// (the frame that must ask where the reader's selection is pays for
// laying them out). Announcements are off, so those are the start, end
// and any stall status.
func TestTheAnswersFramesForceNoStyleRecalculationOrLayout(t *testing.T) {
	ctx := tab(t)
	var status string
	events, err := browsertest.Trace(ctx, func() error {
		status = browsertest.Eval[string](t, ctx, `(async () => {
			const a = document.getElementById("a");
			a.setAttribute("endpoint", "/v1/chat/completions?answer=sample-20k&gap_ms=1");
			a.setAttribute("announce", "off");
			window.__liveWrites = 0;
			const live = new MutationObserver(() => window.__liveWrites++);
			for (const part of ["sr-status", "announcer", "status"]) {
				live.observe(a.querySelector('[data-trickle="' + part + '"]'), { childList: true, characterData: true, subtree: true });
			}
			performance.mark("work-start");
			const status = await a.ask("work");
			performance.mark("work-end");
			live.disconnect();
			return status;
		})()`)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "complete", status)
	w, err := browsertest.CountWork(events, "work-start", "work-end")
	require.NoError(t, err)
	live := browsertest.Eval[int](t, ctx, `window.__liveWrites`)
	t.Logf("work while streaming: %+v; the live regions written %d times", w, live)
	require.Greater(t, w.Layouts, 10, "the answer was laid out, frame by frame")
	require.LessOrEqual(t, w.ForcedStyle, live+1, "style recalculations forced by the widget's script, beyond one per live-region write and the final scroll: %+v", w)
	require.LessOrEqual(t, w.ForcedLayouts, live+1, "layouts forced by the widget's script, beyond one per live-region write and the final scroll: %+v", w)
}
