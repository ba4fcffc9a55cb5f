//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/a11y"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/render"
	"github.com/trickle-dev/trickle/wasm/element"
)

var transports = []string{"sse", "websocket"}

// start begins an answer without waiting for it (window.__p holds the
// promise) and waits until at least minChars of text are on screen.
func start(t *testing.T, ctx context.Context, attrs map[string]string, minChars int) {
	t.Helper()
	var set strings.Builder
	for k, v := range attrs {
		set.WriteString("a.setAttribute(" + browsertest.JSString(k) + ", " + browsertest.JSString(v) + ");\n")
	}
	browsertest.Eval[bool](t, ctx, `(() => {
		const a = document.getElementById("a");
		`+set.String()+`
		window.__p = a.ask("go");
		return true;
	})()`)
	browsertest.WaitFor(t, ctx, 20*time.Second, `document.getElementById("a").text.length >= `+itoa(minChars)+` && document.querySelector('[data-trickle="content"]').textContent.length > 0`)
}

// stopAnswer presses Stop on the page's answer (#a, asked by start),
// requires that its call settles "stopped", and returns its stream's id.
func stopAnswer(t *testing.T, ctx context.Context) string {
	t.Helper()
	status := browsertest.Eval[string](t, ctx, `(async () => {
		document.getElementById("a").stop();
		return await window.__p;
	})()`)
	require.Equal(t, "stopped", status)
	id := browsertest.Eval[string](t, ctx, `document.getElementById("a").streamId`)
	require.NotEmpty(t, id)
	return id
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func info(t *testing.T, id string) relay.Info {
	t.Helper()
	resp, err := http.Get(server(t) + "/v1/streams/" + url.PathEscape(id) + "/info")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var in relay.Info
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&in))
	return in
}

func TestStopEndsTheAnswerAndTheRelayCancelsUpstream(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			ctx := tab(t)
			start(t, ctx, map[string]string{
				"endpoint":  "/v1/chat/completions?answer=sample-20k&gap_ms=5",
				"transport": tr,
			}, 200)
			id := stopAnswer(t, ctx)
			before := browsertest.Eval[string](t, ctx, `document.getElementById("a").text`)
			require.Eventually(t, func() bool {
				in := info(t, id)
				return in.UpstreamCancelled && in.State == relay.StateStopped && in.Readers == 0
			}, 5*time.Second, 50*time.Millisecond, "the relay reports the generation stopped, upstream cancelled and no reader left: %+v", info(t, id))
			// The connection is closed: anything that arrived after Stop
			// is on screen once Go's frames are applied.
			applied(t, ctx)
			r := browsertest.Eval[result](t, ctx, collect)
			require.Equal(t, before, r.Text, "nothing arrives after Stop")
			require.Equal(t, id, r.StreamID)
			require.Less(t, len(r.Text), len(canned(t, "sample-20k").Text))
			require.Equal(t, "Stopped.", r.Notice)
			require.False(t, r.Tail)
			sameDOM(t, ctx, r.Text, r.HTML)
		})
	}
}

func TestADroppedConnectionResumesWithIdenticalText(t *testing.T) {
	want := canned(t, "short").Text
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			ctx := tab(t)
			r := ask(t, ctx, map[string]string{
				"endpoint":  "/v1/chat/completions?answer=short&drop_after=25",
				"transport": tr,
			}, "drop me")
			require.Equal(t, "complete", r.Status, "notice: %s", r.Notice)
			require.Equal(t, want, r.Text, "nothing lost, nothing twice")
			sameDOM(t, ctx, r.Text, r.HTML)
			var m Metrics
			raw, _ := json.Marshal(r.Metrics)
			require.NoError(t, json.Unmarshal(raw, &m))
			require.GreaterOrEqual(t, m.Reconnects, 1, "the connection was resumed")
			requireAnnounced(t, r)
		})
	}
}

func TestAnAnswerWithoutItsEndMarkerShowsIncomplete(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			ctx := tab(t)
			r := ask(t, ctx, map[string]string{
				"endpoint":  "/v1/chat/completions?answer=short&no_end=1",
				"transport": tr,
			}, "cut")
			require.Equal(t, "incomplete", r.Status)
			require.Equal(t, canned(t, "short").Text, r.Text, "the text that came is kept")
			require.True(t, r.NoticeShown)
			require.Equal(t, "The answer ended before the model finished.", r.Notice)
			require.Equal(t, "Answer incomplete.", r.ShownText, "the status line does not repeat the notice")
			require.Equal(t, "Answer incomplete. "+r.Notice, r.StatusText, "the listener hears the status, then why")
			require.True(t, r.RetryShown, "a retry button is offered")
			require.NotEmpty(t, r.StatusText, "the screen reader hears how it ended")
			sameDOM(t, ctx, r.Text, r.HTML)
		})
	}
}

func TestAnErrorEventShowsTheError(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			ctx := tab(t)
			r := ask(t, ctx, map[string]string{
				"endpoint":  "/v1/chat/completions?answer=short&error_after=12",
				"transport": tr,
			}, "fail")
			require.Equal(t, "failed", r.Status)
			require.True(t, r.NoticeShown)
			require.Equal(t, "The model's service reported an error.", r.Notice)
			require.True(t, r.RetryShown)
			d := errorDetail(t, r)
			require.Equal(t, "upstream", d.Reason)
			require.NotEmpty(t, d.Detail, "the model's own error is the developer's")
			require.NotEmpty(t, r.Text, "the text before the error is kept")
			sameDOM(t, ctx, r.Text, r.HTML)
		})
	}
}

func TestTheXSSCorpusRunsNothingAndRequestsNoThirdPartyImage(t *testing.T) {
	ctx := tab(t)
	origin := server(t)

	sub, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var dialogs []string
	var wg sync.WaitGroup
	recorder := recordRequests(t, ctx)
	dlgs := chromedp.Events(sub, page.JavascriptDialogOpening)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev, err := range dlgs {
			if err != nil {
				return
			}
			mu.Lock()
			dialogs = append(dialogs, ev.Message)
			mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()

	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=xss&token_chars=7"}, "xss")
	require.Equal(t, "complete", r.Status)
	require.Equal(t, canned(t, "xss").Text, r.Text)
	// Any image the DOM holds is requested before the barrier is.
	requests := recorder.before(t, ctx, origin)
	cancel()
	wg.Wait()

	sameDOM(t, ctx, r.Text, r.HTML)
	pwned := browsertest.Eval[int](t, ctx, `window.__pwned`)
	require.Zero(t, pwned, "no script of the corpus ran")
	require.Empty(t, dialogs, "no dialog opened")
	unsafe := browsertest.Eval[[]string](t, ctx, `(() => {
		const c = document.querySelector('[data-trickle="content"]');
		const bad = [];
		for (const el of c.querySelectorAll("*")) {
			if (["SCRIPT", "IFRAME", "OBJECT", "EMBED", "STYLE", "FORM", "BASE", "META", "LINK"].includes(el.tagName)) bad.push(el.outerHTML);
			for (const at of el.attributes) {
				if (/^on/i.test(at.name) || /^\s*(javascript|vbscript|data):/i.test(at.value)) bad.push(el.outerHTML);
			}
		}
		return bad;
	})()`)
	require.Empty(t, unsafe, "no active content in the rendered answer")
	for _, u := range requests {
		require.True(t, strings.HasPrefix(u, origin+"/") || strings.HasPrefix(u, "data:"),
			"a request left the page's origin: %s", u)
	}
	require.NotEmpty(t, requests, "the request log is live (it saw the answer's own request)")
}

// requireAnnounced checks the announcer region against a11y's one-shot
// projection of the final text: exactly the expected units, in order, each
// once.
func requireAnnounced(t *testing.T, r result) {
	t.Helper()
	doc := document(t, element.RenderOptions(render.Policy{SameOrigin: relayURL})...)
	f := doc.Update(r.Text)
	blocks := append(f.Settled, doc.Finish().Settled...)
	var want []string
	for _, u := range a11y.Units(blocks) {
		want = append(want, u.Text)
	}
	require.NotEmpty(t, want)
	require.Equal(t, strings.Join(want, " "), strings.Join(r.Announced, " "),
		"the announcer said every unit once, in order")
}

func TestTheAnnouncerSaysEachUnitOnceAndTheStatusOnce(t *testing.T) {
	for _, answer := range []string{"short", "tool-call"} {
		t.Run(answer, func(t *testing.T) {
			ctx := tab(t)
			r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=" + answer + "&token_chars=3"}, withWeather("speak"))
			require.Equal(t, "complete", r.Status)
			requireAnnounced(t, r)
			require.NotEmpty(t, r.StatusText, "the end is announced in the status region")
			live := browsertest.Eval[[]string](t, ctx, `(() => {
				const q = (p) => document.querySelector('[data-trickle="' + p + '"]');
				return [q("announcer").getAttribute("role") ?? "", q("announcer").getAttribute("aria-live") ?? "",
					q("sr-status").getAttribute("role") ?? "", String(q("content").hasAttribute("aria-live"))];
			})()`)
			if browsertest.Eval[bool](t, ctx, `typeof document.getElementById("a").ariaNotify === "function"`) {
				// ariaNotify speaks (chat_walk_test.go): the regions are a silent record.
				require.Equal(t, []string{"", "", "", "false"}, live, "the visible answer is never a live region")
				return
			}
			require.Equal(t, []string{"log", "polite", "status", "false"}, live, "the visible answer is never a live region")
		})
	}
}

func TestTheAnnouncerRegionIsPresentAndEmptyBeforeAnything(t *testing.T) {
	ctx := tab(t)
	got := browsertest.Eval[[]string](t, ctx, `(() => {
		const a = document.getElementById("a");
		const n = a.querySelector('[data-trickle="announcer"]');
		const live = typeof a.ariaNotify === "function" ? ["log", "polite"] : [n.getAttribute("role"), n.getAttribute("aria-live")];
		return [a.status, ...live, String(n.childNodes.length)];
	})()`)
	require.Equal(t, []string{"idle", "log", "polite", "0"}, got, "present and empty (live, unless ariaNotify speaks: chat_walk_test.go)")
}

func TestSSEAndWebSocketGiveTheSameDOM(t *testing.T) {
	for _, answer := range []string{"thinking", "tool-call"} {
		t.Run(answer, func(t *testing.T) {
			ctx := tab(t)
			var got []result
			for _, tr := range transports {
				r := ask(t, ctx, map[string]string{
					"endpoint":  "/v1/chat/completions?answer=" + answer + "&dialect=anthropic&token_chars=5",
					"transport": tr,
				}, withWeather("same"))
				require.Equal(t, "complete", r.Status, tr)
				got = append(got, r)
			}
			require.Equal(t, got[0].HTML, got[1].HTML)
			require.Equal(t, got[0].Thinking, got[1].Thinking)
			require.Equal(t, got[0].Tools, got[1].Tools)
			// how sentences are grouped into announcements depends on
			// timing; what is said does not
			require.Equal(t, strings.Join(got[0].Announced, " "), strings.Join(got[1].Announced, " "))
			require.Equal(t, got[0].StatusText, got[1].StatusText)
		})
	}
}

func TestAReaderWhoScrolledUpStaysPut(t *testing.T) {
	ctx := tab(t)
	start(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&token_chars=24&gap_ms=3"}, 3000)
	browsertest.Eval[bool](t, ctx, `(() => { document.getElementById("a").scrollTop = 0; return true; })()`)
	status := browsertest.Eval[string](t, ctx, `window.__p`)
	require.Equal(t, "complete", status)
	got := browsertest.Eval[map[string]any](t, ctx, `(() => {
		const a = document.getElementById("a");
		return { top: a.scrollTop, overflow: a.scrollHeight > a.clientHeight + 1000,
			jump: !a.querySelector('[data-trickle="jump"]').hidden };
	})()`)
	require.Equal(t, 0.0, got["top"], "the reader was not moved")
	require.Equal(t, true, got["overflow"], "the answer overflows the element")
	require.Equal(t, true, got["jump"], "a jump-to-latest control is offered")

	browsertest.Eval[bool](t, ctx, `(() => { document.querySelector('#a [data-trickle="jump"]').click(); return true; })()`)
	// Jump to latest scrolls to the end and hides itself.
	browsertest.WaitFor(t, ctx, 20*time.Second, `(() => { const a = document.getElementById("a");
		return Math.abs(a.scrollHeight - a.clientHeight - a.scrollTop) <= 2 && a.querySelector('[data-trickle="jump"]').hidden; })()`)
}

func TestAReaderAtTheBottomIsFollowed(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&token_chars=24&gap_ms=1"}, "follow")
	require.Equal(t, "complete", r.Status)
	atEnd := browsertest.Eval[bool](t, ctx, `(() => {
		const a = document.getElementById("a");
		return a.scrollTop > 0 && Math.abs(a.scrollHeight - a.clientHeight - a.scrollTop) <= 2;
	})()`)
	require.True(t, atEnd)
}

func TestASelectionInSettledBlocksSurvivesStreaming(t *testing.T) {
	ctx := tab(t)
	start(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=sample-20k&token_chars=16&gap_ms=3"}, 1500)
	selected := browsertest.Eval[string](t, ctx, `(() => {
		const c = document.querySelector('[data-trickle="content"]');
		// The first settled block (the tail is always last), inside its
		// group of settled blocks.
		const first = c.querySelector('[data-trickle="settled"] > *') ?? c.firstElementChild;
		const range = document.createRange();
		range.selectNodeContents(first);
		const sel = window.getSelection();
		sel.removeAllRanges();
		sel.addRange(range);
		window.__selected = first;
		return sel.toString();
	})()`)
	require.NotEmpty(t, selected)
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__p`))
	after := browsertest.Eval[[]string](t, ctx, `(() => {
		const sel = window.getSelection();
		return [sel.toString(), String(window.__selected.isConnected), String(sel.anchorNode === window.__selected || window.__selected.contains(sel.anchorNode))];
	})()`)
	require.Equal(t, []string{selected, "true", "true"}, after, "the selected block was never replaced")
}

func TestTheAnnounceAttributeSelectsTheMode(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short", "announce": "off"}, "quiet")
	require.Equal(t, "complete", r.Status)
	require.Empty(t, r.Announced, "off: no content announcements")
	require.Equal(t, a11y.StatusComplete, r.StatusText, "off: statuses still")

	r = ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short", "announce": "complete"}, "once")
	require.Equal(t, "complete", r.Status)
	require.Len(t, r.Announced, 1, "complete: the whole answer once, at the end")
	requireAnnounced(t, r)
}

func TestTheRetryButtonAsksAgainAndMetricsCanBeShown(t *testing.T) {
	ctx := tab(t)
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short&error_after=5", "show-metrics": ""}, "flaky")
	require.Equal(t, "failed", r.Status)
	require.True(t, r.RetryShown)
	first := r.StreamID

	status := browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		const ended = new Promise((resolve) => a.addEventListener("trickle-end", (ev) => resolve(ev.detail.status), { once: true }));
		a.querySelector('[data-trickle="retry"]').click();
		return await ended;
	})()`)
	require.Equal(t, "failed", status, "the same request again (its fault included)")
	require.NotEqual(t, first, browsertest.Eval[string](t, ctx, `document.getElementById("a").streamId`), "a new stream")

	shown := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('[data-trickle="metrics"] dt')].map((d) => d.textContent)`)
	require.Contains(t, shown, "Time to first token")
	require.Contains(t, shown, "Buffering")
}

func TestAnAnswerEndsWithoutAnimationFrames(t *testing.T) {
	ctx := tab(t)
	// A page hidden mid-answer gets no animation frames; headless tabs are
	// always visible, so take requestAnimationFrame away instead.
	status := browsertest.Eval[string](t, ctx, `(async () => {
		window.requestAnimationFrame = () => 0;
		const a = document.getElementById("a");
		a.setAttribute("endpoint", "/v1/chat/completions?answer=short");
		return await a.ask("hidden");
	})()`)
	require.Equal(t, "complete", status)
	r := browsertest.Eval[result](t, ctx, collect)
	require.Equal(t, canned(t, "short").Text, r.Text)
	sameDOM(t, ctx, r.Text, r.HTML)
}
