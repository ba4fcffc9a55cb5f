//go:build !(js && wasm)

package engines_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
)

// firefoxPrefs keep a fresh profile quiet: no first-run pages, no update or
// telemetry traffic (the machine may have no network at all). The remote
// agent adds its own recommended automation prefs on top.
const firefoxPrefs = `user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.aboutwelcome.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.disabledForTesting", true);
user_pref("app.normandy.enabled", false);
user_pref("messaging-system.rsexperimentloader.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
`

func firefoxMissing() error {
	_, err := lookPath("firefox-esr", "firefox")
	return err
}

// startFirefox starts headless Firefox with a fresh profile and its
// WebDriver BiDi server on a port of its choosing, and opens a BiDi session
// on it.
func startFirefox(t *testing.T, ctx context.Context) driver {
	t.Helper()
	exe, err := lookPath("firefox-esr", "firefox")
	require.NoError(t, err)
	profile := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(profile, "user.js"), []byte(firefoxPrefs), 0o644))
	// Firefox prints where BiDi listens once it is ready.
	listening := make(chan string, 1)
	p := start(t, func(line string) {
		if _, url, ok := strings.Cut(line, "WebDriver BiDi listening on "); ok {
			select {
			case listening <- strings.TrimSpace(url):
			default:
			}
		}
	}, exe, []string{"--headless", "--no-remote", "--profile", profile, "--remote-debugging-port=0", "about:blank"},
		[]string{"MOZ_CRASHREPORTER_DISABLE=1", "HOME=" + profile})
	var url string
	select {
	case url = <-listening:
	case <-p.done:
		t.Fatalf("%s exited before listening:\n%s", exe, p.output())
	case <-ctx.Done():
		t.Fatalf("%s did not start its BiDi server in time:\n%s", exe, p.output())
	}
	conn, _, err := websocket.Dial(ctx, url+"/session", nil)
	require.NoError(t, err, "connecting to Firefox's BiDi server at %s", url)
	conn.SetReadLimit(64 << 20)
	b := &bidi{conn: conn, replies: map[int]chan bidiReply{}}
	go b.read()
	t.Cleanup(func() {
		// Ask Firefox to close; the process group is stopped after anyway.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = b.call(cctx, "browser.close", map[string]any{})
		conn.Close(websocket.StatusNormalClosure, "")
	})
	_, err = b.call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}})
	require.NoError(t, err, "starting a BiDi session")
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	raw, err := b.call(ctx, "browsingContext.getTree", map[string]any{})
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &tree))
	require.NotEmpty(t, tree.Contexts, "Firefox has no tab")
	b.context = tree.Contexts[0].Context
	return b
}

// bidi is a WebDriver BiDi client: commands with ids, replies matched by
// id; events (none are subscribed to) are ignored.
type bidi struct {
	conn    *websocket.Conn
	context string // the browsing context (tab) the driver uses
	mu      sync.Mutex
	next    int
	replies map[int]chan bidiReply
	err     error // why reading stopped
}

type bidiReply struct {
	ID      int             `json:"id"`
	Type    string          `json:"type"` // "success", "error" or "event"
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

func (b *bidi) read() {
	for {
		_, msg, err := b.conn.Read(context.Background())
		if err != nil {
			b.mu.Lock()
			b.err = err
			for id, ch := range b.replies {
				close(ch)
				delete(b.replies, id)
			}
			b.mu.Unlock()
			return
		}
		var r bidiReply
		if json.Unmarshal(msg, &r) != nil || r.Type == "event" {
			continue
		}
		b.mu.Lock()
		ch := b.replies[r.ID]
		delete(b.replies, r.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// call sends one command and waits for its reply.
func (b *bidi) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return nil, fmt.Errorf("BiDi connection closed: %w", b.err)
	}
	b.next++
	id := b.next
	ch := make(chan bidiReply, 1)
	b.replies[id] = ch
	b.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := b.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: BiDi connection closed", method)
		}
		if r.Type == "error" {
			return nil, fmt.Errorf("%s: %s: %s", method, r.Error, r.Message)
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (b *bidi) navigate(ctx context.Context, url string) error {
	_, err := b.call(ctx, "browsingContext.navigate", map[string]any{"context": b.context, "url": url, "wait": "complete"})
	return err
}

func (b *bidi) eval(ctx context.Context, expr string) (string, error) {
	raw, err := b.call(ctx, "script.evaluate", map[string]any{
		"expression": expr, "target": map[string]any{"context": b.context}, "awaitPromise": true,
	})
	if err != nil {
		return "", err
	}
	var r struct {
		Type   string `json:"type"` // "success" or "exception"
		Result struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	if r.Type == "exception" {
		return "", fmt.Errorf("%s threw: %s", expr, r.ExceptionDetails.Text)
	}
	s, ok := r.Result.Value.(string)
	if !ok {
		return "", fmt.Errorf("%s is a %s, not a string", expr, r.Result.Type)
	}
	return s, nil
}
