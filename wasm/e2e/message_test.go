//go:build !(js && wasm)

package e2e_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// An answer's message, stored as JSON and set on another element, shows
// the same answer at once: the same HTML, text, tools and status, no
// stream, no event, nothing said; and a stopped answer comes back flagged
// and with its notice.
func TestAStoredMessageShowsTheSameAnswerAgain(t *testing.T) {
	ctx := tab(t)
	for _, answer := range []string{"tool-call", "short"} {
		t.Run(answer, func(t *testing.T) {
			r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=" + answer + "&gap_ms=0.5"}, withWeather("hello"))
			require.Equal(t, "complete", r.Status)
			stored := browsertest.Eval[string](t, ctx, `JSON.stringify(document.getElementById("a").message)`)

			got := browsertest.Eval[map[string]any](t, ctx, `(async () => {
				const b = document.createElement("trickle-answer");
				document.body.append(b);
				const heard = [];
				for (const n of ["trickle-start", "trickle-end", "trickle-tool-call", "trickle-error"]) b.addEventListener(n, () => heard.push(n));
				b.message = JSON.parse(`+browsertest.JSString(stored)+`);
				const part = (p) => b.querySelector('[data-trickle="' + p + '"]');
				const t0 = performance.now();
				while (b.status !== "complete" && performance.now() - t0 < 10000) await new Promise((r) => setTimeout(r, 20));
				const html = (() => { const c = part("content").cloneNode(true);
					for (const x of c.querySelectorAll('[data-trickle="code-toolbar"], [data-trickle="table-toolbar"]')) x.remove();
					for (const g of c.querySelectorAll('[data-trickle="settled"]')) g.replaceWith(...g.childNodes);
					return c.innerHTML; })();
				const out = { status: b.status, text: b.text, html, tools: part("tools").innerHTML, streamId: b.streamId,
					message: JSON.stringify(b.message), heard, said: part("announcer").textContent + part("sr-status").textContent };
				b.remove();
				return out;
			})()`)
			require.Equal(t, "complete", got["status"])
			require.Equal(t, r.Text, got["text"])
			require.Equal(t, r.HTML, got["html"], "the same HTML as when it streamed")
			require.Equal(t, r.Tools, got["tools"])
			require.Empty(t, got["streamId"], "no stream")
			require.Empty(t, got["heard"], "no event")
			require.Empty(t, got["said"], "nothing said")
			require.JSONEq(t, stored, got["message"].(string), "the message round-trips")
		})
	}

	t.Run("a stopped answer", func(t *testing.T) {
		got := browsertest.Eval[map[string]any](t, ctx, `(async () => {
			const b = document.createElement("trickle-answer");
			document.body.append(b);
			b.message = { role: "assistant", content: "It was going to", status: "stopped" };
			const t0 = performance.now();
			while (b.status !== "stopped" && performance.now() - t0 < 10000) await new Promise((r) => setTimeout(r, 20));
			const out = { status: b.status, notice: b.querySelector('[data-trickle="notice-text"]').textContent, incomplete: b.message.incomplete };
			b.remove();
			return out;
		})()`)
		require.Equal(t, map[string]any{"status": "stopped", "notice": "Stopped.", "incomplete": true}, got)
	})

	t.Run("not a message", func(t *testing.T) {
		msg := browsertest.Eval[string](t, ctx, `(() => { try { document.getElementById("a").message = { role: "assistant" }; return ""; } catch (e) { return e.message; } })()`)
		require.Contains(t, msg, `"content" string`)
	})
}
