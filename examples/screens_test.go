package examples_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/sse"
)

// readingAnswer is the answer the README's reading-aid screenshots show: a
// highlighted code block with its toolbar, a table with its Copy button,
// and a last paragraph that stalls mid-sentence (at readingHold), so the
// caret carries the stall notice.
const readingAnswer = "### Reversing a string in Go\n\n" +
	"A Go string is UTF-8 bytes, so reverse its **runes**, not its bytes:\n\n" +
	"```go\nfunc Reverse(s string) string {\n\tr := []rune(s)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n```\n\n" +
	"| input | output |\n| --- | --- |\n| `\"hello\"` | `\"olleh\"` |\n| `\"héllo\"` | `\"olléh\"` |\n\n" +
	"Letters with combining accents need grapheme clusters, which"

// readingPage is a plain page with one highlighting element, sized for a
// README picture.
const readingPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Reading aids · Trickle</title>
<script type="module" src="/trickle/trickle.js"></script>
<style>
:root { color-scheme: light dark; }
body { margin: 0; padding: 12px; background: Canvas; }
#a { width: 640px; padding: 18px 22px; border: 1px solid var(--trickle-border); border-radius: 10px; --trickle-max-height: none; }
</style>
</head><body>
<trickle-answer id="a" highlight></trickle-answer>
</body></html>`

// serveScreens serves the screenshot pages (/screens/reading; /screens/chat,
// chat_look_test.go) and the reading page's
// answer (/screens/answer: readingAnswer in the plain dialect, a few
// characters per event, held open at its end as a stalled model would).
func serveScreens(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/screens/chat" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, plainChatPage)
		return
	}
	if r.URL.Path == "/screens/reading" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, readingPage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for i := 0; i < len(readingAnswer); {
		// Cut on a character boundary, as a model's deltas are.
		j := min(len(readingAnswer), i+12)
		for j < len(readingAnswer) && !utf8.RuneStart(readingAnswer[j]) {
			j++
		}
		d, _ := json.Marshal(map[string]string{"delta": readingAnswer[i:j]})
		i = j
		w.Write(sse.AppendMessage(nil, sse.Message{Data: string(d)}))
		f.Flush()
		time.Sleep(3 * time.Millisecond)
	}
	<-r.Context().Done()
}

// The reading aids as a reader sees them, in the light and the dark theme
// (the reader's prefers-color-scheme): settled code highlighted with its
// toolbar, a table with its Copy button, and the live tail's caret carrying
// "Waiting for the model…" while the model is silent. With -screenshots
// DIR it saves each theme's picture, cropped to the element
// (docs/screenshots/reading-light.png and reading-dark.png; make
// screenshots).
func TestReadingAidsInTheLightAndTheDarkTheme(t *testing.T) {
	for _, tc := range []struct{ scheme, background, keyword string }{
		{"light", "rgb(255, 255, 255)", "rgb(207, 34, 46)"},
		{"dark", "rgb(22, 24, 28)", "rgb(255, 123, 114)"},
	} {
		t.Run(tc.scheme, func(t *testing.T) {
			tab, base := startExamples(t)
			_, err := chromedp.Call(browsertest.Timeout(t, tab, 10*time.Second), emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: tc.scheme}},
			})
			require.NoError(t, err)
			run(t, tab, 20*time.Second, chromedp.Navigate(base+"/screens/reading"), chromedp.WaitReady(chromedp.CSS(`#a [data-trickle="content"]`)))
			browsertest.Eval[bool](t, tab, `(async () => { await customElements.whenDefined("trickle-answer");
				document.getElementById("a").stream("/screens/answer"); return true; })()`)
			browsertest.WaitFor(t, tab, 20*time.Second, `document.getElementById("a").hasAttribute("data-trickle-stalled")`)

			got := browsertest.Eval[map[string]string](t, tab, `(() => {
				const a = document.getElementById("a");
				const q = (s) => a.querySelector(s);
				const tailEnd = q('[data-trickle="tail"] > p:last-child');
				return {
					background: getComputedStyle(a).backgroundColor,
					keyword: getComputedStyle(q(".hl-kd")).color,
					lang: q('[data-trickle="code-lang"]').textContent,
					copy: q('[data-trickle="code-toolbar"] [data-trickle="copy"]').textContent,
					table: q('[data-trickle="table-toolbar"] [data-trickle="copy-table"]').textContent,
					cell: q("table tr:last-child td").textContent,
					tail: tailEnd ? tailEnd.textContent : "",
					notice: tailEnd ? getComputedStyle(tailEnd, "::after").content : "",
				};
			})()`)
			require.Equal(t, map[string]string{
				"background": tc.background, "keyword": tc.keyword, "lang": "go", "copy": "Copy", "table": "Copy table", "cell": `"héllo"`,
				"tail": "Letters with combining accents need grapheme clusters, which", "notice": `"Waiting for the model…" / ""`,
			}, got, "the %s theme, the settled blocks' toolbars, the stalled tail", tc.scheme)

			if *screenshots != "" {
				png, err := chromedp.Run(browsertest.Timeout(t, tab, 20*time.Second), chromedp.Screenshot(chromedp.CSS("#a")))
				require.NoError(t, err)
				require.NoError(t, os.MkdirAll(*screenshots, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(*screenshots, "reading-"+tc.scheme+".png"), png, 0o644))
			}
			browsertest.Eval[string](t, tab, `(async () => { const a = document.getElementById("a"); a.stop();
				await new Promise((r) => a.addEventListener("trickle-end", r, { once: true })); return a.status; })()`)
		})
	}
}

// Every picture the README and the docs show is in the repository.
func TestEveryScreenshotTheDocsShowExists(t *testing.T) {
	img := regexp.MustCompile(`!\[[^\]]*\]\(([^)\s]+\.png)\)`)
	seen := 0
	for _, doc := range []string{"../README.md", "../docs/reading.md", "../docs/examples.md"} {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range img.FindAllStringSubmatch(string(b), -1) {
			seen++
			p := filepath.Join(filepath.Dir(doc), m[1])
			st, err := os.Stat(p)
			require.NoError(t, err, "%s shows %s", doc, m[1])
			require.Greater(t, st.Size(), int64(1000), "%s is a picture", p)
			require.True(t, strings.HasPrefix(filepath.ToSlash(filepath.Clean(p)), "../docs/screenshots/"), "%s keeps its pictures in docs/screenshots", doc)
		}
	}
	require.GreaterOrEqual(t, seen, 6, "the README's answer page and both themes, and the docs' pages")
}
