package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/profiler"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/render"

	"github.com/trickle-dev/trickle/bench/internal/paced"
)

func TestFromTraceCountsOnlyThePageThreadsTasksBetweenItsMarks(t *testing.T) {
	mark := func(name string, ts float64) traceEvent {
		return traceEvent{Name: name, Cat: "blink.user_timing", Ph: "R", Pid: 7, Tid: 1, Ts: ts}
	}
	task := func(pid, tid int, ts, dur float64) traceEvent {
		return traceEvent{Name: "RunTask", Cat: "disabled-by-default-devtools.timeline,toplevel", Ph: "X", Pid: pid, Tid: tid, Ts: ts, Dur: dur}
	}
	events := []traceEvent{
		task(7, 1, 500, 90_000), // before the start mark: loading
		mark("bench-start", 100_000),
		task(7, 1, 110_000, 3_000),
		task(7, 1, 120_000, 12_000),
		{Name: "Layout", Cat: "devtools.timeline", Ph: "X", Pid: 7, Tid: 1, Ts: 121_000, Dur: 5_000},
		{Name: "Paint", Cat: "devtools.timeline", Ph: "X", Pid: 7, Tid: 1, Ts: 128_000, Dur: 2_000},
		task(7, 1, 140_000, 60_000),
		task(7, 2, 150_000, 80_000), // another thread of the page
		task(9, 1, 150_000, 80_000), // another process (the browser)
		mark("bench-end", 300_000),
		task(7, 1, 310_000, 70_000), // after the end mark
	}
	var res Result
	require.NoError(t, fromTrace(events, &res))
	require.Equal(t, 3, res.Tasks)
	require.InDelta(t, 75.0, res.MainThread, 1e-9)
	require.InDelta(t, 60.0, res.LongestTask, 1e-9)
	require.InDelta(t, 40.0, res.LongestTaskAt, 1e-9)
	require.Equal(t, 2, res.TasksOver4ms)
	require.InDelta(t, 5.0, res.StyleLayout, 1e-9)
	require.InDelta(t, 2.0, res.Paint, 1e-9)
}

func TestFromTraceWithoutTheMarksIsAnError(t *testing.T) {
	var res Result
	require.ErrorContains(t, fromTrace(nil, &res), "bench-start")
}

func TestMediansTakeTheMiddleOfRepeatedRuns(t *testing.T) {
	runs := []Result{
		{Sample: "a", Renderer: "x", MainThread: 30, LongestTask: 1},
		{Sample: "a", Renderer: "y", MainThread: 5},
		{Sample: "a", Renderer: "x", MainThread: 10, LongestTask: 9},
		{Sample: "a", Renderer: "x", MainThread: 20, LongestTask: 4},
	}
	m := medians(runs)
	require.Len(t, m, 2)
	require.Equal(t, "x", m[0].Renderer)
	require.Equal(t, 20.0, m[0].MainThread)
	require.Equal(t, 4.0, m[0].LongestTask)
	require.Equal(t, 5.0, m[1].MainThread)
}

func TestTheEndAfterTheLastTokenIsTheMedianOfTheRunsThatKnowIt(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	runs := []Result{
		{Sample: "a", Renderer: "x", EndAfterLastToken: ms(40)},
		{Sample: "a", Renderer: "x"}, // the page's clock was unknown
		{Sample: "a", Renderer: "x", EndAfterLastToken: ms(12)},
		{Sample: "a", Renderer: "x", EndAfterLastToken: ms(30)},
		{Sample: "a", Renderer: "y"},
	}
	m := medians(runs)
	require.Len(t, m, 2)
	require.NotNil(t, m[0].EndAfterLastToken)
	require.Equal(t, 30.0, *m[0].EndAfterLastToken)
	require.Nil(t, m[1].EndAfterLastToken, "a renderer no run timed has no figure, not zero")
}

func TestTheLastTokenClockKeepsTheLatestStreamsEndUntilReset(t *testing.T) {
	var c tokenClock
	require.Zero(t, c.get())
	t0 := time.UnixMicro(1_700_000_000_000_000)
	c.note(t0.Add(5 * time.Millisecond))
	c.note(t0) // a stream that ended earlier, noted later
	require.Equal(t, float64(t0.UnixMicro())/1000+5, c.get())
	c.reset()
	require.Zero(t, c.get())
}

func TestFromTraceFoldsTheMicrotaskCheckpointIntoItsTask(t *testing.T) {
	ev := func(name, cat string, ts, dur float64) traceEvent {
		return traceEvent{Name: name, Cat: cat, Ph: "X", Pid: 7, Tid: 1, Ts: ts, Dur: dur}
	}
	events := []traceEvent{
		{Name: "bench-start", Cat: "blink.user_timing", Ph: "R", Pid: 7, Tid: 1, Ts: 100_000},
		// A network task whose promise reaction (read().then) runs in the
		// checkpoint right after it: one 53 ms task for the page.
		ev("ThreadControllerImpl::RunTask", "toplevel", 110_000, 3_000),
		ev("SimpleWatcher::OnHandleReady", "toplevel", 110_010, 2_900),
		ev(microtasks, "toplevel", 113_020, 50_000),
		// A checkpoint inside a task is already counted by it.
		ev("ThreadControllerImpl::RunTask", "toplevel", 200_000, 10_000),
		ev(microtasks, "toplevel", 205_000, 1_000),
		// A checkpoint long after any task stands alone.
		ev(microtasks, "toplevel", 250_000, 2_000),
		{Name: "bench-end", Cat: "blink.user_timing", Ph: "R", Pid: 7, Tid: 1, Ts: 300_000},
	}
	var res Result
	require.NoError(t, fromTrace(events, &res))
	require.Equal(t, 3, res.Tasks)
	require.InDelta(t, 53.02+10+2, res.MainThread, 1e-9)
	require.InDelta(t, 53.02, res.LongestTask, 1e-9)
	require.Contains(t, res.LongestTaskParts, "microtask checkpoint 50.0 ms")
	byName := map[string]float64{}
	for _, b := range res.Breakdown {
		byName[b.Function] = b.Ms
	}
	require.InDelta(t, 50.0+1+2, byName["microtask checkpoint"], 1e-9, "the three checkpoints, the one inside a task included")
}

// A task's wall time holds the time its thread waited for a core; its
// thread time (tdur) does not. Both are counted, a task's checkpoint's
// thread time with it, and every task over 50 ms by either is listed
// with its outermost events.
func TestFromTraceCountsLongTasksByWallAndByCPU(t *testing.T) {
	ev := func(name, cat string, ts, dur, tdur float64) traceEvent {
		return traceEvent{Name: name, Cat: cat, Ph: "X", Pid: 7, Tid: 1, Ts: ts, Dur: dur, Tdur: tdur}
	}
	events := []traceEvent{
		{Name: "bench-start", Cat: "blink.user_timing", Ph: "R", Pid: 7, Tid: 1, Ts: 100_000},
		// 80 ms on the clock, 12 ms of work: the machine was busy.
		ev("ThreadControllerImpl::RunTask", "toplevel", 110_000, 80_000, 12_000),
		ev("Layout", "devtools.timeline", 111_000, 70_000, 8_000),
		// 60 ms of work: 30 in the task, 30 in its checkpoint.
		ev("ThreadControllerImpl::RunTask", "toplevel", 200_000, 30_000, 30_000),
		ev("FunctionCall", "devtools.timeline", 200_100, 29_000, 29_000),
		ev(microtasks, "toplevel", 230_050, 30_000, 30_000),
		ev("ThreadControllerImpl::RunTask", "toplevel", 300_000, 10_000, 10_000),
		{Name: "bench-end", Cat: "blink.user_timing", Ph: "R", Pid: 7, Tid: 1, Ts: 400_000},
	}
	var res Result
	require.NoError(t, fromTrace(events, &res))
	require.Equal(t, 2, res.LongTasksOver50)
	require.Equal(t, 1, res.TasksOver50CPU)
	require.InDelta(t, 60, res.LongestTaskCPU, 1e-9)
	require.Len(t, res.Long, 2)
	require.InDelta(t, 10, res.Long[0].AtMs, 1e-9)
	require.InDelta(t, 12, res.Long[0].CPUMs, 1e-9)
	require.Equal(t, "Layout 70/8 ms", res.Long[0].Parts)
	require.InDelta(t, 60.05, res.Long[1].Ms, 1e-9)
	require.Equal(t, "microtask checkpoint 30/30 ms; FunctionCall 29/29 ms", res.Long[1].Parts)
	require.Len(t, res.taskTimes, 3)
}

func TestProfileSummaryCountsSelfTimeBetweenTheMarksOnly(t *testing.T) {
	p := &profiler.Profile{
		Nodes: []*profiler.ProfileNode{
			{ID: 1, CallFrame: &cdpruntime.CallFrame{FunctionName: "(root)"}},
			{ID: 2, CallFrame: &cdpruntime.CallFrame{FunctionName: "valueSet", URL: "http://x/trickle/wasm_exec.js"}},
			{ID: 3, CallFrame: &cdpruntime.CallFrame{FunctionName: "(idle)"}},
		},
		StartTime: 1_000,
		// Samples at 1100 (before the marks), 2000, 3000, 4000, 9000.
		Samples:    []int64{2, 2, 3, 2, 2},
		TimeDeltas: []int64{100, 900, 1000, 1000, 5000},
	}
	top, total := profileSummary(p, 1_500, 5_000)
	// 2000 → valueSet for 1 ms (to the next sample), 3000 idle (left
	// out), 4000 → valueSet for 5 ms; 1100 and 9000 are outside.
	require.Equal(t, []selfTime{{"valueSet wasm_exec.js", 6}}, top)
	require.InDelta(t, 6.0, total, 1e-9)
}

// The latency answer's words come out of a one-shot render in order, each
// once: whatever the markup around them, the probe can read the last word
// on screen.
func TestMarkerTokensRenderEveryWordOnceInOrder(t *testing.T) {
	for _, n := range []int{1, 7, 24, 25, 100, 1500} {
		tokens := markerTokens(n)
		require.Len(t, tokens, n)
		html, err := render.Convert(strings.Join(tokens, ""))
		require.NoError(t, err)
		words := regexp.MustCompile(`w\d{5}`).FindAllString(html, -1)
		require.Len(t, words, n, "n=%d", n)
		for i, w := range words {
			require.Equal(t, fmt.Sprintf("w%05d", i), w)
		}
		for i, tok := range tokens {
			require.Equal(t, 1, strings.Count(tok, "w"), "token %d (%q) is one word", i, tok)
		}
	}
}

func TestLatenciesMatchEachTokenToTheFirstFrameThatShowsIt(t *testing.T) {
	// Server clock 1000 ms ahead of the page's.
	sent := []float64{1100, 1100, 1110, 1130}
	page := markPage{AskedAt: 50, Painted: [][2]float64{{105, 0}, {120, 2}, {150, 3}}}
	page.Clock = &clockSample{RTT: 1, Offset: 1000}
	l, err := latencies(sent, page)
	require.NoError(t, err)
	// Arrivals (page clock) 100, 100, 110, 130 → painted 105, 120, 120, 150.
	require.Equal(t, 4, l.Tokens)
	require.InDelta(t, 5, l.First, 1e-9)
	require.InDelta(t, 55, l.AskToFirst, 1e-9)
	require.InDelta(t, 20, l.Max, 1e-9)
	require.InDelta(t, 20, l.P95, 1e-9)
	require.InDelta(t, 10, l.P50, 1e-9) // sorted 5, 10, 20, 20

	page.Painted = page.Painted[:2]
	_, err = latencies(sent, page)
	require.ErrorContains(t, err, "token 3 of 4 was never painted")
	page.Clock = nil
	_, err = latencies(sent, page)
	require.ErrorContains(t, err, "clock")
}

func TestPaceTokensReportsEveryTokenFlushedOnce(t *testing.T) {
	tokens := markerTokens(50)
	seen := make([]int, len(tokens))
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paced.Serve(w, r, tokens, 5_000, func(from, to int, _ time.Time) {
			mu.Lock()
			defer mu.Unlock()
			for i := from; i < to; i++ {
				seen[i]++
			}
		})
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	for i, n := range seen {
		require.Equal(t, 1, n, "token %d", i)
	}
}

func TestWidgetSizeCountsTheFilesTheDefaultWidgetLoads(t *testing.T) {
	dir := t.TempDir()
	files := map[string]int{
		"trickle.js": 10, "trickle.js.br": 4, "trickle.a.wasm": 100, "trickle.a.wasm.br": 40,
		"trickle-worker.b.js": 20, "trickle-worker.b.js.br": 7,
		"trickle-highlight.c.wasm": 300, "trickle-highlight.c.wasm.br": 120, // not loaded by default
	}
	for name, n := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644))
	}
	manifest := `{"loader":"trickle.js","wasm":"trickle.a.wasm","worker":"trickle-worker.b.js","highlight_wasm":"trickle-highlight.c.wasm","go":"go1.26"}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644))
	s, err := widgetSize(dir)
	require.NoError(t, err)
	require.Equal(t, int64(4+40+7), s.Total)
	require.Equal(t, map[string]int64{"trickle.js": 4, "trickle.a.wasm": 40, "trickle-worker.b.js": 7}, s.Files)

	require.NoError(t, os.Remove(filepath.Join(dir, "trickle-worker.b.js.br")))
	_, err = widgetSize(dir)
	require.ErrorContains(t, err, "worker")
}

// The stylesheet's file counts when the page loads it, and not when the
// loader carries the stylesheet (css_inline).
func TestWidgetSizeCountsTheStylesheetOnlyWhenItIsAFileThePageLoads(t *testing.T) {
	for _, tc := range []struct {
		inline string
		want   int64
	}{{"false", 4 + 40 + 3}, {"true", 4 + 40}} {
		t.Run("css_inline="+tc.inline, func(t *testing.T) {
			dir := t.TempDir()
			for name, n := range map[string]int{"trickle.js.br": 4, "trickle.a.wasm.br": 40, "trickle.d.css.br": 3} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644))
			}
			manifest := `{"loader":"trickle.js","wasm":"trickle.a.wasm","css":"trickle.d.css","css_inline":` + tc.inline + `}`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(manifest), 0o644))
			s, err := widgetSize(dir)
			require.NoError(t, err)
			require.Equal(t, tc.want, s.Total)
		})
	}
}

func TestTheMegabyteAnswerRenamesEachPassHeadingsOnly(t *testing.T) {
	in := "# Title\n\nText with a # sign.\n\n```sh\n# a comment\n```\n\n## Part\n    # indented code\n"
	got := repeatAnswer(in, 2)
	require.Equal(t, 2, strings.Count(got, "# a comment\n"), "code is not touched")
	require.Equal(t, 2, strings.Count(got, "    # indented code\n"))
	for _, k := range []string{"1", "2"} {
		require.Contains(t, got, "# Title · part "+k+"\n")
		require.Contains(t, got, "## Part · part "+k+"\n")
	}
	require.Equal(t, 2, strings.Count(got, "Text with a # sign."))
	require.Equal(t, in, repeatAnswer(in, 1))
}

// The open-code-fence answers have TanStack Markdown's published shape:
// exactly kib KiB, a heading, then a TypeScript fence that never closes,
// every line of code a route but the last, which is cut short.
func TestFenceAnswersAreOneHeadingThenAFenceThatNeverCloses(t *testing.T) {
	line := regexp.MustCompile(`^const route(\d+): Route = \{ path: '/api/(\d+)', enabled: true \}$`)
	for _, kib := range []int{1, 4, 16, 64} {
		answer, code := fenceAnswer(kib)
		require.Len(t, answer, kib*1024, "%d KiB", kib)
		require.Equal(t, answer, fenceHead+code)
		require.True(t, strings.HasPrefix(answer, "# Generated configuration\n\n```ts\n"))
		require.NotContains(t, code, "```", "the fence never closes")
		lines := strings.Split(code, "\n")
		last := lines[len(lines)-1]
		require.NotEmpty(t, last, "the last line is unfinished")
		require.False(t, line.MatchString(last), "the last line is cut short: %q", last)
		for i, l := range lines[:len(lines)-1] {
			m := line.FindStringSubmatch(l)
			require.NotNil(t, m, "line %d: %q", i, l)
			require.Equal(t, fmt.Sprint(i), m[1])
			require.Equal(t, m[1], m[2])
		}
		require.True(t, strings.HasPrefix(fmt.Sprintf("const route%d: Route = { path: '/api/%d', enabled: true }\n", len(lines)-1, len(lines)-1), last))
	}
}

func TestCodeCheckWantsTheWholeCodeTrailingWhiteSpaceAside(t *testing.T) {
	_, code := fenceAnswer(4)
	str := func(s string) *string { return &s }
	require.Equal(t, "ok", codeCheck(code, str(code)))
	require.Equal(t, "ok", codeCheck(code, str(code+"\n")), "a renderer may end code with a newline")
	require.Equal(t, "ok", codeCheck(code+"\n", str(code)))
	require.Contains(t, codeCheck(code, nil), "no <pre><code>")
	short := strings.TrimRight(code[:len(code)-3], " ")
	got := codeCheck(code, str(short))
	require.Contains(t, got, "failed")
	require.Contains(t, got, fmt.Sprintf("%d of %d characters", len(short), len(strings.TrimRight(code, " "))))
	got = codeCheck(code, str("x"+code[1:]))
	require.Contains(t, got, "first difference at character 0")
}

// The ratios pair the runs by repetition and show each widget against
// each markdown peer (not the text floor), and the fence check's failures.
func TestPrintPeersPairsRunsAndNamesEveryPeer(t *testing.T) {
	res := []Result{
		{Sample: "a", Renderer: "trickle", MainThread: 10, Layouts: 100, StyleRecalcs: 50, NodesTouched: 10, Script: 5, LongestTask: 3},
		{Sample: "a", Renderer: "smd", MainThread: 20, Layouts: 200, StyleRecalcs: 100, NodesTouched: 40, Script: 10, LongestTask: 6},
		{Sample: "a", Renderer: "streamdown", MainThread: 40, Layouts: 100, StyleRecalcs: 50, NodesTouched: 5, Script: 20, LongestTask: 9, CodeCheck: "failed: x"},
		{Sample: "a", Renderer: "text", MainThread: 5},
		{Sample: "a", Renderer: "trickle", MainThread: 30, Layouts: 100, StyleRecalcs: 50, NodesTouched: 10, Script: 5, LongestTask: 5},
		{Sample: "a", Renderer: "smd", MainThread: 20, Layouts: 200, StyleRecalcs: 100, NodesTouched: 40, Script: 10, LongestTask: 6},
		{Sample: "a", Renderer: "streamdown", MainThread: 40, Layouts: 100, StyleRecalcs: 50, NodesTouched: 5, Script: 20, LongestTask: 9, CodeCheck: "ok"},
	}
	out := captureStdout(t, func() { printPeers(res) })
	require.Contains(t, out, "| a | trickle / smd | 1.00× [0.50 – 1.50] | 0.50× [0.50 – 0.50] | 0.50× [0.50 – 0.50] | 0.25× [0.25 – 0.25] | 0.50× [0.50 – 0.50] | 4.0 ms, 6.0 ms |")
	require.Contains(t, out, "| a | trickle / streamdown | 0.50× [0.25 – 0.75] | 1.00× [1.00 – 1.00] |")
	require.NotContains(t, out, "trickle / text")
	require.Contains(t, out, "| a | streamdown | failed: x |")
	require.Contains(t, out, "| a | streamdown | ok |")
}

func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	f()
	os.Stdout = old
	w.Close()
	return <-done
}

func TestBundlingTheReactPeersWithoutThemInstalledSaysToInstallThem(t *testing.T) {
	_, err := bundleReactPeers(t.TempDir())
	require.ErrorContains(t, err, "run npm ci in")
}
