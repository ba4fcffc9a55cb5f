//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// A selection made while the answer streams — in a settled block, in the
// growing paragraph of the live tail, or from one into the other — selects
// the same text 2 s later, after the paragraph it ends in has settled, and
// after the end (browsertest.SelectionScript; wasm/engines runs the same
// in Firefox).
func TestASelectionSurvivesTheStreamWhereverItIsMade(t *testing.T) {
	for _, where := range browsertest.SelectionCases {
		t.Run(where, func(t *testing.T) {
			ctx := tab(t)
			browsertest.Eval[bool](t, ctx, browsertest.SelectionScript+`; true`)
			raw := browsertest.Eval[string](t, ctx, `trickleSelection(document.getElementById("a"), `+browsertest.JSString(where)+`, `+browsertest.JSString(browsertest.SelectionEndpoint)+`)`)
			var r browsertest.SelectionResult
			require.NoError(t, json.Unmarshal([]byte(raw), &r))
			require.NoError(t, r.Err())
		})
	}
}

// Copying a selection of the growing paragraph while the answer streams
// puts exactly the selected text on the clipboard, after frames that
// settled the paragraph.
func TestCopyingASelectionWhileTheAnswerStreamsCopiesIt(t *testing.T) {
	ctx := tab(t)
	// Reading the clipboard back needs the permission a reader's click
	// would give.
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: server(t)})
		require.NoError(t, err, name)
	}
	start(t, ctx, map[string]string{"endpoint": browsertest.SelectionEndpoint}, 1500)
	want := browsertest.Eval[string](t, ctx, `(async () => {
		const a = document.getElementById("a");
		const tail = () => a.querySelector('[data-trickle="tail"]');
		const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
		const prose = (p) => p?.tagName === "P" && p.firstChild?.nodeType === 3 && p.firstChild.data.length >= 24 && !p.firstChild.data.startsWith("|"); // not a table's header row yet
		while (!prose(tail()?.lastElementChild)) await sleep(5);
		const text = tail().lastElementChild.firstChild;
		document.getSelection().setBaseAndExtent(text, 2, text, 22);
		const want = document.getSelection().toString();
		while (tail()?.contains(text)) await sleep(20);
		await sleep(300);
		return want;
	})()`)
	// The reader's Ctrl+C: a key press, as copying by hand is.
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		_, err := chromedp.Call(ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Modifiers: 2, Key: "c", Code: "KeyC", WindowsVirtualKeyCode: 67, Commands: []string{"copy"}})
		require.NoError(t, err)
	}
	got := browsertest.Eval[[]string](t, ctx, `(async () => [await navigator.clipboard.readText(), document.getElementById("a").status])()`)
	copied, status := got[0], got[1]
	require.Len(t, want, 20)
	require.Equal(t, want, copied, "the clipboard holds the selected text")
	require.Equal(t, "streaming", status, "copied while the answer streamed")
	require.Equal(t, "complete", browsertest.Eval[string](t, ctx, `window.__p`))
}
