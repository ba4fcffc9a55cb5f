package examples_test

import (
	"context"
	"flag"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/examples"
	"github.com/trickle-dev/trickle/internal/browsertest"
	"github.com/trickle-dev/trickle/relay"
)

// -screenshots DIR saves a picture of each example once its answer has
// finished (docs/screenshots is made this way:
// go test ./examples -run Page -screenshots ../docs/screenshots).
var screenshots = flag.String("screenshots", "", "directory to save a PNG of each example page into")

// startExamples serves the relay with the built widget and the pages on
// loopback and returns a browser tab and the server's URL. The widget must
// be built (make build); without it the test is skipped, except in CI.
func startExamples(t *testing.T) (context.Context, string) {
	t.Helper()
	browsertest.Available(t)
	if _, err := fs.Stat(examples.Widget(), "trickle.js"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the widget is not built into examples/widget (make build runs before the tests)")
		}
		t.Skip("the widget is not built: run make build first")
	}
	srv, err := relay.New(relay.WithWidget(examples.Widget()), relay.WithPages(examples.Pages()),
		relay.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		ts.Close()
	})
	return browsertest.New(t, browsertest.WithWindowSize(1280, 900)), ts.URL
}

// run runs actions on the tab with an overall limit.
func run(t *testing.T, tab context.Context, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(browsertest.Timeout(t, tab, d), actions...))
}

// eval evaluates a JavaScript expression on the tab.
func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(browsertest.Timeout(t, tab, 10*time.Second), chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	require.NoError(t, err, expr)
	return v
}

// waitFor polls a JavaScript expression until it is truthy.
func waitFor(t *testing.T, tab context.Context, d time.Duration, expr string) {
	t.Helper()
	_, err := chromedp.Run(browsertest.Timeout(t, tab, d+5*time.Second),
		chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(50*time.Millisecond)))
	require.NoErrorf(t, err, "waiting for %s", expr)
}

func shoot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	// Let the last frame and any status announcement settle.
	time.Sleep(300 * time.Millisecond)
	png, err := chromedp.Run(browsertest.Timeout(t, tab, 20*time.Second), chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(*screenshots, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(*screenshots, name+".png"), png, 0o644))
}

// shortAnswer is the relay's canned "short" answer, the one these tests
// ask for.
func shortAnswer(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "relay", "sim", "answers", "short.md"))
	require.NoError(t, err)
	return string(b)
}

func metric(t *testing.T, tab context.Context, scope, key string) string {
	t.Helper()
	return eval[string](t, tab, `document.querySelector(`+strconv.Quote(scope+` dd[data-key="`+key+`"]`)+`).textContent`)
}

func TestIndexPageLinksToEveryExample(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 20*time.Second, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".cards")))
	links := eval[[]string](t, tab, `[...document.querySelectorAll(".cards a")].map(a => a.href)`)
	require.Len(t, links, 3)
	for _, l := range links {
		run(t, tab, 20*time.Second, chromedp.Navigate(l), chromedp.WaitReady(chromedp.CSS("trickle-answer [data-trickle=content]")))
	}
	run(t, tab, 20*time.Second, chromedp.Navigate(base+"/examples/"), chromedp.WaitVisible(chromedp.CSS(".cards")))
	shoot(t, tab, "index")
}

func TestAnswerPageStreamsAnAnswerToCompletionAndShowsItsMetrics(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/answer/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
		chromedp.Click(chromedp.CSS("#go")),
	)
	waitFor(t, tab, 30*time.Second, `document.body.dataset.lastStatus`)

	require.Equal(t, "complete", eval[string](t, tab, `document.body.dataset.lastStatus`))
	require.Equal(t, "complete", eval[string](t, tab, `document.getElementById("status").textContent`))
	require.Equal(t, strings.TrimSpace(shortAnswer(t)), strings.TrimSpace(eval[string](t, tab, `document.getElementById("answer").text`)))
	require.Contains(t, eval[string](t, tab, `document.querySelector('#answer [data-trickle="content"]').innerHTML`), "<pre>",
		"the answer's code block should be rendered as HTML")
	require.NotEqual(t, "–", metric(t, tab, "#metrics", "ttft_ms"), "time to first token should be shown")
	tokens, err := strconv.Atoi(metric(t, tab, "#metrics", "tokens"))
	require.NoError(t, err)
	require.Greater(t, tokens, 10)
	require.True(t, eval[bool](t, tab, `document.getElementById("stop").disabled && !document.getElementById("go").disabled`),
		"after the end Stop is disabled and Ask enabled again")
	shoot(t, tab, "answer")
}

func TestComparePageRecoversFromDroppedConnectionsOnBothTransportsWithIdenticalText(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/compare/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
		chromedp.SetValue(chromedp.CSS(`input[name="ttft_ms"]`), "50"),
		// Fast enough that the page may lag behind the stream: at a cut the
		// browser discards events still queued in the fetch body, and a
		// resume that re-reads event 40 is cut again by the relay.
		chromedp.SetValue(chromedp.CSS(`input[name="gap_ms"]`), "5"),
		chromedp.SetValue(chromedp.CSS(`input[name="jitter_ms"]`), "0"),
		chromedp.SetValue(chromedp.CSS(`select[name="_fault"]`), "drop_after"),
		chromedp.SetValue(chromedp.CSS(`input[name="_n"]`), "40"),
		chromedp.Click(chromedp.CSS("#go")),
	)
	waitFor(t, tab, 45*time.Second, `document.body.dataset.done === "1"`)

	verdict := eval[string](t, tab, `document.getElementById("verdict").textContent + " | notices: " +
		[...document.querySelectorAll('[data-trickle="notice-text"]')].map(n => n.textContent).join(" / ")`)
	require.Equal(t, "true", eval[string](t, tab, `document.getElementById("verdict").dataset.ok`), verdict)
	sse := eval[string](t, tab, `document.getElementById("sse").text`)
	ws := eval[string](t, tab, `document.getElementById("websocket").text`)
	require.Equal(t, strings.TrimSpace(shortAnswer(t)), strings.TrimSpace(sse))
	require.Equal(t, sse, ws, "both transports should end with the same text")
	for _, side := range []string{"sse", "websocket"} {
		scope := `[data-side="` + side + `"]`
		require.Equal(t, "complete", eval[string](t, tab, `document.querySelector('`+scope+` .pill').textContent`), side)
		require.NotEqual(t, "0 ×", metric(t, tab, scope, "reconnects"), "%s should have resumed after the drop", side)
		require.Equal(t, eval[string](t, tab, `document.querySelector("#sse [data-trickle=content]").innerHTML`),
			eval[string](t, tab, `document.querySelector("#`+side+` [data-trickle=content]").innerHTML`), "same DOM on %s", side)
	}
	shoot(t, tab, "compare")
}

func TestScreenReaderLabHearsTrickleWithoutRepeatsAndTheNaiveRegionWithThem(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/a11y/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
		chromedp.SetValue(chromedp.CSS(`input[name="gap_ms"]`), "15"),
		// 3-character tokens: the first one, "Sur", already cuts a word, so
		// the naive region's first announcement is a fragment whatever the
		// timing.
		chromedp.SetValue(chromedp.CSS(`input[name="token_chars"]`), "3"),
		chromedp.Click(chromedp.CSS("#go")),
	)
	waitFor(t, tab, 45*time.Second, `document.body.dataset.done === "1"`)

	count := func(side, key string) int {
		t.Helper()
		n, err := strconv.Atoi(metric(t, tab, "#"+side+"-counts", key))
		require.NoError(t, err)
		return n
	}
	heard := eval[[]string](t, tab, `[...document.querySelectorAll("#t-log li > span")].map(s => s.textContent)`)
	t.Logf("Trickle said: %q", heard)
	t.Logf("the naive region was heard as: %q", eval[[]string](t, tab, `[...document.querySelectorAll("#n-log li")].map(s => s.textContent)`))
	require.Greater(t, count("t", "announcements"), 1, "Trickle should announce the answer sentence by sentence")
	require.Zero(t, count("t", "duplicates"), "Trickle never repeats a sentence")
	require.Zero(t, count("t", "fragments"), "Trickle never stops in the middle of a word")
	require.Greater(t, count("n", "duplicates"), 0, "the naive region repeats what was already heard")
	require.Greater(t, count("n", "fragments"), 0, "the naive region is heard in fragments")
	shoot(t, tab, "a11y")
}

// Faults that end the answer early end it the same way on both
// transports: same status, same text.
func TestComparePageEndsBothTransportsAlikeOnAnErrorOrAMissingEndMarker(t *testing.T) {
	tab, base := startExamples(t)
	for _, tc := range []struct{ fault, status string }{
		{"error_after", "failed"},
		{"no_end", "incomplete"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			run(t, tab, 30*time.Second,
				chromedp.Navigate(base+"/examples/compare/"),
				chromedp.WaitVisible(chromedp.CSS("#go")),
				chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
				chromedp.SetValue(chromedp.CSS(`input[name="ttft_ms"]`), "20"),
				chromedp.SetValue(chromedp.CSS(`input[name="gap_ms"]`), "2"),
				chromedp.SetValue(chromedp.CSS(`select[name="_fault"]`), tc.fault),
				chromedp.SetValue(chromedp.CSS(`input[name="_n"]`), "30"),
				chromedp.Click(chromedp.CSS("#go")),
			)
			waitFor(t, tab, 30*time.Second, `document.body.dataset.done === "1"`)
			for _, side := range []string{"sse", "websocket"} {
				require.Equal(t, tc.status, eval[string](t, tab, `document.querySelector('[data-side="`+side+`"] .pill').textContent`), side)
			}
			sse := eval[string](t, tab, `document.getElementById("sse").text`)
			require.NotEmpty(t, sse)
			require.Equal(t, sse, eval[string](t, tab, `document.getElementById("websocket").text`))
			require.Equal(t, "false", eval[string](t, tab, `document.getElementById("verdict").dataset.ok`),
				"the verdict must not claim the cut answer equals the reference")
		})
	}
}

// The answer page's Stop button stops the answer on screen and the
// generation on the relay.
func TestAnswerPageStopButtonStopsTheAnswerAndTheModel(t *testing.T) {
	tab, base := startExamples(t)
	run(t, tab, 30*time.Second,
		chromedp.Navigate(base+"/examples/answer/"),
		chromedp.WaitVisible(chromedp.CSS("#go")),
		chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "sample-100k"),
		chromedp.Click(chromedp.CSS("#go")),
	)
	waitFor(t, tab, 20*time.Second, `document.getElementById("answer").text.length > 200`)
	run(t, tab, 10*time.Second, chromedp.Click(chromedp.CSS("#stop")))
	waitFor(t, tab, 20*time.Second, `document.body.dataset.lastStatus`)
	require.Equal(t, "stopped", eval[string](t, tab, `document.body.dataset.lastStatus`))
	id := eval[string](t, tab, `document.getElementById("answer").streamId`)
	require.NotEmpty(t, id)

	// The relay learns of the stop asynchronously (DELETE or the closed
	// connection): poll its view of the stream.
	info := func() string {
		return eval[string](t, tab, `fetch("/v1/streams/`+id+`/info").then(r => r.text())`)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(info(), `"upstream_cancelled":true`) {
		require.True(t, time.Now().Before(deadline), "the relay should cancel the generation: %s", info())
		time.Sleep(100 * time.Millisecond)
	}
	require.Less(t, len(eval[string](t, tab, `document.getElementById("answer").text`)), 100000, "the answer stopped early")
}

// The lab's switch reaches the widget: "complete" says the answer once, at
// the end; "off" says nothing but the statuses.
func TestScreenReaderLabSwitchChangesWhatTrickleSays(t *testing.T) {
	tab, base := startExamples(t)
	for _, tc := range []struct {
		mode string
		max  int
	}{
		{"complete", 1},
		{"off", 0},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			run(t, tab, 30*time.Second,
				chromedp.Navigate(base+"/examples/a11y/"),
				chromedp.WaitVisible(chromedp.CSS("#go")),
				chromedp.SetValue(chromedp.CSS(`select[name="answer"]`), "short"),
				chromedp.SetValue(chromedp.CSS(`input[name="gap_ms"]`), "2"),
				chromedp.Click(chromedp.CSS(`input[name="_mode"][value="`+tc.mode+`"]`)),
				chromedp.Click(chromedp.CSS("#go")),
			)
			waitFor(t, tab, 45*time.Second, `document.body.dataset.done === "1"`)
			n, err := strconv.Atoi(metric(t, tab, "#t-counts", "announcements"))
			require.NoError(t, err)
			require.LessOrEqual(t, n, tc.max)
			if tc.mode == "complete" {
				require.Equal(t, 1, n, "the whole answer, once")
			}
			require.Positive(t, eval[int](t, tab, `document.querySelectorAll('#t-log .tag[data-kind="status"]').length`),
				"statuses are still said")
		})
	}
}
