//go:build !(js && wasm)

package e2e_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/assets"
	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
	"github.com/trickle-dev/trickle/relay"
)

// A <trickle-chat>'s attributes take effect in its answers (issue 31: the
// chat forwarded `images`, which no answer reads, and never ws-endpoint,
// show-metrics or speak): its answer streams over the chat's ws-endpoint,
// shows its metrics, reads aloud and allows the chat's image origins.
func TestAChatsAttributesTakeEffectInItsAnswers(t *testing.T) {
	srv, err := relay.New(relay.WithWidget(assets.Widget()),
		relay.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		relay.WithSimDefaults(relay.SimDefaults{TTFT: 5 * time.Millisecond, Gap: time.Millisecond, TokenChars: 4}))
	require.NoError(t, err)
	var mu sync.Mutex
	var wsQueries []string
	h := srv.Handler()
	mux := http.NewServeMux()
	mux.HandleFunc("/e2e", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, pageHTML())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/ws" {
			mu.Lock()
			wsQueries = append(wsQueries, r.URL.RawQuery)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	ctx := tabAt(t, ts.URL)

	got := browsertest.Eval[map[string]any](t, ctx, `(async () => {
		await customElements.whenDefined("trickle-chat");
		const c = document.createElement("trickle-chat");
		c.setAttribute("endpoint", "/v1/chat/completions");
		c.setAttribute("transport", "websocket");
		c.setAttribute("ws-endpoint", "/v1/ws?via=chat");
		c.setAttribute("show-metrics", "");
		c.setAttribute("speak", "");
		c.setAttribute("image-origins", "https://images.example");
		if (document.querySelector("trickle-answer[worker=off]")) c.setAttribute("worker", "off");
		document.body.append(c);
		await c.send("hello");
		const a = c.querySelector("trickle-answer");
		const metrics = a.querySelector('[data-trickle="metrics"]');
		return {
			status: a.status,
			metricsShown: !metrics.hidden && metrics.children.length > 0,
			speech: a.metrics?.speech ?? "",
			imageOrigins: a.getAttribute("image-origins"),
		};
	})()`)
	require.Equal(t, "complete", got["status"])
	mu.Lock()
	queries := slices.Clone(wsQueries)
	mu.Unlock()
	require.Contains(t, queries, "via=chat", "the answer streamed over the chat's ws-endpoint")
	require.Equal(t, true, got["metricsShown"], "the chat's show-metrics shows the answer's metrics")
	require.NotEqual(t, "off", got["speech"], "the chat's speak reaches the answer (on, or unavailable without speechSynthesis)")
	require.Equal(t, "https://images.example", got["imageOrigins"])
}
