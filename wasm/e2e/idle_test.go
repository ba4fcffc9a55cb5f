//go:build !(js && wasm)

package e2e_test

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/sse"
	"github.com/trickle-dev/trickle/wasm/element"
)

// silentLeft counts the /custom/silent requests whose client left.
var silentLeft atomic.Int64

// customSilent sends the start of an answer, then nothing, holding the
// connection open: a backend that died behind a proxy that keeps the
// client's side open.
func customSilent(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, piece := range []string{"Half ", "an ", "answer"} {
		delta, _ := json.Marshal(map[string]string{"delta": piece})
		w.Write(sse.AppendMessage(nil, sse.Message{Data: string(delta)}))
	}
	w.(http.Flusher).Flush()
	select {
	case <-r.Context().Done():
		silentLeft.Add(1)
	case <-time.After(time.Minute):
	}
}

// An answer whose backend goes silent ends after the element's
// idle-timeout: incomplete, its text kept, the reason shown and heard,
// ask() settled, and the connection closed.
func TestAnAnswerWhoseBackendGoesSilentEndsAfterTheIdleTimeout(t *testing.T) {
	ctx := tab(t)
	left := silentLeft.Load()
	r := ask(t, ctx, map[string]string{"endpoint": "/custom/silent", "idle-timeout": "0.5"}, "hello")
	require.Equal(t, "incomplete", r.Status)
	require.Equal(t, "Half an answer", r.Text, "the text is kept")
	require.Equal(t, element.English.Reasons[element.ReasonIdle], r.Notice)
	require.True(t, r.NoticeShown)
	require.Equal(t, "Answer incomplete. "+r.Notice, r.StatusText, "the listener hears why")
	require.Eventually(t, func() bool { return silentLeft.Load() > left }, 10*time.Second, 10*time.Millisecond, "the connection is closed")
}
