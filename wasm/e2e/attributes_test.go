//go:build !(js && wasm)

package e2e_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// An attribute whose value cannot work fails the call with a trickle-error
// that names the attribute and the value, and the element lives on.
func TestABadAttributeFailsTheCallNamingTheAttribute(t *testing.T) {
	ctx := tab(t)
	type failure struct {
		Status string `json:"status"`
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	}
	for _, tc := range []struct{ attr, value, says string }{
		{"dialect", "klingon", `the dialect attribute "klingon": unknown dialect (want auto or one of openai`},
		{"image-origins", "https://cdn.test cdn.test", `the image-origins attribute "cdn.test": not an origin`},
	} {
		got := browsertest.Eval[failure](t, ctx, `(async () => {
			const a = document.getElementById("a");
			a.setAttribute(`+browsertest.JSString(tc.attr)+`, `+browsertest.JSString(tc.value)+`);
			window.__events = [];
			const status = await a.ask("hello");
			a.removeAttribute(`+browsertest.JSString(tc.attr)+`);
			const e = window.__events.find((e) => e.type === "trickle-error");
			return { status, reason: e ? e.detail.reason : "", detail: e ? e.detail.detail : "" };
		})()`)
		require.Equal(t, "failed", got.Status, tc.attr)
		require.Equal(t, "call", got.Reason, tc.attr)
		require.Contains(t, got.Detail, tc.says, tc.attr)
	}
	r := ask(t, ctx, map[string]string{"endpoint": "/v1/chat/completions?answer=short"}, "still alive")
	require.Equal(t, "complete", r.Status)
}
