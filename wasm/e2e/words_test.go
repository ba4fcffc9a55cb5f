//go:build !(js && wasm)

package e2e_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// unauthorizedPage is what a proxy in front of a backend answers a request
// without credentials: an HTML page naming an internal URL.
const unauthorizedPage = `<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center><hr><p>Log in at http://auth.internal.example:8443/login</p></body></html>`

// unauthorized answers /custom/401: a 401 with an HTML body.
func unauthorized(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, unauthorizedPage)
}

// seenByReader is what the page shows and speaks of element #a: the
// visible text (every part but the screen reader's), the spoken status,
// and the console errors so far.
type seenByReader struct {
	Visible string   `json:"visible"`
	Spoken  string   `json:"spoken"`
	Console []string `json:"console"`
	Heard   []string `json:"heard"` // every status the status region said, in order
}

const readerView = `(() => {
	const a = document.getElementById("a");
	const c = a.cloneNode(true);
	for (const n of c.querySelectorAll('[data-trickle="sr-status"], [data-trickle="announcer"], [hidden]')) n.remove();
	return { visible: c.textContent, spoken: a.querySelector('[data-trickle="sr-status"]').textContent, console: window.__consoleErrors, heard: window.__heard };
})()`

// listen records console.error and every status the status region says.
const listen = `(() => {
	window.__consoleErrors = [];
	const err = console.error;
	console.error = (...args) => { window.__consoleErrors.push(args.map(String).join(" ")); err(...args); };
	window.__heard = [];
	const sr = document.getElementById("a").querySelector('[data-trickle="sr-status"]');
	new MutationObserver(() => { if (sr.textContent) window.__heard.push(sr.textContent); }).observe(sr, { childList: true, characterData: true, subtree: true });
	return true;
})()`

func readerSafe(t *testing.T, what, text string) {
	t.Helper()
	for _, bad := range []string{"<", "http", "://", "trickle:", "stream:", "internal", "Authorization Required"} {
		require.NotContains(t, strings.ToLower(text), strings.ToLower(bad), "%s: %q", what, text)
	}
}

func TestA401WithAnHTMLBodyShowsOnePlainSentenceOnceAndTheChainToTheDeveloper(t *testing.T) {
	ctx := tab(t)
	require.True(t, browsertest.Eval[bool](t, ctx, listen))
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/401"}, "hello")
	require.Equal(t, "failed", r.Status)

	const sentence = "The server refused the request (401)."
	require.Equal(t, sentence, r.Notice)
	require.True(t, r.NoticeShown)
	require.False(t, r.RetryShown, "asking again with the same credentials cannot help")
	require.Equal(t, "Answer failed.", r.ShownText, "the status line says the status, not the sentence again")

	v := browsertest.Eval[seenByReader](t, ctx, readerView)
	require.Equal(t, 1, strings.Count(v.Visible, sentence), "the sentence is shown once: %q", v.Visible)
	readerSafe(t, "visible text", v.Visible)
	require.Equal(t, "Answer failed. "+sentence, v.Spoken, "the listener hears the status, then why")
	readerSafe(t, "spoken status", v.Spoken)

	d := errorDetail(t, r)
	require.Equal(t, "refused", d.Reason)
	require.Equal(t, 401, d.HTTPStatus)
	require.Contains(t, d.Detail, "HTTP 401")
	require.Contains(t, d.Detail, "<h1>401 Authorization Required</h1>", "the developer gets the body")

	require.Len(t, v.Console, 1, "the chain goes to the console once: %q", v.Console)
	require.Contains(t, v.Console[0], "HTTP 401 at "+server(t)+"/custom/401: "+unauthorizedPage[:60])
}

func TestThePagesStringsReplaceTheWordsShownAndSpoken(t *testing.T) {
	ctx := tab(t)
	require.True(t, browsertest.Eval[bool](t, ctx, listen))
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => {
		const TrickleAnswer = customElements.get("trickle-answer");
		TrickleAnswer.strings = {
			responding: "Réponse en cours.", complete: "Réponse terminée.", failed: "Échec.",
			copy: "Copier", copyCode: "Copier le code", thinking: "Réflexion",
			jumpToLatest: "Aller à la fin", retry: "Réessayer", stalled: "On attend le modèle…",
		};
		document.getElementById("a").strings = { complete: "Réponse complète.", refused: "Le serveur a refusé la requête ({status})." };
		return true;
	})()`))
	part := func(name, prop string) string {
		return browsertest.Eval[string](t, ctx, `document.getElementById("a").querySelector('[data-trickle="`+name+`"]').`+prop)
	}
	require.Equal(t, "Réflexion", browsertest.Eval[string](t, ctx, `document.getElementById("a").querySelector('[data-trickle="thinking"] summary').textContent`), "shown words change at once")
	require.Equal(t, "Réessayer", part("retry", "textContent"))
	require.Equal(t, "Aller à la fin", part("jump", "textContent"))
	require.Equal(t, `"On attend le modèle…"`, browsertest.Eval[string](t, ctx, `getComputedStyle(document.getElementById("a")).getPropertyValue("--trickle-stall-text").trim()`),
		"the stall notice's words on screen are the stylesheet's, from the page's strings")

	a := `document.getElementById("a")`
	sr := a + `.querySelector('[data-trickle="sr-status"]').textContent`
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		a.setAttribute("endpoint", "/v1/chat/completions?answer=code");
		return await a.ask("code, please");
	})()`))
	browsertest.WaitFor(t, ctx, 20*time.Second, sr+` === "Réponse complète."`)
	v := browsertest.Eval[seenByReader](t, ctx, readerView)
	require.Equal(t, "Réponse en cours.", v.Heard[0], "the start status is the page's: %q", v.Heard)
	require.Equal(t, "Réponse complète.", v.Heard[len(v.Heard)-1], "so is the end's, the element's over the page's")
	require.Equal(t, "Réponse complète.", part("status", "textContent"), "and the status line's")
	require.Equal(t, "Copier", part("copy", "textContent"), "a code block's toolbar")
	require.Equal(t, "Copier le code", part("copy", `getAttribute("aria-label")`))
	require.NotContains(t, part("status", "textContent")+strings.Join(v.Heard, " "), "Answer", "no English status left")

	require.Equal(t, "failed", browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		a.setAttribute("endpoint", "/custom/401");
		return await a.ask("hello");
	})()`))
	browsertest.WaitFor(t, ctx, 20*time.Second, sr+` === "Échec. Le serveur a refusé la requête (401)."`)
	require.Equal(t, "Le serveur a refusé la requête (401).", part("notice-text", "textContent"))
	require.Equal(t, "Échec.", part("status", "textContent"))
}
