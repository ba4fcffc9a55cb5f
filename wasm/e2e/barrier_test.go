//go:build !(js && wasm)

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trickle-dev/trickle/internal/testkit/browsertest"
)

// requestRecorder records the URL of every request a tab sends, in the
// order the browser sends them.
type requestRecorder struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	urls   []string
	want   string        // the barrier's URL
	found  chan struct{} // closed when want is sent
}

// recordRequests starts recording the tab's requests; before ends it.
func recordRequests(t *testing.T, ctx context.Context) *requestRecorder {
	t.Helper()
	sub, cancel := context.WithCancel(ctx)
	r := &requestRecorder{cancel: cancel, done: make(chan struct{}), found: make(chan struct{})}
	reqs := chromedp.Events(sub, network.RequestWillBeSent)
	go func() {
		defer close(r.done)
		for ev, err := range reqs {
			if err != nil {
				return
			}
			r.mu.Lock()
			r.urls = append(r.urls, ev.Request.URL)
			if r.want != "" && ev.Request.URL == r.want {
				close(r.found)
				r.want = ""
			}
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

var barriers atomic.Int64

// before returns every request the tab sent before a barrier: an image the
// page creates now, on the page's own origin (origin), whose request is
// sent after that of any image the page created earlier. So a test proves
// that nothing was requested by waiting for the barrier's request, not by
// sleeping. Recording ends.
func (r *requestRecorder) before(t *testing.T, ctx context.Context, origin string) []string {
	t.Helper()
	barrier := fmt.Sprintf("%s/barrier.png?n=%d", origin, barriers.Add(1))
	r.mu.Lock()
	r.want = barrier
	r.mu.Unlock()
	require.True(t, browsertest.Eval[bool](t, ctx, `(() => { new Image().src = `+browsertest.JSString(barrier)+`; return true; })()`))
	select {
	case <-r.found:
	case <-time.After(10 * time.Second):
		r.mu.Lock()
		defer r.mu.Unlock()
		t.Fatalf("the barrier image %s was never requested (requests: %s)", barrier, strings.Join(r.urls, ", "))
	}
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, got := range r.urls {
		if got == barrier {
			return r.urls[:i]
		}
	}
	return r.urls
}

// applied returns once the page has applied every frame Go sent before
// now: a round trip through Go (stats) comes back after them, and the
// animation frame after it applies them.
func applied(t *testing.T, ctx context.Context) {
	t.Helper()
	require.True(t, browsertest.Eval[bool](t, ctx, `(async () => {
		const { stats } = await import("/trickle/trickle.js");
		await stats();
		await new Promise((done) => requestAnimationFrame(() => done()));
		return true;
	})()`))
}
