//go:build !(js && wasm)

package engines_test

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/relay"
	"github.com/trickle-dev/trickle/relay/relaytest"
)

// The diagram sanitizer in Firefox, as wasm/e2e's
// TestAHostileDiagramCanNeitherFetchNorCoverThePageNorClobberAGlobal holds
// it in Chromium: a diagram made from model output (a prompt injection's)
// can neither fetch from another origin (image-set in a fill, a cursor on
// hover), nor cover the page (position: fixed), nor clobber a page's
// global by its id.
func TestAHostileDiagramCanNeitherFetchNorCoverThePageNorClobberAGlobalInFirefox(t *testing.T) {
	if _, err := fs.Stat(assets.Widget(), "trickle.js"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the widget is not built into assets/widget (make build runs before the tests)")
		}
		t.Skip("the widget is not built: run make build first")
	}
	if err := firefoxMissing(); err != nil {
		if strings.EqualFold(os.Getenv("CI"), "true") {
			t.Fatalf("%v (Debian: firefox-esr); CI=true, so the Firefox tests must run", err)
		}
		t.Skipf("skipping: %v (Debian: firefox-esr)", err)
	}
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "image/png")
	}))
	t.Cleanup(other.Close)
	_, rl := relaytest.Start(t, relay.WithWidget(assets.Widget()))
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, strings.NewReplacer("RELAY", rl.URL, "OTHER", other.URL).Replace(diagramPage))
		case "/answer":
			// The answer as markdown text, a few bytes at a time.
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			flusher := w.(http.Flusher)
			text := "A flow:\n\n```mermaid\ngraph TD\n  A --> B\n```\n\nDone.\n"
			for i := 0; i < len(text); i += 8 {
				io.WriteString(w, text[i:min(len(text), i+8)])
				flusher.Flush()
				time.Sleep(2 * time.Millisecond)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(page.Close)

	ctx, cancel := context.WithTimeout(context.Background(), engineTimeout)
	defer cancel()
	d := startFirefox(t, ctx).(*bidi)
	require.NoError(t, d.navigate(ctx, page.URL+"/"))
	var drawn struct {
		Error, Status string
		X, Y          float64
	}
	require.NoError(t, json.Unmarshal([]byte(poll(t, ctx, d, `window.drawn || ""`)), &drawn))
	require.Empty(t, drawn.Error)
	require.Equal(t, "complete", drawn.Status)

	// Hover the drawing, so that a cursor image would be fetched.
	_, err := d.call(ctx, "input.performActions", map[string]any{"context": d.context, "actions": []any{map[string]any{
		"type": "pointer", "id": "mouse", "parameters": map[string]any{"pointerType": "mouse"},
		"actions": []any{map[string]any{"type": "pointerMove", "x": int(drawn.X), "y": int(drawn.Y)}},
	}}})
	require.NoError(t, err)
	raw, err := d.eval(ctx, `(async () => {
		// Two frames after the hover, for the cursor and the fills to load if they could.
		await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
		await fetch(location.href, { cache: "no-store" }); // a round trip the page's requests went before
		const fig = document.querySelector('#a [data-trickle="diagram"]').getBoundingClientRect();
		const svg = document.querySelector('#a [data-trickle="diagram"] svg').getBoundingClientRect();
		return JSON.stringify({ global: JSON.stringify(window.appSettings), byId: document.getElementById("appSettings") === null,
			inside: svg.top >= fig.top - 1 && svg.bottom <= fig.bottom + 1 && svg.left >= fig.left - 1 && svg.right <= fig.right + 1,
			covers: svg.left <= 0 && svg.top <= 0 && svg.right >= innerWidth && svg.bottom >= innerHeight,
			cursor: getComputedStyle(document.querySelector('#a [data-trickle="diagram"] rect')).cursor });
	})()`)
	require.NoError(t, err)
	var got struct {
		Global         string
		ByID           bool `json:"byId"`
		Inside, Covers bool
		Cursor         string
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &got), raw)
	require.Equal(t, `{"safe":true}`, got.Global, "the page's global is its own")
	require.True(t, got.ByID, "getElementById finds none of the diagram's ids")
	require.True(t, got.Inside, "the drawing stays inside its box")
	require.False(t, got.Covers, "the diagram does not cover the page")
	require.NotContains(t, got.Cursor, "image-set")
	require.Zero(t, hits.Load(), "nothing was fetched from the other origin")
}

// diagramPage loads the widget from the relay (RELAY) and gives it a
// diagram hook that returns a hostile drawing reaching for OTHER; once
// the drawing is in, window.drawn holds the answer's status and the
// middle of the drawing's rectangle.
const diagramPage = `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>hostile diagram</title>
<script type="module" src="RELAY/trickle/trickle.js"></script>
<trickle-answer id="a" endpoint="/answer"></trickle-answer>
<script type="module">
window.appSettings = { safe: true };
try {
  await customElements.whenDefined("trickle-answer");
  const a = document.getElementById("a");
  a.diagram = () => '<svg id="appSettings" viewBox="0 0 100 40" style="position: fixed; inset: 0; width: 100vw; height: 100vh; z-index: 99999">' +
    '<rect id="getElementById" width="100" height="40" style="cursor: image-set(url(OTHER/cursor.png) 1x), auto; fill: image-set(url(OTHER/fill.png) 1x)"/>' +
    '<text x="4" y="20" style="position: fixed; top: 0">Click here</text></svg>';
  const status = await a.ask("diagram");
  let rect;
  for (let i = 0; i < 250 && !(rect = document.querySelector('#a [data-trickle="diagram"] rect')); i++) await new Promise((r) => setTimeout(r, 20));
  const b = rect.getBoundingClientRect();
  window.drawn = JSON.stringify({ status, x: b.x + b.width / 2, y: b.y + b.height / 2 });
} catch (err) {
  window.drawn = JSON.stringify({ error: String(err) + "\n" + (err?.stack ?? "") });
}
</script>
</html>
`
