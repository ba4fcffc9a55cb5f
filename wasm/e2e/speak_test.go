//go:build !(js && wasm)

package e2e_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// recordSpeech puts a recorder in place of the browser's speechSynthesis:
// every utterance queued, with its text, language and rate, the time it was
// queued and whether the answer had ended by then; and each cancel.
const recordSpeech = `(() => {
	window.speech = { queued: [], cancels: 0, ended: false };
	const a = document.getElementById("a");
	a.addEventListener("trickle-end", () => { window.speech.ended = true; });
	a.addEventListener("trickle-start", () => { window.speech.ended = false; });
	Object.defineProperty(window, "speechSynthesis", { configurable: true, value: {
		speak: (u) => window.speech.queued.push({ text: u.text, lang: u.lang, rate: u.rate, ended: window.speech.ended }),
		cancel: () => window.speech.cancels++,
		getVoices: () => [],
	} });
	return true;
})()`

type utterance struct {
	Text  string  `json:"text"`
	Lang  string  `json:"lang"`
	Rate  float64 `json:"rate"`
	Ended bool    `json:"ended"`
}

// <trickle-answer speak> reads the answer aloud as it streams: one
// utterance per sentence the announcer confirms, in order, none twice or
// cut mid-sentence, the first queued before the answer ended; the page's
// rate and the element's language; Stop and a new ask cancel what was
// queued; without speechSynthesis the attribute does nothing and metrics
// say so.
func TestSpeakReadsTheAnswerAloudSentenceBySentenceWhileItStreams(t *testing.T) {
	ctx := tab(t)
	require.True(t, browsertest.Eval[bool](t, ctx, recordSpeech))
	t.Cleanup(func() {
		browsertest.Eval[bool](t, ctx, `(() => { const a = document.getElementById("a"); a.removeAttribute("speak"); a.removeAttribute("lang"); a.speech = {}; delete window.speechSynthesis; return true; })()`)
	})
	browsertest.Eval[bool](t, ctx, `(() => { const a = document.getElementById("a"); a.speech = { rate: 1.25 }; return true; })()`)

	r := ask(t, ctx, map[string]string{"speak": "", "lang": "en-GB", "endpoint": "/v1/chat/completions?answer=sample-20k&gap_ms=0.3&token_chars=12"}, "hello")
	require.Equal(t, "complete", r.Status)
	// The announcer joins the sentences confirmed together into one
	// announcement; speech says them one an utterance.
	heard := strings.Join(r.Announced, " ")
	var got []utterance
	spoken := func() string {
		got = browsertest.Eval[[]utterance](t, ctx, `window.speech.queued`)
		texts := make([]string, len(got))
		for i, u := range got {
			texts[i] = u.Text
		}
		return strings.Join(texts, " ")
	}
	require.Eventually(t, func() bool { return spoken() == heard }, 10e9, 50e6, "every sentence the announcer said is spoken, in order")
	t.Logf("%d announcements, %d utterances", len(r.Announced), len(got))
	require.Greater(t, len(got), len(r.Announced), "one utterance a sentence, not an announcement")
	for _, u := range got {
		require.Equal(t, "en-GB", u.Lang)
		require.Equal(t, 1.25, u.Rate)
		require.Regexp(t, `[.!?…,;:]["”’)\]]*$`, u.Text, "not cut mid-sentence")
	}
	seen := map[string]bool{}
	for _, u := range got {
		require.False(t, seen[u.Text], "spoken twice: %q", u.Text)
		seen[u.Text] = true
	}
	require.False(t, got[0].Ended, "the first sentence is queued while the answer streams")
	require.Equal(t, "on", r.Metrics["speech"])

	// A new ask drops what was queued; so does Stop.
	cancels := browsertest.Eval[map[string]int](t, ctx, `(async () => {
		const a = document.getElementById("a");
		const before = window.speech.cancels;
		a.setAttribute("endpoint", "/v1/chat/completions?answer=sample-20k&gap_ms=2");
		const done = a.ask("again");
		const t0 = performance.now();
		while (window.speech.queued.length < `+itoa(len(got)+2)+` && performance.now() - t0 < 10000) await new Promise((r) => setTimeout(r, 10));
		const asked = window.speech.cancels - before;
		a.stop();
		const stopped = window.speech.cancels - before - asked;
		await done;
		return { asked, stopped, status: a.status === "stopped" ? 1 : 0 };
	})()`)
	require.Equal(t, map[string]int{"asked": 1, "stopped": 1, "status": 1}, cancels, "a new ask and Stop each cancel the speech")

	// Without speechSynthesis: nothing, and metrics say so.
	r = browsertest.Eval[result](t, ctx, `(async () => {
		delete window.speechSynthesis;
		const s = window.SpeechSynthesisUtterance;
		window.SpeechSynthesisUtterance = undefined;
		const a = document.getElementById("a");
		a.setAttribute("endpoint", "/v1/chat/completions?answer=short&gap_ms=0.5");
		await a.ask("quiet");
		window.SpeechSynthesisUtterance = s;
		return { status: a.status, metrics: a.metrics };
	})()`)
	require.Equal(t, "complete", r.Status)
	require.Equal(t, "unavailable", r.Metrics["speech"])
}
